package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
)

// runFlags are run's settings.
type runFlags struct {
	label   string
	levels  []int
	plan    plan
	target  target
	hello   bool
	procs   int
	helloEx string // the binary that serves -hello; this one by default
	round   int    // the round of the benchmark, carried into the results
	meters  meters // what is measured besides latency
}

// meters says what a cell measures besides requests and latency.
type meters struct {
	cpu      []watched // processes whose CPU time is measured
	syscalls []watched // processes whose system calls are counted (perf)
	metrics  string    // a /metrics URL whose Go allocation counters are read
}

// runCmd measures one target at each concurrency level.
func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseRun(args, stderr)
	if err != nil {
		return err
	}
	if f.procs > 0 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(f.procs))
	}
	if f.hello {
		h, err := startHello(ctx, f.helloEx)
		if err != nil {
			return err
		}
		defer h.stop()
		f.target.url = "http://" + h.addr + "/"
		f.meters.cpu = append(f.meters.cpu, watched{name: "server", pid: h.cmd.Process.Pid})
	}
	f.meters.cpu = append(f.meters.cpu, watched{name: "loadgen", pid: os.Getpid()})
	return measureAll(ctx, f, stdout, stderr)
}

// measureAll runs one cell per level, writing each result as it comes.
func measureAll(ctx context.Context, f runFlags, stdout, stderr io.Writer) error {
	l, err := newLoader(f.target, slicesMax(f.levels))
	if err != nil {
		return err
	}
	defer l.close()
	enc := json.NewEncoder(stdout)
	for _, c := range f.levels {
		p := f.plan
		p.concurrency = c
		r, err := l.measure(ctx, p, f.meters)
		if err != nil {
			return err
		}
		r.Label, r.Concurrency, r.Round = f.label, c, f.round
		fmt.Fprintf(stderr, "%-10s c=%-3d %9.0f req/s  p50 %8.1f µs  p99 %8.1f µs  errors %d  cpu µs/req %v%s%s %s\n",
			r.Label, c, r.RPS, r.P50Micros, r.P99Micros, r.Errors, cpuText(r.CPU), allocText(r), syscallText(r), r.FirstError)
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// allocText prints a cell's allocations per request, if measured.
func allocText(r result) string {
	if r.Allocs == 0 && r.AllocBytes == 0 {
		return ""
	}
	return fmt.Sprintf("  allocs/req %.1f (%.0f B)", r.Allocs, r.AllocBytes)
}

// syscallText prints a cell's system calls per request, if counted.
func syscallText(r result) string {
	if len(r.Syscalls) == 0 {
		return ""
	}
	return "  syscalls/req " + cpuText(r.Syscalls)
}

// cpuText prints per-process figures in a stable order.
func cpuText(cpu map[string]float64) string {
	names := make([]string, 0, len(cpu))
	for n := range cpu {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "%s=%.1f ", n, cpu[n])
	}
	return strings.TrimSpace(b.String())
}

func slicesMax(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// parseRun reads run's command line.
func parseRun(args []string, stderr io.Writer) (runFlags, error) {
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.StringVar(&f.label, "label", "", "name of the target in the results (default: the URL's path, or bare)")
	levels := fs.String("c", "1,8,64", "concurrency levels, comma-separated")
	fs.DurationVar(&f.plan.duration, "d", 5*time.Second, "length of each measured phase")
	fs.DurationVar(&f.plan.warmup, "warmup", time.Second, "warm-up before each measured phase")
	fs.IntVar(&f.plan.requests, "n", 0, "measure this many requests per level instead of -d")
	fs.StringVar(&f.target.method, "method", "POST", "request method")
	body := fs.String("body", "{}", "request body")
	fs.Func("H", "request header 'Name: value' (repeatable)", func(s string) error {
		h, err := parseHeader(s)
		f.target.headers = append(f.target.headers, h)
		return err
	})
	fs.BoolVar(&f.hello, "hello", false, "start a bare fasthttp hello server in a subprocess and load it instead of URL")
	fs.IntVar(&f.procs, "procs", 0, "GOMAXPROCS for the load generator itself (0: leave it)")
	fs.Func("cpu", "name=pid of a process whose CPU time per request is reported (repeatable)", func(s string) error {
		w, err := parseWatch(s)
		f.meters.cpu = append(f.meters.cpu, w)
		return err
	})
	fs.Func("syscalls", "name=pid of a process whose system calls per request are counted with perf (repeatable)", func(s string) error {
		w, err := parseWatch(s)
		f.meters.syscalls = append(f.meters.syscalls, w)
		return err
	})
	fs.StringVar(&f.meters.metrics, "metrics", "", "the server's /metrics URL: report its Go allocations per request")
	fs.IntVar(&f.round, "round", 0, "the benchmark round this run belongs to, carried into the results")
	if err := parseFlags(fs, args, stderr); err != nil {
		return f, err
	}
	return f, f.finish(fs, *levels, *body)
}

// finish checks the flags and fills in the defaults.
func (f *runFlags) finish(fs *flag.FlagSet, levels, body string) error {
	var err error
	if f.levels, err = parseLevels(levels); err != nil {
		return err
	}
	f.target.body = []byte(body)
	switch {
	case f.hello && fs.NArg() == 0:
		f.label = orDefault(f.label, "bare")
		f.helloEx, err = os.Executable()
		return err
	case !f.hello && fs.NArg() == 1:
		f.target.url = fs.Arg(0)
		f.label = orDefault(f.label, labelOf(f.target.url))
		return nil
	}
	return fmt.Errorf("%w: run takes one URL, or -hello and none", errUsage)
}

// orDefault returns a unless it is empty, else b.
func orDefault(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// labelOf names a target by the last element of its URL's path.
func labelOf(u string) string {
	u, _, _ = strings.Cut(u, "?")
	u = strings.TrimRight(u, "/")
	return u[strings.LastIndexByte(u, '/')+1:]
}

// parseLevels reads a comma-separated list of concurrency levels, each
// between 1 and 4096.
func parseLevels(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 1 || n > 4096 {
			return nil, fmt.Errorf("%w: concurrency level %q is not a number from 1 to 4096", errUsage, part)
		}
		out = append(out, n)
	}
	return out, nil
}

// parseHeader reads "Name: value".
func parseHeader(s string) (header, error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") || strings.ContainsAny(value, "\r\n") {
		return header{}, fmt.Errorf("%w: header %q is not 'Name: value'", errUsage, s)
	}
	return header{name: name, value: strings.TrimSpace(value)}, nil
}
