package dialect

import (
	"errors"
	"fmt"

	"github.com/switchyard/switchyard/api"
)

// Errors that the core raises and the dialects' shapes read, and one a
// dialect raises for the core to answer.
var (
	// ErrNoRoute is a path that no listener serves (404).
	ErrNoRoute = errors.New("frontend: no such route")
	// ErrMethod is a method the route does not take (405).
	ErrMethod = errors.New("frontend: method not allowed")
	// ErrBadGateway is a model's answer that its dialect cannot turn into
	// an answer of its API (502). A dialect joins it to its own error,
	// whose text stays the message.
	ErrBadGateway = errors.New("frontend: bad gateway")
)

// Problem is the body of switchyard's error answers, and what the core
// makes of any error: the status, the name of the error's type, and the
// message for the client.
type Problem struct {
	Code    int    `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// The names of the error types that more than one status shares.
const (
	TypeBadRequest  = "BadRequestException"
	TypeNotFound    = "ResourceNotFoundException"
	TypeUnavailable = "ServiceUnavailableException"
	TypeInternal    = "InternalServerException"
	TypeNoMemory    = "InsufficientMemoryException"
	TypeTooLarge    = "PayloadTooLargeException"
)

// StatusType names the error type of a status that no sentinel error
// decided: a worker's own error code, or the throttle code.
func StatusType(code int) string {
	switch code {
	case 400:
		return TypeBadRequest
	case 404:
		return TypeNotFound
	case 413:
		return TypeTooLarge
	case 424:
		return "PredictionException"
	case 429:
		return "TooManyRequestsException"
	case 503:
		return TypeUnavailable
	case 507:
		return TypeNoMemory
	}
	if code < 500 {
		return TypeBadRequest
	}
	return TypeInternal
}

// Error is an error with a message meant for the client; it matches its
// sentinel (api.ErrBadRequest, say), which gives its status, with
// errors.Is.
type Error struct {
	Sentinel error
	Msg      string
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Sentinel }

// BadRequest returns a 400 error whose message is exactly msg.
func BadRequest(msg string) error { return &Error{Sentinel: api.ErrBadRequest, Msg: msg} }

// BadRequestf is BadRequest with formatting.
func BadRequestf(format string, args ...any) error {
	return BadRequest(fmt.Sprintf(format, args...))
}

// WorkerError is a worker's answer with a status of 400 or more.
type WorkerError struct {
	Code int    // the worker's status
	Msg  string // the message for the client
	// Raw, when set, is a body already in switchyard's error shape, which
	// goes out as it is where that shape is answered.
	Raw []byte
	// Body is the worker's body.
	Body []byte
	// Param and Reason are the field and the reason word the worker named,
	// if any.
	Param, Reason string
	// Model is the model that answered.
	Model string
}

func (e *WorkerError) Error() string { return e.Msg }

// Original is the worker's own answer as text: its body, else the message.
func (e *WorkerError) Original() string {
	if len(e.Body) > 0 {
		return string(e.Body)
	}
	return e.Msg
}
