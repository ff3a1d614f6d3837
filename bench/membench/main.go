package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks a mistake in the command line.
var errUsage = errors.New("membench: usage")

// config holds the command line.
type config struct {
	bin, python, model string
	size               int64
	requests           int
	conns, maxConns    int  // the connection mode: idle connections to open; max_connections
	partial            bool // the connection mode: each connection sends half a request
	idle, watch, every time.Duration
	targetMB           float64
}

// run measures and prints; it returns the exit code: 0, 2 for a usage
// error, 1 for a failed measurement. A missed target is not a failure: the
// report says MET or MISSED.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var res interface{ print(io.Writer, config) }
	if cfg.conns > 0 {
		res, err = measureConns(ctx, cfg, stderr)
	} else {
		res, err = measure(ctx, cfg, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "membench: %v\n", err)
		return 1
	}
	res.print(stdout, cfg)
	return 0
}

func parseArgs(args []string, stderr io.Writer) (config, error) {
	cfg := config{size: 64 << 20}
	fs := flag.NewFlagSet("membench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.bin, "bin", "bin/switchyard", "the switchyard binary to start")
	fs.StringVar(&cfg.python, "python", ".venv/bin/python", "the workers' interpreter")
	fs.StringVar(&cfg.model, "model", "bench/models/echo", "the echo model's folder")
	fs.Func("size", "request body `SIZE` in bytes, or with KiB/MiB (default 64MiB)", func(s string) error {
		n, err := parseSize(s)
		cfg.size = n
		return err
	})
	fs.IntVar(&cfg.requests, "requests", 1, "large requests to send, one after the other")
	fs.IntVar(&cfg.conns, "conns", 0, "instead of large requests, open this many connections that send nothing")
	fs.IntVar(&cfg.maxConns, "max-connections", 0, "the server's max_connections (0: no cap)")
	fs.BoolVar(&cfg.partial, "partial", false, "with -conns: each connection sends a request line and a header, and no more")
	fs.DurationVar(&cfg.idle, "idle", 5*time.Second, "idle time before the first RSS reading")
	fs.DurationVar(&cfg.watch, "watch", 30*time.Second, "how long to sample the RSS after the last answer")
	fs.DurationVar(&cfg.every, "every", 250*time.Millisecond, "sampling interval")
	fs.Float64Var(&cfg.targetMB, "target", 40, "RSS target in MB (10^6 bytes)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return cfg, err
		}
		return cfg, fmt.Errorf("%w: %w", errUsage, err)
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case cfg.requests < 1 || cfg.every <= 0 || cfg.watch < cfg.every:
		return cfg, fmt.Errorf("%w: -requests must be at least 1 and -watch at least -every", errUsage)
	case cfg.conns < 0 || cfg.maxConns < 0:
		return cfg, fmt.Errorf("%w: -conns and -max-connections may not be negative", errUsage)
	}
	var err error
	if cfg.model, err = filepath.Abs(cfg.model); err != nil {
		return cfg, err
	}
	cfg.bin, err = filepath.Abs(cfg.bin)
	return cfg, err
}

// parseSize reads a byte count: digits, optionally followed by KiB or MiB.
func parseSize(s string) (int64, error) {
	mult := int64(1)
	for suffix, m := range map[string]int64{"KiB": 1 << 10, "MiB": 1 << 20} {
		if rest, ok := strings.CutSuffix(s, suffix); ok {
			s, mult = rest, m
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("size %q is not a positive number of bytes, KiB or MiB", s)
	}
	return n * mult, nil
}
