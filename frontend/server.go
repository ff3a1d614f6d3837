package frontend

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"
	"go.uber.org/zap"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// Server is the HTTP front-end: one or two fasthttp listeners in front of a
// Models registry. Create it with New, bind with Listen, run it with Serve
// and stop it with Shutdown (or by ending Serve's context).
type Server struct {
	cfg     Config
	models  Models
	log     *zap.Logger
	met     *metrics
	ids     *idSource
	reclaim *reclaimer
	routes  routeTable
	own     *coreRoutes // the core's own routes, last in routes
	started time.Time   // when New made the server
	token   *token      // guards the management routes; nil for none

	// base is the parent of the contexts of management calls and streamed
	// answers; it is canceled with batching.ErrClosed when a shutdown gives
	// up waiting.
	base   context.Context
	cancel context.CancelCauseFunc
	conns  connSet

	mu        sync.Mutex
	state     serverState
	listeners []*listener
	failed    chan error

	stopOnce sync.Once
	stopping chan struct{}
	drained  chan struct{}
	waits    waitList // requests waiting for their answers; a forced shutdown answers them
}

type serverState uint8

const (
	stateNew serverState = iota
	stateListening
	stateServing
	stateStopped
)

// New returns a server for models with cfg's zero fields set to their
// defaults. It registers the server's collectors on cfg.Registry.
func New(cfg Config, models Models) (*Server, error) {
	if models == nil {
		return nil, fmt.Errorf("%w: Models is nil", ErrConfig)
	}
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	met, err := newMetrics(cfg.Registry)
	if err != nil {
		return nil, err
	}
	s := &Server{
		cfg: cfg, models: models, log: cfg.Logger, met: met, ids: newIDSource(), reclaim: newReclaimer(), started: time.Now(),
		token:    newToken(cfg.ManagementToken, cfg.MetricsRequireToken),
		stopping: make(chan struct{}), drained: make(chan struct{}), waits: waitList{delay: watchDelay},
	}
	s.base, s.cancel = context.WithCancelCause(context.Background())
	s.own = newCoreRoutes(fasthttpadaptor.NewFastHTTPHandler(promhttp.HandlerFor(cfg.Registry, promhttp.HandlerOpts{})))
	s.routes = newRouteTable(dialect.Host{
		Models: models, Base: s.base, Started: s.started, Version: cfg.Version, Forget: met.forget,
		NoWaitModelLoading: cfg.NoWaitModelLoading, AllowMultiStatus: cfg.AllowMultiStatus,
		Aliases: cfg.ModelAliases,
	}, s.own)
	return s, nil
}

// Listen binds the listeners now, so that callers (and tests passing
// "127.0.0.1:0") can learn the addresses before serving.
func (s *Server) Listen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateNew {
		return fmt.Errorf("%w: Listen after Listen, Serve or Shutdown", ErrServerState)
	}
	for _, b := range s.bindings() {
		ln, err := net.Listen("tcp", b.addr)
		if err != nil {
			s.closeListeners()
			return fmt.Errorf("frontend: listen on %s: %w", b.addr, err)
		}
		s.listeners = append(s.listeners, s.newListener(s.capped(ln, b.planes), b.planes))
	}
	s.state = stateListening
	s.warnOpenManagement()
	return nil
}

// capped wraps ln so that its open connections are counted and, with
// Config.MaxConnections, capped.
func (s *Server) capped(ln net.Listener, planes dialect.Plane) net.Listener {
	name := planeName(planes)
	return newCapListener(ln, s.cfg.MaxConnections,
		s.met.conns.open.WithLabelValues(name), s.met.conns.refused.WithLabelValues(name))
}

// planeName is the listener label of a listener serving planes.
func planeName(planes dialect.Plane) string {
	switch planes {
	case dialect.Inference:
		return "inference"
	case dialect.Management:
		return "management"
	}
	return "inference+management"
}

type binding struct {
	addr   string
	planes dialect.Plane
}

// bindings lists the listeners to open: one for both tables when the two
// addresses are equal, else one each.
func (s *Server) bindings() []binding {
	if s.cfg.InferenceAddr == s.cfg.ManagementAddr {
		return []binding{{s.cfg.InferenceAddr, dialect.Inference | dialect.Management}}
	}
	return []binding{{s.cfg.InferenceAddr, dialect.Inference}, {s.cfg.ManagementAddr, dialect.Management}}
}

