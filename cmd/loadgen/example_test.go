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

// The report subcommand turns run's JSON lines into the benchmark's table
// and judges issue 3's targets.
func Example_report() {
	run(context.Background(), []string{"report", "-results", "testdata/results.jsonl",
		"-bare-echo-ns", "20000", "-rss-kb", "16000"}, os.Stdout, os.Stderr)
	// Output:
	// | target | concurrency | req/s | p50 (µs) | p99 (µs) | errors | CPU µs/req: server | worker | loadgen |
	// |---|---:|---:|---:|---:|---:|---:|---:|---:|
	// | bare | 1 | 60000 | 13.2 | 44.8 | 0 | 10.8 | - | 10.8 |
	// | bare | 64 | 80000 | 660.0 | 1680.4 | 0 | 7.0 | - | 7.1 |
	// | noop-b1 | 1 | 7000 | 119.0 | 396.1 | 0 | 97.1 | 33.4 | 46.4 |
	// | noop-b8 | 64 | 25000 | 2158.3 | 8824.8 | 2 | 26.5 | 7.1 | 11.8 |
	//
	// Go-to-Python bare echo round trip (worker BenchmarkRoundTrip/bare-echo): 20.0 µs
	//
	// Targets:
	//   [MISSED] c=64, batch_size 8: at least half the bare server's req/s: noop-b8 25000 req/s = 0.31 x bare 80000 req/s (want >= 0.50)
	//   [MET]    c=1: p50 within 100 µs of a bare Go-to-Python round trip: noop-b1 p50 119.0 µs = bare echo 20.0 µs + 99.0 µs (want <= +100 µs)
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
