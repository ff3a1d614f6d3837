package frontend

import (
	"bytes"
	"context"
	"errors"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/frontend/dialect"
)

// HTTP/2 without TLS on the inference listener.
//
// fasthttp speaks HTTP/1.1 only, but some clients speak only HTTP/2: the AWS
// SDK for JavaScript's Bedrock Runtime client does (it opens cleartext
// HTTP/2 with prior knowledge when its endpoint is http://). The inference
// listener therefore looks at the first bytes of every connection: one that
// opens with HTTP/2's client preface goes to net/http's server (unencrypted
// HTTP/2), whose handler forwards each request as HTTP/1.1 over loopback to
// the listener itself and streams the answer back as it comes, so that every
// request is served, counted and logged by the one fasthttp path. Every
// other connection goes to fasthttp untouched.

// h2Preface is the first bytes an HTTP/2 client sends (RFC 9113, 3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// splitListener accepts connections on ln and passes each to http1 or,
// when it opens with the HTTP/2 preface, to http2.
type splitListener struct {
	ln           net.Listener
	readTimeout  time.Duration // for a connection's first bytes
	http1, http2 *chanListener
	wg           sync.WaitGroup // the accept loop and the routers

	mu      sync.Mutex
	routing map[net.Conn]struct{} // connections whose first bytes are awaited
	closed  bool
}

func newSplitListener(ln net.Listener, readTimeout time.Duration) *splitListener {
	s := &splitListener{ln: ln, readTimeout: readTimeout, http1: newChanListener(ln.Addr()), http2: newChanListener(ln.Addr()),
		routing: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s
}

// accept runs until ln is closed; a permanent accept error reaches the
// HTTP/1 side, whose server reports it.
func (s *splitListener) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			s.http1.fail(err)
			s.http2.fail(net.ErrClosed)
			return
		}
		s.wg.Add(1)
		go s.route(c)
	}
}

// route reads the connection's first bytes, then hands the connection,
// those bytes included, to its side. A connection that sends nothing within
// the read timeout, or before the listener closes, is closed.
func (s *splitListener) route(c net.Conn) {
	defer s.wg.Done()
	if !s.track(c) {
		_ = c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(s.readTimeout))
	head, err := readHead(c)
	s.untrack(c)
	_ = c.SetReadDeadline(time.Time{})
	if err != nil && len(head) == 0 {
		_ = c.Close()
		return
	}
	side := s.http1
	if string(head) == h2Preface {
		side = s.http2
	}
	side.give(&prefixConn{Conn: c, head: head})
}

func (s *splitListener) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.routing[c] = struct{}{}
	return true
}

func (s *splitListener) untrack(c net.Conn) {
	s.mu.Lock()
	delete(s.routing, c)
	s.mu.Unlock()
}

// readHead reads the first bytes: until they are the whole HTTP/2 preface
// or differ from it. One read is enough for almost every HTTP/1 request.
func readHead(r io.Reader) ([]byte, error) {
	buf := make([]byte, len(h2Preface))
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if !bytes.HasPrefix([]byte(h2Preface), buf[:n]) || err != nil {
			return buf[:n], err
		}
	}
	return buf, nil
}

// Close stops accepting, wakes the routers that wait for first bytes, and
// waits for them; the two sides' listeners then close.
func (s *splitListener) Close() error {
	err := s.ln.Close()
	s.mu.Lock()
	s.closed = true
	for c := range s.routing {
		_ = c.SetReadDeadline(past)
	}
	s.mu.Unlock()
	s.wg.Wait()
	s.http1.Close()
	s.http2.Close()
	return err
}

