package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// errStatus is a response whose status is not 200.
var errStatus = errors.New("loadgen: unexpected status")

// target is the request every loop of a cell sends.
type target struct {
	url     string
	method  string
	body    []byte
	headers []header
}

// header is one request header.
type header struct{ name, value string }

// plan says how one cell loads its target.
type plan struct {
	concurrency int
	warmup      time.Duration // requests sent first and not counted
	duration    time.Duration // length of the measured phase
	requests    int           // when above 0: a fixed count instead of duration
}

// loader sends a target's request over keep-alive connections, one
// connection per concurrent loop.
type loader struct {
	client *fasthttp.HostClient
	t      target
}

// newLoader checks the target's URL and returns a loader that keeps up to
// conns connections open.
func newLoader(t target, conns int) (*loader, error) {
	u, err := url.Parse(t.url)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("%w: want an http://host:port/... URL, got %q", errUsage, t.url)
	}
	return &loader{t: t, client: &fasthttp.HostClient{
		Addr:                u.Host,
		Dial:                dial,
		MaxConns:            max(conns, 1),
		ReadTimeout:         time.Minute,
		WriteTimeout:        time.Minute,
		MaxIdleConnDuration: time.Minute,
	}}, nil
}

// dial connects with the standard library, not fasthttp's default dialer,
// whose address cache keeps a goroutine for the life of the process.
func dial(addr string) (net.Conn, error) { return net.Dial("tcp", addr) }

// close drops the loader's idle connections.
func (l *loader) close() { l.client.CloseIdleConnections() }

// measure runs one cell: the warm-up, then the measured phase, and returns
// what the measured phase saw, with what m measures per request.
func (l *loader) measure(ctx context.Context, p plan, m meters) (result, error) {
	if p.warmup > 0 {
		wctx, cancel := context.WithTimeout(ctx, p.warmup)
		l.phase(wctx, p.concurrency, 0)
		cancel()
	}
	var sys *syscallMeter
	if len(m.syscalls) > 0 {
		var err error
		if sys, err = startSyscalls(m.syscalls, os.TempDir()); err != nil {
			return result{}, err
		}
	}
	mctx, cancel := ctx, context.CancelFunc(func() {})
	if p.requests <= 0 {
		mctx, cancel = context.WithTimeout(ctx, p.duration)
	}
	defer cancel()
	allocs := startAllocs(m.metrics)
	cpu := startCPU(m.cpu)
	start := time.Now()
	tallies := l.phase(mctx, p.concurrency, p.requests)
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		if sys != nil {
			sys.stop()
		}
		return result{}, err
	}
	r := summarize(tallies, elapsed)
	r.CPU = cpu.perRequest(r.Requests)
	var err error
	if r.Allocs, r.AllocBytes, err = allocs.perRequest(r.Requests); err != nil {
		return r, err
	}
	if sys != nil {
		r.Syscalls, err = sys.perRequest(r.Requests)
	}
	return r, err
}

// phase runs conc request loops until ctx ends or, when budget is above 0,
// budget requests have been sent; it returns each loop's tally.
func (l *loader) phase(ctx context.Context, conc, budget int) []tally {
	var stop atomic.Bool
	defer context.AfterFunc(ctx, func() { stop.Store(true) })()
	take := func() bool { return !stop.Load() }
	if budget > 0 {
		var left atomic.Int64
		left.Store(int64(budget))
		take = func() bool { return !stop.Load() && left.Add(-1) >= 0 }
	}
	tallies := make([]tally, max(conc, 1))
	var wg sync.WaitGroup
	for i := range tallies {
		wg.Go(func() { l.loop(&tallies[i], take) })
	}
	wg.Wait()
	return tallies
}

// loop sends requests one after another while take allows.
func (l *loader) loop(tl *tally, take func() bool) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	l.fill(req)
	for take() {
		start := time.Now()
		err := l.client.Do(req, resp)
		d := time.Since(start)
		if err == nil && resp.StatusCode() != fasthttp.StatusOK {
			err = fmt.Errorf("%w %d: %.200s", errStatus, resp.StatusCode(), resp.Body())
		}
		tl.record(d, err)
	}
}

// fill writes the target's request into req.
func (l *loader) fill(req *fasthttp.Request) {
	req.SetRequestURI(l.t.url)
	req.Header.SetMethod(l.t.method)
	for _, h := range l.t.headers {
		req.Header.Set(h.name, h.value)
	}
	if len(l.t.body) > 0 {
		req.SetBody(l.t.body)
	}
}

// tally is what one loop saw: the latency of every answered request, and
// the failures.
type tally struct {
	latencies []time.Duration
	errors    int
	firstErr  error
}

func (t *tally) record(d time.Duration, err error) {
	if err != nil {
		t.errors++
		if t.firstErr == nil {
			t.firstErr = err
		}
		return
	}
	t.latencies = append(t.latencies, d)
}
