package frontend

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"net"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"

	"github.com/switchyard/switchyard/frontend/dialect"
)

// The checks below run before a route's handler: message framing, and the
// management token. They also run on an "Expect: 100-continue" request
// before its body is asked for, together with the size limit, so that a
// refused upload is never sent.

// framingError is the answer to a request that has both Content-Length
// and Transfer-Encoding: a proxy in front may have framed it by the one
// and switchyard by the other (request smuggling, RFC 9112 section 6.1).
var framingError = &httpError{sentinel: errFraming,
	msg: "Request has both Content-Length and Transfer-Encoding; the connection is closed."}

// checkFraming returns framingError for a request whose header holds both
// Content-Length and Transfer-Encoding. fasthttp reads such a request by
// its transfer coding and drops Content-Length from the parsed header, so
// the raw header lines are searched.
func checkFraming(h *fasthttp.RequestHeader) error {
	var length, coding bool
	for raw := h.RawHeaders(); len(raw) > 0; {
		var line []byte
		line, raw, _ = bytes.Cut(raw, []byte{'\n'})
		name, _, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		switch name = bytes.TrimSpace(name); len(name) { // cheap before EqualFold
		case len(fasthttp.HeaderContentLength):
			length = length || bytes.EqualFold(name, []byte(fasthttp.HeaderContentLength))
		case len(fasthttp.HeaderTransferEncoding):
			coding = coding || bytes.EqualFold(name, []byte(fasthttp.HeaderTransferEncoding))
		}
	}
	if length && coding {
		return framingError
	}
	return nil
}

// token is the management token in the form it is compared in: its
// SHA-256, so that comparing takes the same time whatever the length of
// what a client sends.
type token struct {
	sum     [sha256.Size]byte
	metrics bool // GET /metrics requires it too
}

// newToken returns the token that guards the management routes, or nil
// when secret is "" (no token).
func newToken(secret string, metrics bool) *token {
	if secret == "" {
		return nil
	}
	return &token{sum: sha256.Sum256([]byte(secret)), metrics: metrics}
}

// guards reports whether route r requires the token: every management
// route, /metrics only when asked. Inference routes never do, also when
// one listener serves both tables.
func (t *token) guards(r, metrics *dialect.Route) bool {
	if t == nil || r == nil || r.Plane != dialect.Management {
		return false
	}
	return r != metrics || t.metrics
}

// check returns nil when the Authorization header carries the token as a
// bearer credential (RFC 6750), else a 401 error.
func (t *token) check(h *fasthttp.RequestHeader) error {
	cred, ok := bearer(h.Peek(fasthttp.HeaderAuthorization))
	if !ok {
		return &httpError{sentinel: errUnauthorized, msg: "The management API requires an Authorization: Bearer token."}
	}
	sum := sha256.Sum256(cred)
	if subtle.ConstantTimeCompare(sum[:], t.sum[:]) != 1 {
		return &httpError{sentinel: errUnauthorized, msg: "The bearer token is not valid.", invalidToken: true}
	}
	return nil
}

// bearer returns the credential of an Authorization value "Bearer <cred>";
// the scheme is matched without regard to case.
func bearer(v []byte) ([]byte, bool) {
	scheme, cred, ok := bytes.Cut(bytes.TrimSpace(v), []byte{' '})
	if !ok || !bytes.EqualFold(scheme, []byte("Bearer")) {
		return nil, false
	}
	cred = bytes.TrimSpace(cred)
	return cred, len(cred) > 0
}

// authenticate answers header WWW-Authenticate's value for a 401 error.
func authenticate(h *httpError) string {
	if h.invalidToken {
		return `Bearer realm="switchyard", error="invalid_token"`
	}
	return `Bearer realm="switchyard"`
}

// expect is fasthttp's ExpectHandler, called for a request with "Expect:
// 100-continue" before its body is read: a request that would be refused
// anyway (bad framing, a body over the limit, no such route, a missing
// token) is answered at once, and fasthttp closes the connection without
// reading the body. Otherwise the client is told to continue.
func (l *listener) expect(ctx *fasthttp.RequestCtx) int {
	s := l.srv
	r, _ := s.routes.match(ctx.Path())
	err := checkFraming(&ctx.Request.Header)
	if err == nil && ctx.Request.Header.ContentLength() > s.cfg.MaxRequestSize {
		err = parseFailure(fasthttp.ErrBodyTooLarge, s.cfg.MaxRequestSize)
	}
	if err == nil {
		err = l.admit(ctx, r)
	}
	if err == nil {
		return fasthttp.StatusContinue
	}
	s.requestID(ctx)
	s.writeError(ctx, r, err)
	return ctx.Response.StatusCode()
}

// admit checks that the listener serves route r and the request's method
// and, for a guarded route, the token.
func (l *listener) admit(ctx *fasthttp.RequestCtx, r *dialect.Route) error {
	if err := l.check(ctx, r); err != nil {
		return err
	}
	if l.srv.token.guards(r, &l.srv.own.metrics) {
		return l.srv.token.check(&ctx.Request.Header)
	}
	return nil
}

// warnOpenManagement logs a warning when a listener that serves the
// management routes is bound to an address other than loopback and no
// token guards them.
func (s *Server) warnOpenManagement() {
	if s.token != nil {
		return
	}
	for _, l := range s.listeners {
		addr, ok := l.ln.Addr().(*net.TCPAddr)
		if l.planes&dialect.Management != 0 && ok && !addr.IP.IsLoopback() {
			s.log.Warn("the management API listens on a non-loopback address without a token: anyone who reaches it can register, scale and remove models; set management_token",
				zap.String("address", addr.String()))
		}
	}
}
