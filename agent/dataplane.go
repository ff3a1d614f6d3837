package agent

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"
)

// The hosted runtime's data-plane route: what the AWS SDKs' InvokeAgentRuntime
// calls (boto3.client("bedrock-agentcore").invoke_agent_runtime), served by the
// runtime itself so that a client pointed at it with an endpoint override
// (AWS_ENDPOINT_URL_BEDROCK_AGENTCORE) reaches it with no cloud in between:
//
//	POST /runtimes/{agentRuntimeArn}/invocations?qualifier=DEFAULT
//	X-Amzn-Bedrock-AgentCore-Runtime-Session-Id: <33 to 256 characters>
//
// The body is the payload and is answered as POST /invocations answers it;
// the session id comes back in the same header. The ARN and the qualifier
// name the one runtime this process is, so they are not checked.

// SessionHeader carries the runtime session's id, in the request and, on the
// data-plane route, in the answer.
const SessionHeader = "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id"

// Session ids' lengths, as the service's API model bounds runtimeSessionId.
const (
	MinSessionID = 33
	MaxSessionID = 256
)

// dataPlane reports whether path is the data-plane route's.
func dataPlane(path string) bool {
	rest, ok := strings.CutPrefix(path, "/runtimes/")
	return ok && strings.HasSuffix(rest, "/invocations") && len(rest) > len("/invocations")
}

// awsErrorsKey marks a request whose errors are answered in the AWS shape.
type awsErrorsKey struct{}

// awsErrors reports whether r came through the data-plane route.
func awsErrors(r *http.Request) bool {
	on, _ := r.Context().Value(awsErrorsKey{}).(bool)
	return on
}

// invokeRuntime serves the data-plane route: the session id is checked as the
// service checks it (a shorter or longer one is a ValidationException), one is
// made when none came, and it is echoed; the rest is POST /invocations.
func (s *Server) invokeRuntime(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeAWSError(w, http.StatusMethodNotAllowed, "UnknownOperationException",
			fmt.Sprintf("%s %s: InvokeAgentRuntime is POST", r.Method, r.URL.Path))
		return
	}
	id := r.Header.Get(SessionHeader)
	switch {
	case id == "":
		id = newSessionID()
	case len(id) < MinSessionID || len(id) > MaxSessionID:
		limit := fmt.Sprintf("greater than or equal to %d", MinSessionID)
		if len(id) > MaxSessionID {
			limit = fmt.Sprintf("less than or equal to %d", MaxSessionID)
		}
		writeAWSError(w, http.StatusBadRequest, "ValidationException", fmt.Sprintf(
			"1 validation error detected: Value at 'runtimeSessionId' failed to satisfy constraint: Member must have length %s", limit))
		return
	}
	w.Header().Set(SessionHeader, id)
	s.invoke(w, r.WithContext(context.WithValue(r.Context(), awsErrorsKey{}, true)))
}

// newSessionID returns a random session id of 36 characters (a UUID's form),
// which the service makes when a caller sends none.
func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// awsErrorBody is an error of the data-plane route in the AWS SDKs' rest-json
// shape: the code in X-Amzn-ErrorType, the message in the body.
type awsErrorBody struct {
	Message string `json:"message"`
	Reason  string `json:"reason,omitempty"`
}

func writeAWSError(w http.ResponseWriter, code int, errorType, msg string) {
	w.Header().Set("X-Amzn-ErrorType", errorType)
	body := awsErrorBody{Message: msg}
	if errorType == "ValidationException" {
		body.Reason = "FieldValidationFailed"
	}
	writeJSON(w, code, body)
}

// writeRuntimeError answers err on the data-plane route: what the runtime
// itself answered with an error status reaches the caller as the service
// reports a runtime's failure, RuntimeClientError (424), with the runtime's
// status, type and message in its message.
func writeRuntimeError(w http.ResponseWriter, err error) {
	code, kind := failure(err)
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", "1")
	}
	writeAWSError(w, http.StatusFailedDependency, "RuntimeClientError",
		fmt.Sprintf("the agent runtime answered %d %s: %s", code, kind, message(err)))
}
