package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
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

// server is the switchyard process under measurement.
type server struct {
	cmd       *exec.Cmd
	inference string
	exited    chan struct{}
}

// measure starts the server, takes the readings and stops it.
func measure(ctx context.Context, cfg config, logw io.Writer) (*result, error) {
	dir, err := os.MkdirTemp("", "membench")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	srv, err := start(cfg, dir)
	if err != nil {
		return nil, err
	}
	defer srv.stop()
	if err := srv.waitReady(ctx, 60*time.Second); err != nil {
		return nil, fmt.Errorf("%w (log: %s)", err, tail(filepath.Join(dir, "server.log")))
	}
	return srv.readings(ctx, cfg, logw)
}

// start writes a config for the echo model and starts the server.
func start(cfg config, dir string) (*server, error) {
	inf, err := freeAddr()
	if err != nil {
		return nil, err
	}
	mgmt, err := freeAddr()
	if err != nil {
		return nil, err
	}
	conf := fmt.Sprintf("inference_address=http://%s\nmanagement_address=http://%s\n"+
		"model_store=%s\nload_models=echo=%s\nsocket_dir=%s\npython_executable=%s\nmax_request_size=%d\n",
		inf, mgmt, filepath.Dir(cfg.model), cfg.model, dir, cfg.python, max(cfg.size, 64<<20))
	path := filepath.Join(dir, "config.properties")
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		return nil, err
	}
	logf, err := os.Create(filepath.Join(dir, "server.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(cfg.bin, "serve", "--config", path)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd, inference: "http://" + inf, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.exited) }()
	return s, nil
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitReady waits until /ping answers 200 (the echo model is loaded).
func (s *server) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("switchyard exited at start")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		resp, err := http.Get(s.inference + "/ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return fmt.Errorf("switchyard not ready within %v", limit)
}

// stop ends the server with SIGTERM and waits for it.
func (s *server) stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// readings takes the idle reading, sends the large requests and samples
// the RSS after the last answer.
func (s *server) readings(ctx context.Context, cfg config, logw io.Writer) (*result, error) {
	pid := s.cmd.Process.Pid
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
		if err := s.echo(ctx, body); err != nil {
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

// echo sends body to the echo model and checks that it comes back whole.
func (s *server) echo(ctx context.Context, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.inference+"/predictions/echo", bytes.NewReader(body))
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

// tail returns the last part of the file at path, for error messages.
func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
