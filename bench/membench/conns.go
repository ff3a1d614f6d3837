package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchyard/switchyard/bench/internal/benchserver"
)

// connResult is what the connection mode found: the RSS with the idle
// connections open and after they closed, and how many the server refused.
type connResult struct {
	idle, open, closed, peak int64 // bytes
	opened, refused          int
	openTook, refusalTook    time.Duration // opening them all; one more, from dial to close
}

// measureConns starts the server (with max_connections when cfg.maxConns
// is set), opens cfg.conns connections to its inference listener that send
// nothing, and reads its RSS before, with them open and after they closed.
func measureConns(ctx context.Context, cfg config, logw io.Writer) (*connResult, error) {
	keys := map[string]string{
		"model_store":       filepath.Dir(cfg.model),
		"load_models":       "echo=" + cfg.model,
		"python_executable": cfg.python,
	}
	if cfg.maxConns > 0 {
		keys["max_connections"] = fmt.Sprint(cfg.maxConns)
	}
	srv, err := benchserver.Start(ctx, cfg.bin, keys, 60*time.Second)
	if err != nil {
		return nil, err
	}
	defer srv.Stop()
	u, err := url.Parse(srv.Inference)
	if err != nil {
		return nil, err
	}
	return connReadings(ctx, srv.Pid(), u.Host, cfg, logw)
}

func connReadings(ctx context.Context, pid int, addr string, cfg config, logw io.Writer) (*connResult, error) {
	if err := sleep(ctx, cfg.idle); err != nil {
		return nil, err
	}
	r := &connResult{}
	var err error
	if r.idle, err = readStatus(pid, "VmRSS"); err != nil {
		return nil, err
	}
	start := time.Now()
	conns, err := openConns(addr, cfg.conns, cfg.partial)
	defer closeAll(conns)
	if err != nil {
		return nil, err
	}
	r.openTook = time.Since(start)
	fmt.Fprintf(logw, "%d connections opened in %v\n", len(conns), r.openTook.Round(time.Millisecond))
	if err := sleep(ctx, 2*time.Second); err != nil {
		return nil, err
	}
	if r.open, err = readStatus(pid, "VmRSS"); err != nil {
		return nil, err
	}
	r.opened, r.refused = refusals(conns)
	if r.refused > 0 {
		if r.refusalTook, err = probe(addr); err != nil {
			return nil, err
		}
	}
	closeAll(conns)
	if err := sleep(ctx, 5*time.Second); err != nil {
		return nil, err
	}
	if r.closed, err = readStatus(pid, "VmRSS"); err != nil {
		return nil, err
	}
	r.peak, err = readStatus(pid, "VmHWM")
	return r, err
}

// partialRequest is what each connection sends with -partial: a request
// line and one header, and never the rest, so that the server holds the
// connection in its HTTP/1 reader rather than waiting for its first bytes.
const partialRequest = "POST /predictions/echo HTTP/1.1\r\nHost: membench\r\n"

// openConns opens n connections to addr, each sending nothing or, with
// partial, partialRequest.
func openConns(addr string, n int, partial bool) ([]net.Conn, error) {
	conns := make([]net.Conn, 0, n)
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			return conns, fmt.Errorf("connection %d: %w", len(conns)+1, err)
		}
		conns = append(conns, c)
		if partial {
			_, _ = io.WriteString(c, partialRequest)
		}
	}
	return conns, nil
}

// refusals counts the connections still open and those the server
// answered 503.
func refusals(conns []net.Conn) (open, refused int) {
	buf := make([]byte, 12)
	for _, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(time.Millisecond))
		n, err := io.ReadFull(c, buf)
		switch {
		case n == len(buf) && string(buf) == "HTTP/1.1 503":
			refused++
		case errors.Is(err, os.ErrDeadlineExceeded):
			open++
		}
	}
	return open, refused
}

// probe opens one more connection and returns how long the server took
// to answer it and close it.
func probe(addr string) (time.Duration, error) {
	start := time.Now()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := io.ReadAll(c)
	if err != nil || !strings.HasPrefix(string(b), "HTTP/1.1 503") {
		return 0, fmt.Errorf("one connection past the cap: %q, %v", b, err)
	}
	return time.Since(start), nil
}

func closeAll(conns []net.Conn) {
	for _, c := range conns {
		_ = c.Close()
	}
}

// print writes the connection mode's report.
func (r *connResult) print(w io.Writer, cfg config) {
	limit := "no max_connections"
	if cfg.maxConns > 0 {
		limit = fmt.Sprintf("max_connections=%d", cfg.maxConns)
	}
	what := "that send nothing"
	if cfg.partial {
		what = "that send half a request"
	}
	fmt.Fprintf(w, "front-end RSS, %d connections %s, %s\n\n", cfg.conns, what, limit)
	fmt.Fprintf(w, "| when | RSS (MB) |\n|---|---:|\n")
	fmt.Fprintf(w, "| idle, before | %.1f |\n", mb(r.idle))
	fmt.Fprintf(w, "| connections open (2 s after the last) | %.1f |\n", mb(r.open))
	fmt.Fprintf(w, "| 5 s after they closed | %.1f |\n", mb(r.closed))
	fmt.Fprintf(w, "| peak (VmHWM) | %.1f |\n", mb(r.peak))
	fmt.Fprintf(w, "\nheld open: %d, refused with a 503: %d; opening all took %v\n", r.opened, r.refused, r.openTook.Round(time.Millisecond))
	if r.refused > 0 {
		fmt.Fprintf(w, "one more connection: 503 and closed in %v\n", r.refusalTook.Round(10*time.Microsecond))
	}
	fmt.Fprintf(w, "with the connections open: +%.1f MB over idle\n", mb(r.open-r.idle))
}
