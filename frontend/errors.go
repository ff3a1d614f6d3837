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
	"github.com/switchyard/switchyard/frontend/dialect"
)

// Errors the front-end raises itself, before any model is involved; the
// dialects' shapes read two more, dialect.ErrNoRoute and dialect.ErrMethod.
var (
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

// httpError is an error the core raises with a message meant for the
// client; it matches its sentinel with errors.Is.
type httpError struct {
	sentinel     error
	msg          string
	allow        string // Allow header of a 405
	invalidToken bool   // a 401 for a token that was sent but is wrong
}

func (e *httpError) Error() string { return e.msg }
func (e *httpError) Unwrap() error { return e.sentinel }

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
	{api.ErrInsufficientMemory, 507, dialect.TypeNoMemory},
	{batching.ErrClosed, 503, dialect.TypeUnavailable},
	{batching.ErrExpired, 503, dialect.TypeUnavailable},
	{api.ErrModelNotFound, 404, "ModelNotFoundException"},
	{api.ErrModelURL, 404, "ModelNotFoundException"},
	{api.ErrModelExists, 409, "ConflictStatusException"},
	{api.ErrAdapterNotFound, 404, "AdapterNotFoundException"},
	{api.ErrAdapterExists, 409, "ConflictStatusException"},
	{api.ErrLoRADisabled, 400, dialect.TypeBadRequest},
	{api.ErrBadRequest, 400, dialect.TypeBadRequest},
	{api.ErrNotReady, 503, dialect.TypeUnavailable},
	{api.ErrModelFailed, 503, dialect.TypeUnavailable},
	{api.ErrWorkerDied, 503, dialect.TypeUnavailable},
	{api.ErrPredictTimeout, 500, dialect.TypeInternal},
	{dialect.ErrNoRoute, 404, dialect.TypeNotFound},
	{dialect.ErrMethod, 405, "MethodNotAllowedException"},
	{fasthttp.ErrBodyTooLarge, 413, dialect.TypeTooLarge},
	{errHeaderTooLarge, 431, "RequestHeaderFieldsTooLargeException"},
	{errReadTimeout, 408, "RequestTimeoutException"},
	{errMalformed, 400, dialect.TypeBadRequest},
	{errFraming, 400, dialect.TypeBadRequest},
	{errUnauthorized, 401, "UnauthorizedException"},
	{dialect.ErrBadGateway, 502, "BadGatewayException"},
}

// classify turns any error into the status code and body of its answer.
func (s *Server) classify(err error) dialect.Problem {
	if w, ok := errors.AsType[*dialect.WorkerError](err); ok {
		return dialect.Problem{Code: w.Code, Type: dialect.StatusType(w.Code), Message: w.Msg}
	}
	msg := publicMessage(err)
	if errors.Is(err, batching.ErrQueueFull) {
		return dialect.Problem{Code: s.cfg.ThrottleCode, Type: dialect.StatusType(s.cfg.ThrottleCode), Message: msg}
	}
	for _, c := range errorClasses {
		if errors.Is(err, c.target) {
			return dialect.Problem{Code: c.code, Type: c.kind, Message: msg}
		}
	}
	return dialect.Problem{Code: 500, Type: dialect.TypeInternal, Message: msg}
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
// has route r's dialect write the body in its shape (switchyard's when r is
// nil or has no shape of its own) and logs server-side failures with the
// request id.
func (s *Server) writeError(ctx *fasthttp.RequestCtx, r *dialect.Route, err error) {
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
	if r != nil && r.WriteError != nil {
		r.WriteError(ctx, p, err)
	} else {
		writeProblem(ctx, p, err)
	}
	s.logFailure(ctx, p, err)
}

// writeProblem writes p in switchyard's shape, {"code", "type", "message"};
// a worker's 4xx body already in that shape goes out as it is.
func writeProblem(ctx *fasthttp.RequestCtx, p dialect.Problem, err error) {
	if w, ok := errors.AsType[*dialect.WorkerError](err); ok && w.Raw != nil {
		dialect.WriteRawJSON(ctx, w.Code, w.Raw)
		return
	}
	dialect.WriteJSON(ctx, p.Code, p)
}

// logFailure logs 5xx answers at warn and the rest at debug.
func (s *Server) logFailure(ctx *fasthttp.RequestCtx, p dialect.Problem, err error) {
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
	r, _ := s.routes.match(ctx.Path())
	s.writeError(ctx, r, parseFailure(err, s.cfg.MaxRequestSize))
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
