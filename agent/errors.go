package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/aws/smithy-go"
)

// Errors of the runtime contract, wrapped with detail.
var (
	// ErrBadRequest means the invocation's body cannot be read as one.
	ErrBadRequest = errors.New("agent: bad request")
	// ErrTooLarge means the invocation's body is larger than MaxBody.
	ErrTooLarge = errors.New("agent: request too large")
	// ErrNoRoute means no route has the request's path.
	ErrNoRoute = errors.New("agent: no such route")
	// ErrMethod means the route does not take the request's method.
	ErrMethod = errors.New("agent: method not allowed")
)

// errorBody is every error answer: the message in words, a type word, and
// the status. error and error_type are the keys the hosted runtime's own
// application object uses.
type errorBody struct {
	Error string `json:"error"`
	Type  string `json:"error_type"`
	Code  int    `json:"code"`
}

// failure returns the status and type word of err: 4xx for what the
// caller sent; for what a service behind the agent did, 503 when it is
// throttled or unavailable (worth a retry), 504 when it or the whole
// invocation ran out of time, else 502.
func failure(err error) (int, string) {
	switch {
	case errors.Is(err, ErrBadRequest):
		return http.StatusBadRequest, "BadRequest"
	case errors.Is(err, ErrTooLarge):
		return http.StatusRequestEntityTooLarge, "PayloadTooLarge"
	case errors.Is(err, ErrNoRoute):
		return http.StatusNotFound, "NotFound"
	case errors.Is(err, ErrMethod):
		return http.StatusMethodNotAllowed, "MethodNotAllowed"
	case errors.Is(err, ErrRounds):
		return http.StatusBadGateway, "RoundLimitExceeded"
	}
	who := "Internal"
	switch {
	case errors.Is(err, ErrPlanner):
		who = "ReasoningModel"
	case errors.Is(err, ErrTool):
		who = "Tool"
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded) || apiCode(err) == "ModelTimeoutException":
		return http.StatusGatewayTimeout, who + "Timeout"
	case retryable(apiCode(err)):
		return http.StatusServiceUnavailable, who + "Unavailable"
	case who == "Internal":
		return http.StatusInternalServerError, "InternalError"
	}
	return http.StatusBadGateway, who + "Error"
}

// apiCode returns the AWS error code in err, or "".
func apiCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// retryable reports whether an AWS error code says "later": throttling
// or a service (or model) that cannot take the call now.
func retryable(code string) bool {
	switch code {
	case "ThrottlingException", "ServiceUnavailableException", "ServiceUnavailable",
		"ModelNotReadyException", "TooManyRequestsException":
		return true
	}
	return false
}

// writeError answers err as JSON with its status; a retryable one says
// when to come back.
func writeError(w http.ResponseWriter, err error) {
	code, kind := failure(err)
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	writeJSON(w, code, errorBody{Error: message(err), Type: kind, Code: code})
}

// message returns err's text without the package's own prefix.
func message(err error) string {
	return strings.ReplaceAll(err.Error(), "agent: ", "")
}

// writeJSON writes v as the answer's JSON body with status code.
func writeJSON(w http.ResponseWriter, code int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}
