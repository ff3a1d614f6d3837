package frontend

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/switchyard/switchyard/frontend/dialect"
)

// dial opens a raw connection to addr that the test closes at its end.
func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// readAll reads c until it is closed, failing the test when that takes
// longer than within.
func readAll(t *testing.T, c net.Conn, within time.Duration) string {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(within))
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatalf("connection still open after %v: %v (read %q)", within, err, b)
	}
	return string(b)
}

// TestMaxConnections fills each listener's cap with connections that send
// nothing; the next connection gets a 503 at once and is closed, without
// the server reading it. Once one closes, a new connection is served.
func TestMaxConnections(t *testing.T) {
	for _, shared := range []bool{false, true} {
		ts := startServer(t, newFake("m"), func(c *Config) {
			c.MaxConnections = 2
			if shared {
				c.ManagementAddr = c.InferenceAddr
			}
		})
		for _, addr := range []string{ts.InferenceAddr(), ts.ManagementAddr()} {
			name := planeName(ts.listenerAt(addr).planes)
			open := ts.met.conns.open.WithLabelValues(name)
			refused := ts.met.conns.refused.WithLabelValues(name)
			before := testutil.ToFloat64(refused)
			idle := []net.Conn{dial(t, addr), dial(t, addr)}
			eventually(t, func() bool { return testutil.ToFloat64(open) == 2 })

			// The guard is far below the 60 s read timeout: an answer
			// within it was not waiting for a request.
			over := dial(t, addr)
			got := readAll(t, over, 10*time.Second)
			if !strings.HasPrefix(got, "HTTP/1.1 503 ") || !strings.Contains(got, "Connection: close\r\n") ||
				!strings.Contains(got, `"type":"ServiceUnavailableException"`) {
				t.Errorf("%s: past the cap got %q", name, got)
			}
			if n := testutil.ToFloat64(refused) - before; n != 1 {
				t.Errorf("%s: %v connections refused, want 1", name, n)
			}

			_ = idle[0].Close()
			eventually(t, func() bool { return testutil.ToFloat64(open) == 1 })
			ping(t, addr, ts.listenerAt(addr).planes)
			_ = idle[1].Close()
			eventually(t, func() bool { return testutil.ToFloat64(open) == 0 })
		}
	}
}

// ping sends GET /ping (GET /models to a management listener) on a fresh
// connection to addr and wants a 200.
func ping(t *testing.T, addr string, planes dialect.Plane) {
	t.Helper()
	path := "/ping"
	if planes&dialect.Inference == 0 {
		path = "/models"
	}
	c := dial(t, addr)
	_, _ = io.WriteString(c, "GET "+path+" HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("GET %s on %s: %v", path, addr, err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET %s on %s = %d", path, addr, resp.StatusCode)
	}
}

// TestNoCapCountsConnections checks that without a cap connections are
// still counted, and none is refused.
func TestNoCapCountsConnections(t *testing.T) {
	ts := startServer(t, newFake("m"))
	open := ts.met.conns.open.WithLabelValues("inference")
	for range 5 {
		dial(t, ts.InferenceAddr())
	}
	eventually(t, func() bool { return testutil.ToFloat64(open) == 5 })
	if n := testutil.ToFloat64(ts.met.conns.refused.WithLabelValues("inference")); n != 0 {
		t.Errorf("%v refused without a cap", n)
	}
}

// TestReadTimeout: a connection that sends nothing, or half a request, is
// closed after ReadTimeout; the half request gets a 408 first (a silent
// one too where fasthttp reads it; the inference listener's split, which
// waits for the first bytes, closes it without a word). The timeout is a
// second, so that the half request is written before it runs out even on a
// loaded machine.
func TestReadTimeout(t *testing.T) {
	ts := startServer(t, newFake("m"), func(c *Config) { c.ReadTimeout = time.Second })
	for _, addr := range []string{ts.InferenceAddr(), ts.ManagementAddr()} {
		silent := dial(t, addr)
		if got := readAll(t, silent, 10*time.Second); got != "" && !strings.HasPrefix(got, "HTTP/1.1 408 ") {
			t.Errorf("%s: a silent connection got %q", addr, got)
		}
		half := dial(t, addr)
		_, _ = io.WriteString(half, "POST /predictions/m HTTP/1.1\r\nHost: x\r\n")
		if got := readAll(t, half, 10*time.Second); !strings.HasPrefix(got, "HTTP/1.1 408 ") {
			t.Errorf("%s: half a request got %q, want a 408", addr, got)
		}
	}
}

// TestIdleTimeout: a keep-alive connection is closed IdleTimeout after its
// last answer, though ReadTimeout is longer.
func TestIdleTimeout(t *testing.T) {
	ts := startServer(t, newFake("m"), func(c *Config) {
		c.ReadTimeout = time.Minute
		c.IdleTimeout = 200 * time.Millisecond
	})
	c := dial(t, ts.InferenceAddr())
	_, _ = io.WriteString(c, "GET /ping HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	// The guard is far below the read timeout of a minute: EOF within it
	// is the idle timeout's doing.
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("idle connection: %v, want EOF", err)
	}
}

func TestConnectionConfigErrors(t *testing.T) {
	for _, cfg := range []Config{
		{MaxConnections: -1},
		{ReadTimeout: -time.Second},
		{IdleTimeout: -time.Second},
	} {
		cfg.InferenceAddr, cfg.ManagementAddr = "127.0.0.1:0", "127.0.0.1:"
		if _, err := New(cfg, newFake()); err == nil {
			t.Errorf("New(%+v) took it", cfg)
		}
	}
}

// listenerAt returns the listener bound to addr.
func (ts *testServer) listenerAt(addr string) *listener {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for _, l := range ts.listeners {
		if l.ln.Addr().String() == addr {
			return l
		}
	}
	panic("no listener at " + addr)
}
