package frontend

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchyard/switchyard/batching"
)

func TestNewConfig(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"defaults", Config{InferenceAddr: "127.0.0.1:8080", ManagementAddr: "127.0.0.1:8084"}, true},
		{"http prefix", Config{InferenceAddr: "http://127.0.0.1:8080", ManagementAddr: "http://127.0.0.1:8080/"}, true},
		{"no inference address", Config{ManagementAddr: "127.0.0.1:8084"}, false},
		{"no management address", Config{InferenceAddr: "127.0.0.1:8084"}, false},
		{"https", Config{InferenceAddr: "https://127.0.0.1:8443", ManagementAddr: "127.0.0.1:8084"}, false},
		{"negative size", Config{InferenceAddr: "a:1", ManagementAddr: "a:2", MaxRequestSize: -1}, false},
		{"throttle 200", Config{InferenceAddr: "a:1", ManagementAddr: "a:2", ThrottleCode: 200}, false},
		{"throttle 429", Config{InferenceAddr: "a:1", ManagementAddr: "a:2", ThrottleCode: 429}, true},
		{"negative shutdown", Config{InferenceAddr: "a:1", ManagementAddr: "a:2", ShutdownTimeout: -time.Second}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.cfg, newFake())
			if c.ok != (err == nil) {
				t.Fatalf("New: %v", err)
			}
			if err != nil && !errors.Is(err, ErrConfig) {
				t.Errorf("error %v is not ErrConfig", err)
			}
			if c.ok && (s.cfg.MaxRequestSize != DefaultMaxRequestSize || s.cfg.ShutdownTimeout != DefaultShutdownTimeout) {
				t.Errorf("defaults not applied: %+v", s.cfg)
			}
		})
	}
	if _, err := New(Config{InferenceAddr: "a:1", ManagementAddr: "a:2"}, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("nil Models: %v", err)
	}
}

func TestSingleListener(t *testing.T) {
	ts := startServer(t, newFake("m"), func(c *Config) { c.ManagementAddr = c.InferenceAddr })
	if ts.InferenceAddr() != ts.ManagementAddr() {
		t.Fatalf("two listeners: %s and %s", ts.InferenceAddr(), ts.ManagementAddr())
	}
	for _, r := range []struct{ method, path string }{
		{"POST", "/invocations"}, {"POST", "/models/m/invoke"}, {"GET", "/ping"},
		{"GET", "/models"}, {"GET", "/models/m"}, {"GET", "/metrics"},
	} {
		if resp, body := ts.do(t, r.method, ts.inf+r.path, "x", nil); resp.StatusCode != 200 {
			t.Errorf("%s %s = %d (%s)", r.method, r.path, resp.StatusCode, body)
		}
	}
}

func TestSeparateListeners(t *testing.T) {
	ts := startServer(t, newFake("m"))
	if ts.InferenceAddr() == ts.ManagementAddr() || ts.InferenceAddr() == "" || ts.ManagementAddr() == "" {
		t.Fatalf("addresses %q and %q", ts.InferenceAddr(), ts.ManagementAddr())
	}
}

func newServer(t *testing.T, f *fakeModels) *Server {
	t.Helper()
	s, err := New(Config{InferenceAddr: "127.0.0.1:0", ManagementAddr: "127.0.0.1:"}, f)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLifecycleOrder(t *testing.T) {
	s := newServer(t, newFake())
	if s.InferenceAddr() != "" {
		t.Error("address before Listen")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Serve(ctx); err != nil {
		t.Fatalf("Serve with a done context: %v", err)
	}
	if err := s.Listen(); !errors.Is(err, ErrServerState) {
		t.Errorf("Listen after Serve: %v", err)
	}
	if err := s.Serve(context.Background()); !errors.Is(err, ErrServerState) {
		t.Errorf("Serve after Serve: %v", err)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Errorf("second Shutdown: %v", err)
	}
}

func TestListenThenShutdown(t *testing.T) {
	s := newServer(t, newFake())
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	addr := s.InferenceAddr()
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if conn, err := net.Dial("tcp", addr); err == nil {
		conn.Close()
		t.Error("listener still open after Shutdown")
	}
}

func TestListenError(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	s, err := New(Config{InferenceAddr: "127.0.0.1:0", ManagementAddr: busy.Addr().String()}, newFake())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err == nil {
		t.Fatal("Listen on a busy port succeeded")
	}
	if s.InferenceAddr() != "" {
		t.Error("the first listener stayed open after the second failed")
	}
}

// TestShutdownWaitsForInFlight: a request in flight when Shutdown starts
// still gets its answer, new connections are refused, nothing leaks.
func TestShutdownWaitsForInFlight(t *testing.T) {
	defer goleak.VerifyNone(t, append(leakOptions, goleak.IgnoreCurrent())...)
	f := holding("m")
	s := newServer(t, f)
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(context.Background()) }()
	addr := s.InferenceAddr()
	conn := rawRequest(t, addr, postInvocations)
	j := heldJob(t, f)

	stopped := make(chan error, 1)
	go func() { stopped <- s.Shutdown(context.Background()) }()
	<-s.stopping
	echo("m", j)
	resp, err := http.ReadResponse(newReader(conn), nil)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("in-flight answer: %v %v", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	conn.Close()
	if err := <-stopped; err != nil {
		t.Errorf("Shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("new connection accepted after Shutdown")
	}
}

// TestShutdownCutsOff: when Shutdown's context ends first, waiting jobs are
// canceled with batching.ErrClosed, connections close, nothing leaks.
func TestShutdownCutsOff(t *testing.T) {
	defer goleak.VerifyNone(t, append(leakOptions, goleak.IgnoreCurrent())...)
	f := holding("m")
	s := newServer(t, f)
	ctx, cancelServe := context.WithCancel(context.Background())
	defer cancelServe()
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	conn := rawRequest(t, s.InferenceAddr(), postInvocations)
	j := heldJob(t, f)

	done, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Shutdown(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown = %v, want context.Canceled", err)
	}
	if cause := context.Cause(j.Context()); !errors.Is(cause, batching.ErrClosed) {
		t.Errorf("job cause = %v", cause)
	}
	j.Fail(batching.ErrClosed)
	if _, err := io.ReadAll(conn); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Errorf("reading the cut connection: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

// TestServeGivesUpAfterShutdownTimeout: when Serve's context ends, requests
// still waiting after Config.ShutdownTimeout are cut off and Serve returns.
func TestServeGivesUpAfterShutdownTimeout(t *testing.T) {
	defer goleak.VerifyNone(t, append(leakOptions, goleak.IgnoreCurrent())...)
	f := holding("m")
	s, err := New(Config{InferenceAddr: "127.0.0.1:0", ManagementAddr: "127.0.0.1:", ShutdownTimeout: time.Nanosecond}, f)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	rawRequest(t, s.InferenceAddr(), postInvocations)
	j := heldJob(t, f)
	cancel()
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if cause := context.Cause(j.Context()); !errors.Is(cause, batching.ErrClosed) {
		t.Errorf("job cause = %v", cause)
	}
	j.Fail(batching.ErrClosed)
}
