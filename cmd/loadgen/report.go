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
	results   string  // file of run's JSON lines; "-" is stdin
	bareEcho  float64 // ns per Go-to-Python bare echo round trip
	runtime   float64 // ns per round trip through the Python runtime's no-op handler
	rssKB     int64   // front-end VmRSS, idle with three models
	rssLoadKB int64   // front-end VmRSS after the load
	bare      string  // labels of the three targets
	b1, b8    string
}

// Targets of issue 3.
const (
	minShareOfBare = 0.5  // c=64, batch_size 8: at least half the bare server's req/s
	maxOverEchoUS  = 100  // c=1: p50 within 100 µs of the bare round trip
	maxIdleRSSMB   = 30.0 // front-end RSS idle with three models
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
	fs.StringVar(&f.bare, "bare", "bare", "label of the bare fasthttp server")
	fs.StringVar(&f.b1, "b1", "noop-b1", "label of the no-op model with batch_size 1")
	fs.StringVar(&f.b8, "b8", "noop-b8", "label of the no-op model with batch_size 8")
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

// writeReport prints the table, the reference figures and the targets.
func writeReport(w io.Writer, f reportFlags, rs []result) {
	fmt.Fprintln(w, "| target | concurrency | req/s | p50 (µs) | p99 (µs) | errors | CPU µs/req: server | worker | loadgen |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %d | %.0f | %.1f | %.1f | %d | %s | %s | %s |\n", r.Label, r.Concurrency, r.RPS,
			r.P50Micros, r.P99Micros, r.Errors, cpuCell(r.CPU, "server"), cpuCell(r.CPU, "worker"), cpuCell(r.CPU, "loadgen"))
	}
	fmt.Fprintln(w)
	if f.bareEcho > 0 {
		fmt.Fprintf(w, "Go-to-Python bare echo round trip (worker BenchmarkRoundTrip/bare-echo): %.1f µs\n", f.bareEcho/1e3)
	}
	if f.runtime > 0 {
		fmt.Fprintf(w, "Go-to-Python runtime no-op round trip (worker BenchmarkRoundTrip/runtime-noop): %.1f µs\n", f.runtime/1e3)
	}
	if f.rssLoadKB > 0 {
		fmt.Fprintf(w, "front-end RSS after the load: %.1f MB\n", float64(f.rssLoadKB)*1024/1e6)
	}
	fmt.Fprintln(w, "\nTargets:")
	for _, v := range verdicts(f, rs) {
		fmt.Fprintln(w, "  "+v)
	}
}

// verdicts judges the three targets; a target without its figures is n/a.
func verdicts(f reportFlags, rs []result) []string {
	return []string{throughputVerdict(f, rs), latencyVerdict(f, rs), rssVerdict(f)}
}

func throughputVerdict(f reportFlags, rs []result) string {
	const name = "c=64, batch_size 8: at least half the bare server's req/s"
	bare, ok1 := find(rs, f.bare, 64)
	b8, ok2 := find(rs, f.b8, 64)
	if !ok1 || !ok2 || bare.RPS == 0 {
		return "[n/a]    " + name
	}
	share := b8.RPS / bare.RPS
	return fmt.Sprintf("%s %s: %s %.0f req/s = %.2f x %s %.0f req/s (want >= %.2f)",
		mark(share >= minShareOfBare), name, f.b8, b8.RPS, share, f.bare, bare.RPS, minShareOfBare)
}

func latencyVerdict(f reportFlags, rs []result) string {
	const name = "c=1: p50 within 100 µs of a bare Go-to-Python round trip"
	b1, ok := find(rs, f.b1, 1)
	if !ok || f.bareEcho <= 0 {
		return "[n/a]    " + name
	}
	echo := f.bareEcho / 1e3
	over := b1.P50Micros - echo
	return fmt.Sprintf("%s %s: %s p50 %.1f µs = bare echo %.1f µs + %.1f µs (want <= +%d µs)",
		mark(over <= maxOverEchoUS), name, f.b1, b1.P50Micros, echo, over, maxOverEchoUS)
}

func rssVerdict(f reportFlags) string {
	const name = "front-end RSS idle with three models under 30 MB"
	if f.rssKB <= 0 {
		return "[n/a]    " + name
	}
	mb := float64(f.rssKB) * 1024 / 1e6
	return fmt.Sprintf("%s %s: %.1f MB (%.1f MiB)", mark(mb < maxIdleRSSMB), name, mb, float64(f.rssKB)/1024)
}

// cpuCell prints one process's CPU µs per request, or "-".
func cpuCell(cpu map[string]float64, name string) string {
	v, ok := cpu[name]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

func mark(ok bool) string {
	if ok {
		return "[MET]   "
	}
	return "[MISSED]"
}

// find returns the result of label at concurrency c.
func find(rs []result, label string, c int) (result, bool) {
	for _, r := range rs {
		if r.Label == label && r.Concurrency == c {
			return r, true
		}
	}
	return result{}, false
}
