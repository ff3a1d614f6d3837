package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
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
var errUsage = errors.New("chatbench: usage")

// config holds the command line.
type config struct {
	url, model, question string
	tokens, runs, per    int
	levels               []int
	timeout              time.Duration
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
	b := &bench{cfg: cfg, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: cfg.timeout}}
	defer b.client.CloseIdleConnections()
	if err := b.all(ctx, stdout); err != nil {
		fmt.Fprintf(stderr, "chatbench: %v\n", err)
		return 1
	}
	return 0
}

func parseArgs(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("chatbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.url, "url", "http://127.0.0.1:8080", "base URL of the inference listener")
	fs.StringVar(&cfg.model, "model", "chat", "model name")
	fs.StringVar(&cfg.question, "question", "What does cruft mean?", "the user message")
	fs.IntVar(&cfg.tokens, "tokens", 200, "max_tokens of every request")
	fs.IntVar(&cfg.runs, "runs", 5, "runs of each time-to-first-byte measurement")
	fs.IntVar(&cfg.per, "requests", 2, "streams each client sends at a concurrency level")
	fs.DurationVar(&cfg.timeout, "timeout", 5*time.Minute, "limit of one request")
	levels := fs.String("concurrency", "1,8", "comma-separated concurrency levels")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	var err error
	if cfg.levels, err = parseLevels(*levels); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 || cfg.tokens < 1 || cfg.runs < 1 || cfg.per < 1 || cfg.model == "" {
		return cfg, fmt.Errorf("%w: -tokens, -runs and -requests must be positive, -model set, and no arguments given", errUsage)
	}
	cfg.url = strings.TrimSuffix(cfg.url, "/")
	return cfg, nil
}

// parseLevels reads "1,8" into positive numbers.
func parseLevels(s string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 || n > 1024 {
			return nil, fmt.Errorf("%w: -concurrency %q: want numbers from 1 to 1024", errUsage, s)
		}
		out = append(out, n)
	}
	return out, nil
}
