package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
)

// The report subcommand turns run's JSON lines into the benchmark's tables
// and judges issue 12's targets on the median over the rounds.
func Example_report() {
	run(context.Background(), []string{"report", "-results", "testdata/results.jsonl",
		"-bare-echo-ns", "20000", "-rss-kb", "16000", "-load", "0.31 0.40 0.52"}, os.Stdout, os.Stderr)
	// Output:
	// | round | target | concurrency | req/s | p50 (µs) | p99 (µs) | errors | CPU µs/req: server | worker | loadgen | server allocs/req | server B/req |
	// |---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|
	// | 1 | bare | 64 | 80000 | 660.0 | 1680.4 | 0 | 7.0 | - | 7.1 | - | - |
	// | 1 | noop-b8 | 64 | 50000 | 1258.3 | 3824.8 | 0 | 12.5 | 7.1 | 9.8 | 9.5 | 812 |
	// | 1 | bare | 1 | 12000 | 80.2 | 144.8 | 0 | 40.8 | - | 40.8 | - | - |
	// | 1 | noop-b1 | 1 | 8000 | 119.0 | 396.1 | 0 | 67.1 | 33.4 | 46.4 | 12.1 | 1100 |
	// | 1 | noop-b8a | 1 | 7600 | 125.0 | 400.5 | 0 | 68.0 | 35.0 | 46.4 | 12.4 | 1120 |
	// | 2 | bare | 64 | 75000 | 700.0 | 1780.4 | 0 | 7.2 | - | 7.3 | - | - |
	// | 2 | noop-b8 | 64 | 45000 | 1358.3 | 3924.8 | 2 | 12.9 | 7.3 | 9.9 | 9.6 | 815 |
	// | 2 | bare | 1 | 12000 | 82.2 | 150.8 | 0 | 40.8 | - | 40.8 | - | - |
	// | 2 | noop-b1 | 1 | 8000 | 152.2 | 396.1 | 0 | 67.1 | 33.4 | 46.4 | 12.1 | 1100 |
	// | 2 | noop-b8a | 1 | 400 | 5300.0 | 5800.0 | 0 | 68.0 | 35.0 | 46.4 | 12.4 | 1120 |
	//
	// | round | c=64: noop-b8 req/s ÷ bare | c=1: noop-b1 p50 − bare p50 (µs) | c=1: noop-b8a p50 ÷ noop-b1 p50 |
	// |---:|---:|---:|---:|
	// | 1 | 0.62 | +38.8 | 1.05 |
	// | 2 | 0.60 | +70.0 | 34.82 |
	//
	// | system calls per request | concurrency | req/s | server | worker |
	// |---|---:|---:|---:|---:|
	// | noop-b8 | 64 | 40000 | 1.6 | 0.4 |
	//
	// Load average (1, 5, 15 min) during the run: 0.31 0.40 0.52
	// Go-to-Python bare echo round trip (worker BenchmarkRoundTrip/bare-echo): 20.0 µs
	//
	// Targets (median over the rounds; each round's figure is taken against the bare server of the same round):
	//   [MET]    c=64, noop-b8: at least 0.6 of the bare server's req/s (aim 0.8): 0.61 (rounds: 0.62, 0.60)
	//   [MET]    c=1, noop-b1: p50 at most the bare server's + 60 µs (aim + 20 µs): +54.4 µs (rounds: +38.8 µs, +70.0 µs)
	//   [MISSED] c=1, noop-b8a (adaptive batching): p50 within 2x of noop-b1's: 17.94x (rounds: 1.05x, 34.82x)
	//   [MET]    front-end RSS idle with three models under 30 MB: 16.4 MB (15.6 MiB)
}

// The run subcommand loads a URL; here a bare server in this process, with
// a fixed number of requests instead of a duration.
func Example_run() {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveHello(ctx, ln) }()
	defer func() { cancel(); <-done }()

	var out bytes.Buffer
	run(context.Background(), []string{"run", "-c", "1,4", "-n", "100", "-warmup", "0s",
		"http://" + ln.Addr().String() + "/predictions/hello"}, &out, io.Discard)
	dec := json.NewDecoder(&out)
	for {
		var r result
		if dec.Decode(&r) != nil {
			break
		}
		fmt.Printf("%s c=%d: %d requests, %d errors\n", r.Label, r.Concurrency, r.Requests, r.Errors)
	}
	// Output:
	// hello c=1: 100 requests, 0 errors
	// hello c=4: 100 requests, 0 errors
}