// prefixConn is a connection whose first bytes were read already.
type prefixConn struct {
	net.Conn
	head []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.head) > 0 {
		n := copy(p, c.head)
		c.head = c.head[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// SyscallConn exposes the socket, for the peer watch (watch.go).
func (c *prefixConn) SyscallConn() (syscall.RawConn, error) { return rawConn(c.Conn) }

// rawConn is the socket of c, which a connection that wraps c exposes as
// its own SyscallConn.
func rawConn(c net.Conn) (syscall.RawConn, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil, errors.ErrUnsupported
	}
	return sc.SyscallConn()
}

// chanListener is a net.Listener whose connections come from a
// splitListener.
type chanListener struct {
	addr   net.Addr
	conns  chan net.Conn
	mu     sync.Mutex
	err    error
	closed chan struct{}
}

func newChanListener(addr net.Addr) *chanListener {
	return &chanListener{addr: addr, conns: make(chan net.Conn), closed: make(chan struct{})}
}

// give hands c to Accept, or closes it when the listener is closed.
func (l *chanListener) give(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.closed:
		_ = c.Close()
	}
}

// fail makes Accept return err from now on.
func (l *chanListener) fail(err error) {
	l.mu.Lock()
	if l.err == nil {
		l.err = err
		close(l.closed)
	}
	l.mu.Unlock()
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		l.mu.Lock()
		defer l.mu.Unlock()
		return nil, l.err
	}
}

func (l *chanListener) Close() error {
	l.fail(net.ErrClosed)
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

// h2Bridge serves HTTP/2 connections by forwarding their requests to the
// HTTP/1.1 server at addr.
type h2Bridge struct {
	srv       *http.Server
	transport *http.Transport
	done      chan struct{}
}

// newH2Bridge starts serving ln's connections, forwarding to addr. Request
// bodies are not limited here: the HTTP/1.1 server answers one that is too
// large.
func newH2Bridge(ln net.Listener, addr string, cfg *Config) *h2Bridge {
	log := cfg.Logger
	var protocols http.Protocols
	protocols.SetUnencryptedHTTP2(true)
	transport := &http.Transport{
		DialContext:         (&net.Dialer{}).DialContext,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     cfg.IdleTimeout,
		DisableCompression:  true,
	}
	target := &url.URL{Scheme: "http", Host: loopback(addr)}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = r.In.Host
		},
		Transport:     transport,
		FlushInterval: -1,
		ErrorLog:      bridgeLog(log),
		ErrorHandler:  bridgeError(log),
	}
	b := &h2Bridge{transport: transport, done: make(chan struct{})}
	b.srv = &http.Server{
		Handler: proxy, Protocols: &protocols, ReadHeaderTimeout: cfg.ReadTimeout, IdleTimeout: cfg.IdleTimeout,
		ErrorLog: bridgeLog(log),
	}
	go func() {
		defer close(b.done)
		_ = b.srv.Serve(ln)
	}()
	return b
}

// bridgeLog sends what net/http's server and proxy log to zap at warn level.
func bridgeLog(log *zap.Logger) *stdlog.Logger {
	l, err := zap.NewStdLogAt(log, zap.WarnLevel)
	if err != nil { // only for levels zap does not know
		return stdlog.New(io.Discard, "", 0)
	}
	return l
}

// loopback is addr with an unspecified host (listening on every address)
// replaced by the loopback address.
func loopback(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// bridgeError answers a request the bridge could not forward (the server is
// stopping) with 503 in switchyard's error shape.
func bridgeError(log *zap.Logger) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		if errors.Is(err, context.Canceled) {
			return // the client left
		}
		log.Debug("HTTP/2 request not forwarded", zap.String("path", r.URL.Path), zap.Error(err))
		w.Header().Set("Content-Type", dialect.ContentTypeJSON)
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"code": 503, "type": "`+dialect.TypeUnavailable+`", "message": "The server is stopping."}`+"\n")
	}
}

// shutdown stops the bridge: gracefully (in-flight requests finish), or at
// once when ctx is done first.
func (b *h2Bridge) shutdown(ctx context.Context) {
	if b.srv.Shutdown(ctx) != nil {
		_ = b.srv.Close()
	}
	<-b.done
	b.transport.CloseIdleConnections()
}

// close stops the bridge at once.
func (b *h2Bridge) close() { _ = b.srv.Close() }
