package frontend

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// listener is one bound address with its fasthttp server and the route
// tables it serves. A listener that serves inference routes also takes
// HTTP/2 (h2c.go): split sorts its connections, and h2 serves the HTTP/2
// ones; both exist from Serve on.
type listener struct {
	srv     *Server
	planes  dialect.Plane
	ln      net.Listener
	fs      *fasthttp.Server
	serving sync.WaitGroup
	split   *splitListener
	h2      *h2Bridge
}

func (s *Server) newListener(ln net.Listener, planes dialect.Plane) *listener {
	l := &listener{srv: s, planes: planes, ln: ln}
	l.fs = &fasthttp.Server{
		Handler:                      l.handle,
		ErrorHandler:                 s.handleParseError,
		ExpectHandler:                l.expect,
		ConnState:                    s.conns.track,
		Logger:                       fastLogger{s.log},
		MaxRequestBodySize:           s.cfg.MaxRequestSize,
		ReadBufferSize:               readBufferSize,
		ReadTimeout:                  s.cfg.ReadTimeout,
		IdleTimeout:                  s.cfg.IdleTimeout,
		NoDefaultServerHeader:        true,
		DisablePreParseMultipartForm: true,
		CloseOnShutdown:              true,
		StreamRequestBody:            false,
	}
	return l
}

// prepare sets up what Serve needs beyond fasthttp: on an inference
// listener, the split by protocol and the HTTP/2 bridge.
func (l *listener) prepare() {
	if l.planes&dialect.Inference == 0 {
		return
	}
	l.split = newSplitListener(l.ln, l.srv.cfg.ReadTimeout)
	l.h2 = newH2Bridge(l.split.http2, l.ln.Addr().String(), &l.srv.cfg)
}

// serve runs fasthttp's accept loop; a failure other than the listener
// being closed goes to failed.
func (l *listener) serve(failed chan<- error) {
	defer l.serving.Done()
	var ln net.Listener = l.ln
	if l.split != nil {
		ln = l.split.http1
	}
	if err := l.fs.Serve(ln); err != nil {
		failed <- fmt.Errorf("frontend: serve %s: %w", l.ln.Addr(), err)
	}
}

// shutdown closes the listener and waits for its connections. fasthttp
// only knows a listener once its Serve has started, so after the accept loop
// is surely over a second pass drains what a late-starting Serve registered.
// The HTTP/2 bridge stops last: its requests are answered by fasthttp.
func (l *listener) shutdown() {
	_ = l.fs.ShutdownWithContext(context.Background())
	if l.split != nil {
		_ = l.split.Close()
	} else {
		_ = l.ln.Close()
	}
	l.serving.Wait()
	_ = l.fs.ShutdownWithContext(context.Background())
	if l.h2 != nil {
		l.h2.shutdown(context.Background())
	}
}

// handle is the fasthttp handler: request id, route, framing, method,
// token, then the route's handler; any error it returns goes through
// writeError, in the shape of the route's dialect.
func (l *listener) handle(ctx *fasthttp.RequestCtx) {
	s := l.srv
	id := s.requestID(ctx)
	var r *dialect.Route
	defer s.recoverPanic(ctx, id, &r)
	r, args := s.routes.match(ctx.Path())
	if err := checkFraming(&ctx.Request.Header); err != nil {
		s.writeError(ctx, r, err)
		return
	}
	if err := l.admit(ctx, r); err != nil {
		s.writeError(ctx, r, err)
		return
	}
	if r.Decode != nil {
		s.serveInference(ctx, r, args, id)
		return
	}
	if err := r.Serve(ctx, args); err != nil {
		s.writeError(ctx, r, err)
	}
}

// check returns a 404 error for a route this listener does not serve and
// a 405 error (with Allow) for a method the route does not take.
func (l *listener) check(ctx *fasthttp.RequestCtx, r *dialect.Route) error {
	if r == nil || r.Plane&l.planes == 0 {
		return &httpError{sentinel: dialect.ErrNoRoute, msg: fmt.Sprintf("Resource %s not found.", api.Quote(ctx.Path()))}
	}
	if dialect.ParseMethod(ctx.Method())&r.Methods == 0 {
		msg := fmt.Sprintf("Method %s is not allowed on %s.", api.Quote(ctx.Method()), api.Quote(ctx.Path()))
		return &httpError{sentinel: dialect.ErrMethod, msg: msg, allow: r.Methods.Allow()}
	}
	return nil
}

// recoverPanic turns a handler panic into a logged 500 answer instead of a
// dead process (fasthttp recovers nothing).
func (s *Server) recoverPanic(ctx *fasthttp.RequestCtx, id string, r **dialect.Route) {
	v := recover()
	if v == nil {
		return
	}
	s.log.Error("handler panicked", zap.String("request_id", id), zap.Any("panic", v), zap.StackSkip("stack", 1))
	ctx.Response.Reset()
	ctx.Response.Header.Set(headerRequestID, id)
	s.writeError(ctx, *r, fmt.Errorf("%w: %v", errPanic, v))
}

// fastLogger sends fasthttp's own messages to zap at debug level: they are
// mostly about misbehaving clients.
type fastLogger struct{ l *zap.Logger }

func (f fastLogger) Printf(format string, args ...any) {
	if ce := f.l.Check(zap.DebugLevel, "fasthttp"); ce != nil {
		ce.Write(zap.String("detail", fmt.Sprintf(format, args...)))
	}
}
