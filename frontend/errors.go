package frontend

import (
	"errors"
	"fmt"
	"net"
	"strings"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
)

// Errors the front-end raises itself, before any model is involved.
var (
	errNoRoute        = errors.New("frontend: no such route")
	errMethod         = errors.New("frontend: method not allowed")
	errHeaderTooLarge = errors.New("frontend: request header too large")
	errReadTimeout    = errors.New("frontend: request read timeout")
	errMalformed      = errors.New("frontend: malformed request")
	errFraming        = errors.New("frontend: conflicting message framing")
	errUnauthorized   = errors.New("frontend: unauthorized")
	errPanic          = errors.New("frontend: internal error")
)

// statusClientClosed is the status recorded (never seen by anyone) when the
// client hung up before its answer was ready; nginx uses the same number.
const statusClientClosed = 499

// problem is the JSON body of every error answer.
type problem struct {
	Code    int    `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// httpError is an error the front-end raises with a message meant for the
// client; it matches its sentinel with errors.Is.
type httpError struct {
	sentinel     error
	msg          string
	allow        string // Allow header of a 405
	invalidToken bool   // a 401 for a token that was sent but is wrong
}

func (e *httpError) Error() string { return e.msg }
func (e *httpError) Unwrap() error { return e.sentinel }

// badRequest returns a 400 error whose message is exactly msg.
func badRequest(msg string) error { return &httpError{sentinel: api.ErrBadRequest, msg: msg} }

// badRequestf is badRequest with formatting.
func badRequestf(format string, args ...any) error { return badRequest(fmt.Sprintf(format, args...)) }

// workerError is a worker's answer with a status of 400 or more. raw, when
// set, is a body already in the error shape that goes out as it is; body is
// the worker's body, param and reason the field and reason word it named,
// if any, and model the model that answered.
type workerError struct {
	code          int
	msg           string
	raw           []byte
	body          []byte
	param, reason string
	model         string
}

func (e *workerError) Error() string { return e.msg }

// original is the worker's own answer as text: its body, else the message.
func (e *workerError) original() string {
	if len(e.body) > 0 {
		return string(e.body)
	}
	return e.msg
}

// errorClass maps one sentinel to a status code and an error type name.
type errorClass struct {
	target error
	code   int
	kind   string
}

// errorClasses is searched in order; the first sentinel err matches wins.
// batching.ErrQueueFull is handled before it, with the throttle code. Lack
// of memory comes before a closed queue: a load on demand that finds no
// room answers what waits in its queue with its 507.
var errorClasses = [...]errorClass{
	{batching.ErrClientGone, statusClientClosed, "ClientClosedRequestException"},
	{api.ErrInsufficientMemory, 507, kindNoMemory},
	{batching.ErrClosed, 503, kindUnavailable},
	{batching.ErrExpired, 503, kindUnavailable},
	{api.ErrModelNotFound, 404, "ModelNotFoundException"},
	{api.ErrModelURL, 404, "ModelNotFoundException"},
	{api.ErrModelExists, 409, "ConflictStatusException"},
	{api.ErrBadRequest, 400, kindBadRequest},
	{api.ErrNotReady, 503, kindUnavailable},
	{api.ErrModelFailed, 503, kindUnavailable},
	{api.ErrWorkerDied, 503, kindUnavailable},
	{api.ErrPredictTimeout, 500, kindInternal},
	{errNoRoute, 404, "ResourceNotFoundException"},
	{errMethod, 405, "MethodNotAllowedException"},
	{fasthttp.ErrBodyTooLarge, 413, kindTooLarge},
	{errHeaderTooLarge, 431, "RequestHeaderFieldsTooLargeException"},
	{errReadTimeout, 408, "RequestTimeoutException"},
	{errMalformed, 400, kindBadRequest},
	{errFraming, 400, kindBadRequest},
	{errUnauthorized, 401, "UnauthorizedException"},
	{errNotChat, 502, "BadGatewayException"},
}

const (
	kindBadRequest  = "BadRequestException"
	kindUnavailable = "ServiceUnavailableException"
	kindInternal    = "InternalServerException"
	kindNoMemory    = "InsufficientMemoryException"
	kindTooLarge    = "PayloadTooLargeException"
)

// kindForStatus names the error type of a status that no sentinel decided:
// a worker's own error code or the throttle code.
func kindForStatus(code int) string {
	switch code {
	case 400:
		return kindBadRequest
	case 404:
		return "ResourceNotFoundException"
	case 413:
		return kindTooLarge
	case 424:
		return "PredictionException"
	case 429:
		return "TooManyRequestsException"
	case 503:
		return kindUnavailable
	case 507:
		return kindNoMemory
	}
	if code < 500 {
		return kindBadRequest
	}
	return kindInternal
}

// classify turns any error into the status code and body of its answer.
func (s *Server) classify(err error) problem {
	if w, ok := errors.AsType[*workerError](err); ok {
		return problem{Code: w.code, Type: kindForStatus(w.code), Message: w.msg}
	}
	msg := publicMessage(err)
	if errors.Is(err, batching.ErrQueueFull) {
		return problem{Code: s.cfg.ThrottleCode, Type: kindForStatus(s.cfg.ThrottleCode), Message: msg}
	}
	for _, c := range errorClasses {
		if errors.Is(err, c.target) {
			return problem{Code: c.code, Type: c.kind, Message: msg}
		}
	}
	return problem{Code: 500, Type: kindInternal, Message: msg}
}

// packagePrefixes are the prefixes of the sentinel errors of switchyard's
// packages and fasthttp.
var packagePrefixes = strings.NewReplacer(
	": api: ", ": ", ": batching: ", ": ", ": frontend: ", ": ", ": fasthttp: ", ": ",
	": properties: ", ": ", ": worker: ", ": ", ": gpu: ", ": ")

// publicMessage is err's text without the Go package prefixes that sentinel
// errors carry, at its start and after each ": " ("api: bad request:
// properties: x" reads "bad request: x").
func publicMessage(err error) string {
	msg := ": " + err.Error()
	for {
		next := packagePrefixes.Replace(msg) // one pass misses "x: api: batching: "
		if next == msg {
			return strings.TrimPrefix(msg, ": ")
		}
		msg = next
	}
}

// writeError is the one place where an error becomes an HTTP answer: it
// picks the status and type, adds Retry-After or Allow where they belong,
// writes the JSON body (in the shape of the request's API: switchyard's,
// OpenAI's on /v1/..., SageMaker's or Bedrock's on their routes) and logs
// server-side failures with the request id.
func (s *Server) writeError(ctx *fasthttp.RequestCtx, err error) {
	p := s.classify(err)
	if errors.Is(err, batching.ErrQueueFull) {
		ctx.Response.Header.Set("Retry-After", "1")
	}
	if h, ok := errors.AsType[*httpError](err); ok && h.allow != "" {
		ctx.Response.Header.Set("Allow", h.allow)
	}
	if h, ok := errors.AsType[*httpError](err); ok && errors.Is(err, errUnauthorized) {
		ctx.Response.Header.Set(fasthttp.HeaderWWWAuthenticate, authenticate(h))
	}
	if errors.Is(err, errFraming) {
		ctx.SetConnectionClose()
	}
	w, raw := errors.AsType[*workerError](err)
	switch {
	case s.writeShaped(ctx, p, err): // the OpenAI and AWS routes' own shapes
	case raw && w.raw != nil:
		writeRawJSON(ctx, w.code, w.raw)
	default:
		writeJSON(ctx, p.Code, p)
	}
	s.logFailure(ctx, p, err)
}

// logFailure logs 5xx answers at warn and the rest at debug.
func (s *Server) logFailure(ctx *fasthttp.RequestCtx, p problem, err error) {
	level := zap.DebugLevel
	if p.Code >= 500 {
		level = zap.WarnLevel
	}
	if ce := s.log.Check(level, "request failed"); ce != nil {
		ce.Write(
			zap.String("request_id", string(ctx.Response.Header.Peek(headerRequestID))),
			zap.Int("code", p.Code),
			zap.ByteString("method", ctx.Method()),
			zap.ByteString("path", ctx.Path()),
			zap.Error(err))
	}
}

// handleParseError is fasthttp's ErrorHandler: requests that fail before any
// handler runs (too large, malformed, too slow) still get the JSON shape.
func (s *Server) handleParseError(ctx *fasthttp.RequestCtx, err error) {
	s.requestID(ctx)
	s.writeError(ctx, parseFailure(err, s.cfg.MaxRequestSize))
}

// parseFailure wraps a fasthttp read error in the sentinel that gives its
// status code, with a message for the client.
func parseFailure(err error, limit int) error {
	if errors.Is(err, fasthttp.ErrBodyTooLarge) {
		return &httpError{sentinel: err, msg: fmt.Sprintf("Request body exceeds the limit of %d bytes.", limit)}
	}
	if _, ok := errors.AsType[*fasthttp.ErrSmallBuffer](err); ok {
		return &httpError{sentinel: errHeaderTooLarge, msg: "Request header is too large."}
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return &httpError{sentinel: errReadTimeout, msg: "Timed out reading the request."}
	}
	return &httpError{sentinel: errMalformed, msg: fmt.Sprintf("Malformed HTTP request: %.200s", err.Error())}
}
