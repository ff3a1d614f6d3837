package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
)

// reportFlags are report's inputs: run's results and the figures the
// benchmark script measures besides.
type reportFlags struct {
	results     string  // file of run's JSON lines; "-" is stdin
	bareEcho    float64 // ns per Go-to-Python bare echo round trip
	runtime     float64 // ns per round trip through the Python runtime's no-op handler
	rssKB       int64   // front-end VmRSS, idle with three models
	rssLoadKB   int64   // front-end VmRSS after the load
	load        string  // the load average during the run, as the script read it
	bare        string  // labels of the targets
	b1, b8, b8a string
}

// Targets of issue 12, each judged on the median over the rounds of a
// figure taken against the bare server in the same round.
const (
	minShareOfBare  = 0.6  // c=64, batch_size 8: at least 0.6 of the bare server's req/s
	aimShareOfBare  = 0.8  // ... the aim
	maxOverBareUS   = 60.0 // c=1, batch_size 1: p50 at most the bare server's + 60 µs
	aimOverBareUS   = 20.0 // ... the aim
	maxAdaptiveOfB1 = 2.0  // c=1, batch_size 8 adaptive: p50 within 2x of batch_size 1's
	maxIdleRSSMB    = 30.0 // front-end RSS idle with three models
)

// reportCmd prints the results as a table followed by the targets.
func reportCmd(_ context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseReport(args, stderr)
	if err != nil {
		return err
	}
	in, err := openResults(f.results)
	if err != nil {
		return err
	}
	defer in.Close()
	rs, err := readResults(in)
	if err != nil {
		return err
	}
	writeReport(stdout, f, rs)
	return nil
}

func parseReport(args []string, stderr io.Writer) (reportFlags, error) {
	var f reportFlags
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.StringVar(&f.results, "results", "-", "file of run's JSON lines (- for stdin)")
	fs.Float64Var(&f.bareEcho, "bare-echo-ns", 0, "ns/op of worker BenchmarkRoundTrip/bare-echo")
	fs.Float64Var(&f.runtime, "runtime-noop-ns", 0, "ns/op of worker BenchmarkRoundTrip/runtime-noop")
	fs.Int64Var(&f.rssKB, "rss-kb", 0, "front-end VmRSS in kB, idle with three models loaded")
	fs.Int64Var(&f.rssLoadKB, "rss-load-kb", 0, "front-end VmRSS in kB after the load")
	fs.StringVar(&f.load, "load", "", "the load average during the run, printed with the results")
	fs.StringVar(&f.bare, "bare", "bare", "label of the bare fasthttp server")
	fs.StringVar(&f.b1, "b1", "noop-b1", "label of the no-op model with batch_size 1")
	fs.StringVar(&f.b8, "b8", "noop-b8", "label of the no-op model with batch_size 8")
	fs.StringVar(&f.b8a, "b8a", "noop-b8a", "label of the no-op model with batch_size 8 and adaptive batching")
	if err := parseFlags(fs, args, stderr); err != nil {
		return f, err
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("%w: report takes no arguments", errUsage)
	}
	return f, nil
}

func openResults(path string) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(path)
}

// readResults reads run's JSON lines; blank lines are skipped.
func readResults(r io.Reader) ([]result, error) {
	var out []result
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var res result
		if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
			return nil, fmt.Errorf("loadgen: results line %d: %w", line, err)
		}
		out = append(out, res)
	}
	return out, sc.Err()
}
