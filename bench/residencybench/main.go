package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
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

// config holds the command line.
type config struct {
	bin, python, model, filler string
	loads, warm                int
	copies, fit, clients       int
	memMiB                     int64
	duration                   time.Duration
	residences                 []time.Duration
}

// run measures and prints; it returns the exit code: 0, 2 for a usage
// error, 1 for a failed measurement.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cfg, err := parseArgs(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	var res results
	if res.cold, err = measureCold(ctx, cfg, stderr); err == nil {
		res.rr, err = measureRoundRobin(ctx, cfg, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "residencybench: %v\n", err)
		return 1
	}
	res.print(stdout, cfg)
	return 0
}

// errUsage marks a mistake in the command line.
var errUsage = errors.New("residencybench: usage")

func parseArgs(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("residencybench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.bin, "bin", "bin/switchyard", "the switchyard `binary`")
	fs.StringVar(&cfg.python, "python", ".venv/bin/python", "the workers' `interpreter`")
	fs.StringVar(&cfg.model, "model", "examples/models/langid", "the model `folder` measured")
	fs.StringVar(&cfg.filler, "filler", "bench/models/noop-b1", "the model `folder` that evicts it in the cold-start part")
	fs.IntVar(&cfg.loads, "loads", 10, "cold starts measured")
	fs.IntVar(&cfg.warm, "warm", 20, "warm requests after each cold start")
	fs.IntVar(&cfg.copies, "copies", 3, "copies of the model in the round-robin part")
	fs.IntVar(&cfg.fit, "fit", 2, "copies that fit at once in the round-robin part")
	fs.IntVar(&cfg.clients, "clients", 2, "concurrent clients in the round-robin part")
	fs.Int64Var(&cfg.memMiB, "mem", 300, "required_memory_mb each copy declares, `MiB`")
	fs.DurationVar(&cfg.duration, "duration", 20*time.Second, "how long each round-robin run lasts")
	residences := fs.String("residence", "2s,0s", "comma `list` of min_residence_time values, one round-robin run over more than fit each (whole seconds)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	for _, r := range strings.Split(*residences, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(r))
		if err != nil || d < 0 || d%time.Second != 0 {
			return cfg, fmt.Errorf("%w: -residence: %q is not a whole number of seconds", errUsage, r)
		}
		cfg.residences = append(cfg.residences, d)
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	case cfg.loads < 1 || cfg.warm < 1 || cfg.clients < 1 || cfg.memMiB < 1:
		return cfg, fmt.Errorf("%w: -loads, -warm, -clients and -mem must be at least 1", errUsage)
	case cfg.fit < 1 || cfg.copies <= cfg.fit:
		return cfg, fmt.Errorf("%w: -copies must be more than -fit, which must be at least 1", errUsage)
	case cfg.duration < time.Second:
		return cfg, fmt.Errorf("%w: -duration must be at least 1s", errUsage)
	}
	return cfg, nil
}
