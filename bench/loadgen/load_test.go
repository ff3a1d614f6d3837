package main

import (
	"context"
	"net"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/valyala/fasthttp"
)

// serveInProcess serves handler on a free local port until the test ends
// and returns the base URL.
func serveInProcess(t *testing.T, handler fasthttp.RequestHandler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &fasthttp.Server{Handler: handler}
	var wg sync.WaitGroup
	wg.Go(func() { _ = srv.Serve(ln) })
	t.Cleanup(func() {
		_ = srv.Shutdown()
		wg.Wait()
	})
	return "http://" + ln.Addr().String()
}

// helloInProcess runs the bare server of helloCmd in this process.
func helloInProcess(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveHello(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serveHello: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

func TestMeasure(t *testing.T) {
	base := helloInProcess(t)
	tests := []struct {
		name string
		plan plan
	}{
		{"one loop", plan{concurrency: 1, requests: 50}},
		{"eight loops", plan{concurrency: 8, requests: 400}},
		{"more loops than requests", plan{concurrency: 16, requests: 5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l, err := newLoader(target{url: base + "/x", method: "POST", body: []byte("{}")}, tc.plan.concurrency)
			if err != nil {
				t.Fatal(err)
			}
			defer l.close()
			r, err := l.measure(context.Background(), tc.plan, meters{cpu: []watched{{"loadgen", os.Getpid()}}})
			if err != nil {
				t.Fatal(err)
			}
			if r.Requests != tc.plan.requests || r.Errors != 0 {
				t.Fatalf("measured %d requests and %d errors (%s), want %d and none", r.Requests, r.Errors, r.FirstError, tc.plan.requests)
			}
			if r.P50Micros <= 0 || r.P99Micros < r.P50Micros || r.RPS <= 0 {
				t.Errorf("figures out of order: %+v", r)
			}
			if _, ok := r.CPU["loadgen"]; !ok {
				t.Errorf("no CPU figure for the load generator: %v", r.CPU)
			}
		})
	}
}

// TestMeasureCountsFailures loads a server that answers 503: every request
// is an error, and the first one's status is kept.
func TestMeasureCountsFailures(t *testing.T) {
	base := serveInProcess(t, func(ctx *fasthttp.RequestCtx) {
		ctx.SetStatusCode(fasthttp.StatusServiceUnavailable)
		ctx.SetBodyString("busy")
	})
	l, err := newLoader(target{url: base + "/", method: "GET"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	r, err := l.measure(context.Background(), plan{concurrency: 2, requests: 10}, meters{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Requests != 0 || r.Errors != 10 || !strings.Contains(r.FirstError, "503: busy") {
		t.Errorf("measured %+v, want 10 errors with the status", r)
	}
}

// TestMeasureSendsTheTarget checks that method, headers and body arrive.
func TestMeasureSendsTheTarget(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	base := serveInProcess(t, func(ctx *fasthttp.RequestCtx) {
		mu.Lock()
		seen = append(seen, string(ctx.Method())+" "+string(ctx.Path())+" "+string(ctx.Request.Header.Peek("X-Test"))+" "+string(ctx.PostBody()))
		mu.Unlock()
	})
	tg := target{url: base + "/p?q=1", method: "PUT", body: []byte("data"), headers: []header{{"X-Test", "yes"}}}
	l, err := newLoader(tg, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	if _, err := l.measure(context.Background(), plan{concurrency: 1, requests: 2}, meters{}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 || seen[0] != "PUT /p yes data" {
		t.Errorf("server saw %q", seen)
	}
}

// TestMeasureCanceled stops a duration-bound cell early through its context.
func TestMeasureCanceled(t *testing.T) {
	base := helloInProcess(t)
	l, err := newLoader(target{url: base, method: "GET"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer l.close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.measure(ctx, plan{concurrency: 2, duration: 1 << 62}, meters{}); err != context.Canceled {
		t.Errorf("measure with a canceled context: %v, want context.Canceled", err)
	}
}

func TestNewLoaderRejectsURLs(t *testing.T) {
	for _, u := range []string{"", "localhost:80", "https://127.0.0.1/", "http:///x", "::"} {
		t.Run(u, func(t *testing.T) {
			if _, err := newLoader(target{url: u}, 1); err == nil {
				t.Errorf("newLoader(%q) accepted it", u)
			}
		})
	}
}