func (s *Server) closeListeners() {
	for _, l := range s.listeners {
		_ = l.ln.Close()
	}
	s.listeners = nil
}

// InferenceAddr returns the bound address of the inference listener, or ""
// before Listen.
func (s *Server) InferenceAddr() string { return s.boundAddr(dialect.Inference) }

// ManagementAddr returns the bound address of the management listener, or
// "" before Listen. It equals InferenceAddr when one listener serves both.
func (s *Server) ManagementAddr() string { return s.boundAddr(dialect.Management) }

func (s *Server) boundAddr(p dialect.Plane) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.listeners {
		if l.planes&p != 0 {
			return l.ln.Addr().String()
		}
	}
	return ""
}

// Serve serves until ctx is done (or a listener fails), then shuts down:
// it stops accepting and gives in-flight requests Config.ShutdownTimeout to
// finish before cutting them off. It binds first when Listen was not
// called. It returns nil after a shutdown and the listener's error after a
// failure.
func (s *Server) Serve(ctx context.Context) error {
	if err := s.start(); err != nil {
		return err
	}
	var err error
	select {
	case <-ctx.Done():
	case err = <-s.failed:
	case <-s.stopping:
		<-s.drained
		return nil
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	if serr := s.Shutdown(sctx); serr != nil {
		s.log.Warn("in-flight requests cut off at shutdown", zap.Duration("timeout", s.cfg.ShutdownTimeout))
	}
	return err
}

// start binds when needed and launches one fasthttp Serve per listener.
func (s *Server) start() error {
	if s.unbound() {
		if err := s.Listen(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateListening {
		return fmt.Errorf("%w: Serve after Serve or Shutdown", ErrServerState)
	}
	s.state = stateServing
	s.failed = make(chan error, len(s.listeners))
	for _, l := range s.listeners {
		l.prepare()
		l.serving.Add(1)
		go l.serve(s.failed)
	}
	return nil
}

// unbound reports whether Listen has yet to be called.
func (s *Server) unbound() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state == stateNew
}

// Shutdown stops accepting connections and waits for in-flight requests to
// finish. When ctx is done first it cuts them off: waiting jobs' contexts
// are canceled and every connection is closed; it still waits for the
// handlers to return, then reports ctx's error. It is safe to call more
// than once and at the same time as Serve.
func (s *Server) Shutdown(ctx context.Context) error {
	s.stopOnce.Do(s.beginStop)
	select {
	case <-s.drained:
		return nil
	case <-ctx.Done():
	}
	s.waits.cancelAll(batching.ErrClosed)
	s.cancel(batching.ErrClosed)
	s.conns.closeAll()
	s.closeBridges()
	<-s.drained
	return ctx.Err()
}

// closeBridges closes the HTTP/2 connections at once.
func (s *Server) closeBridges() {
	s.mu.Lock()
	lns := s.listeners
	s.mu.Unlock()
	for _, l := range lns {
		if l.h2 != nil {
			l.h2.close()
		}
	}
}

// beginStop marks the server stopped and starts the goroutine that drains
// it; Shutdown waits for that goroutine through s.drained.
func (s *Server) beginStop() {
	s.mu.Lock()
	s.state = stateStopped
	lns := s.listeners
	s.mu.Unlock()
	close(s.stopping)
	go s.drain(lns)
}

func (s *Server) drain(lns []*listener) {
	defer close(s.drained)
	var wg sync.WaitGroup
	for _, l := range lns {
		wg.Go(l.shutdown)
	}
	wg.Wait()
	s.waits.stop()
	s.reclaim.stop()
	s.cancel(batching.ErrClosed)
}

// connSet tracks open connections so that a shutdown that runs out of time
// can close them.
type connSet struct {
	mu sync.Mutex
	m  map[net.Conn]struct{}
}

// track is fasthttp's ConnState hook.
func (c *connSet) track(conn net.Conn, st fasthttp.ConnState) {
	switch st {
	case fasthttp.StateNew:
		c.mu.Lock()
		if c.m == nil {
			c.m = make(map[net.Conn]struct{})
		}
		c.m[conn] = struct{}{}
		c.mu.Unlock()
	case fasthttp.StateClosed, fasthttp.StateHijacked:
		c.mu.Lock()
		delete(c.m, conn)
		c.mu.Unlock()
	}
}

func (c *connSet) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for conn := range c.m {
		_ = conn.Close()
	}
}
