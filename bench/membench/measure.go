package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strconv"
	"time"

	"github.com/switchyard/switchyard/bench/internal/benchserver"
)

// sample is one RSS reading, taken at a time after the last answer.
type sample struct {
	at  time.Duration
	rss int64 // bytes
}

// result is what one measurement found.
type result struct {
	idle    int64    // RSS before the large requests
	peak    int64    // VmHWM after the watch: the highest RSS of the process
	samples []sample // RSS after the last answer
	took    []time.Duration
}

// measure starts the server, takes the readings and stops it.
func measure(ctx context.Context, cfg config, logw io.Writer) (*result, error) {
	srv, err := benchserver.Start(ctx, cfg.bin, map[string]string{
		"model_store":       filepath.Dir(cfg.model),
		"load_models":       "echo=" + cfg.model,
		"python_executable": cfg.python,
		"max_request_size":  strconv.FormatInt(max(cfg.size, 64<<20), 10),
	}, 60*time.Second)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	return readings(ctx, srv, cfg, logw)
}

// readings takes the idle reading, sends the large requests and samples
// the RSS after the last answer.
func readings(ctx context.Context, s *benchserver.Server, cfg config, logw io.Writer) (*result, error) {
	pid := s.Pid()
	if err := sleep(ctx, cfg.idle); err != nil {
		return nil, err
	}
	res := &result{}
	var err error
	if res.idle, err = readStatus(pid, "VmRSS"); err != nil {
		return nil, err
	}
	body := make([]byte, cfg.size)
	rng := rand.NewChaCha8([32]byte{1})
	_, _ = rng.Read(body)
	for i := range cfg.requests {
		t0 := time.Now()
		if err := echo(ctx, s.Inference, body); err != nil {
			return nil, fmt.Errorf("request %d: %w", i+1, err)
		}
		res.took = append(res.took, time.Since(t0))
		fmt.Fprintf(logw, "request %d of %d bytes answered in %v\n", i+1, len(body), res.took[i].Round(time.Millisecond))
	}
	if res.samples, err = watch(ctx, pid, cfg.watch, cfg.every); err != nil {
		return nil, err
	}
	res.peak, err = readStatus(pid, "VmHWM")
	return res, err
}

// echo sends body to the echo model of the server at base and checks that
// it comes back whole.
func echo(ctx context.Context, base string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/predictions/echo", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/octet-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	switch {
	case err != nil:
		return err
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("status %d: %.300s", resp.StatusCode, got)
	case !bytes.Equal(got, body):
		return fmt.Errorf("the answer (%d bytes) is not the request (%d bytes)", len(got), len(body))
	}
	return nil
}

// watch samples the RSS of pid every interval for d.
func watch(ctx context.Context, pid int, d, every time.Duration) ([]sample, error) {
	start := time.Now()
	var out []sample
	for {
		at := time.Since(start)
		rss, err := readStatus(pid, "VmRSS")
		if err != nil {
			return nil, err
		}
		out = append(out, sample{at: at, rss: rss})
		if at >= d {
			return out, nil
		}
		if err := sleep(ctx, min(every, d-at)); err != nil {
			return nil, err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
