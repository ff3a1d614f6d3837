package awsapi

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Kind says what went wrong in the terms the AWS error codes distinguish.
type Kind uint8

const (
	// KindInternal is any other server-side failure.
	KindInternal Kind = iota
	// KindInvalid is a request that is malformed or that the model refused
	// as asked (a bad parameter, a prompt that does not fit).
	KindInvalid
	// KindNotFound is a request for a model that is not registered.
	KindNotFound
	// KindAdapterNotFound is a request naming a LoRA adapter that is not
	// registered.
	KindAdapterNotFound
	// KindModel is an error answer of the model's handler.
	KindModel
	// KindThrottled is a full queue.
	KindThrottled
	// KindUnavailable is a model not ready or failed, a worker that died, a
	// request that expired in its queue, or a server that is stopping.
	KindUnavailable
	// KindTimeout is a handler that did not answer within its deadline.
	KindTimeout
	// KindNoRoute is a path or method that is no operation of the API.
	KindNoRoute
)

// Failure is an error answer before it takes one API's shape.
type Failure struct {
	Kind    Kind
	Status  int    // the status switchyard would answer with
	Message string // the reason in words
	// OriginalStatus and OriginalMessage are the handler's own status and
	// body when Kind is KindModel.
	OriginalStatus  int
	OriginalMessage string
	// Resource names the model, when one was reached.
	Resource string
}

// ErrorAnswer is an error in one API's shape: the HTTP status, the code the
// SDKs read from the x-amzn-ErrorType header, and the JSON body.
type ErrorAnswer struct {
	Status int
	Code   string
	Body   []byte
}

// HeaderErrorType is the response header that names an AWS error's code.
const HeaderErrorType = "X-Amzn-ErrorType"

// unknownOperation is AWS's code for a request that names no operation;
// its status (404 or 405) is the Failure's.
const unknownOperation = "UnknownOperationException"

// SageMakerError returns f as SageMaker Runtime answers it. A handler's
// error, whatever its status, is ModelError (424) with OriginalStatusCode
// and OriginalMessage, as SageMaker reports a container's error answer; a
// bad request or an unknown model is ValidationError (400), and so is an
// unknown adapter but with 404, which the SDKs raise as the same
// ValidationError and a client can tell by its status; a full queue is
// ThrottlingException and a model that cannot take requests now is
// ServiceUnavailable (503), both of which the SDKs retry.
func SageMakerError(f Failure) ErrorAnswer {
	type message struct {
		Message string `json:"Message"`
	}
	switch f.Kind {
	case KindModel:
		return answer(424, "ModelError", struct {
			Message            string `json:"Message"`
			OriginalStatusCode int    `json:"OriginalStatusCode"`
			OriginalMessage    string `json:"OriginalMessage"`
		}{modelErrorMessage(f), f.OriginalStatus, f.OriginalMessage})
	case KindInvalid, KindNotFound:
		return answer(400, "ValidationError", message{f.Message})
	case KindAdapterNotFound:
		return answer(404, "ValidationError", message{f.Message})
	case KindNoRoute:
		return answer(f.Status, unknownOperation, message{f.Message})
	case KindThrottled:
		return answer(f.Status, "ThrottlingException", message{f.Message})
	case KindUnavailable:
		return answer(503, "ServiceUnavailable", message{f.Message})
	}
	return answer(500, "InternalFailure", message{f.Message})
}

// modelErrorMessage is ModelError's Message, worded as SageMaker words it.
func modelErrorMessage(f Failure) string {
	side := "server"
	if f.OriginalStatus < 500 {
		side = "client"
	}
	return fmt.Sprintf("Received %s error (%d) from model %q with message %q.", side, f.OriginalStatus, f.Resource, f.Message)
}

// BedrockError returns f as Bedrock Runtime answers it. A handler that
// refused the request (a 400: a field it cannot honour) is
// ValidationException, as Bedrock's own checks are; any other handler error
// is ModelErrorException (424) with originalStatusCode and resourceName.
func BedrockError(f Failure) ErrorAnswer {
	type message struct {
		Message string `json:"message"`
	}
	switch f.Kind {
	case KindModel:
		if f.OriginalStatus == 400 {
			return answer(400, "ValidationException", message{f.Message})
		}
		return answer(424, "ModelErrorException", struct {
			Message            string `json:"message"`
			OriginalStatusCode int    `json:"originalStatusCode"`
			ResourceName       string `json:"resourceName,omitempty"`
		}{f.Message, f.OriginalStatus, f.Resource})
	case KindInvalid:
		return answer(400, "ValidationException", message{f.Message})
	case KindNotFound, KindAdapterNotFound:
		return answer(404, "ResourceNotFoundException", message{f.Message})
	case KindNoRoute:
		return answer(f.Status, unknownOperation, message{f.Message})
	case KindThrottled:
		return answer(429, "ThrottlingException", message{f.Message})
	case KindUnavailable:
		return answer(503, "ServiceUnavailableException", message{f.Message})
	case KindTimeout:
		return answer(408, "ModelTimeoutException", message{f.Message})
	}
	return answer(500, "InternalServerException", message{f.Message})
}

func answer(status int, code string, body any) ErrorAnswer {
	b, err := json.Marshal(body)
	if err != nil { // the bodies are this package's own structs
		b = []byte(`{}`)
	}
	return ErrorAnswer{Status: status, Code: code, Body: b}
}

// ValidationError is a Converse request that does not fit the API or asks
// for something switchyard does not emulate; its message names the field.
type ValidationError struct {
	Field string
	Msg   string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Msg }

func invalid(field, format string, args ...any) error {
	return &ValidationError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// path joins a field path: path("messages", 1, "content") is "messages[1].content".
func path(parts ...any) string {
	var b strings.Builder
	for _, p := range parts {
		switch v := p.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", v)
		case string:
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(v)
		}
	}
	return b.String()
}
