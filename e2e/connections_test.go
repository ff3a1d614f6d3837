package e2e

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/internal/testutil"
)

// hangGuard bounds a wait for an event that must come; it only catches a
// hang, and measures nothing.
const hangGuard = 2 * time.Minute

// TestConnectionLimits runs the server with max_connections=3: a fourth
// connection gets the 503 at once and is closed, the refusal shows in
// /metrics, and once a held connection goes the listener serves again.
func TestConnectionLimits(t *testing.T) {
	s := StartServer(t, Options{Config: map[string]string{"max_connections": "3"}})
	addr := strings.TrimPrefix(s.Inference, "http://")
	// The harness's client keeps its /ping connection alive: let it go
	// first, so that the three below are the only ones.
	http.DefaultClient.CloseIdleConnections()
	openConns(t, s, 0)
	held := dialN(t, addr, 3)
	openConns(t, s, 3)

	c := dialN(t, addr, 1)[0]
	_ = c.SetReadDeadline(time.Now().Add(hangGuard))
	got, err := io.ReadAll(c)
	if err != nil || !strings.HasPrefix(string(got), "HTTP/1.1 503 ") || !strings.Contains(string(got), `"code":503`) {
		t.Fatalf("past the cap: %q, %v", got, err)
	}
	if _, body := s.Get(s.Management + "/metrics"); !strings.Contains(string(body), `switchyard_connections_refused_total{listener="inference"} 1`) {
		t.Errorf("/metrics has no refusal:\n%s", grepLines(string(body), "switchyard_connections"))
	}

	_ = held[0].Close()
	testutil.WaitFor(t, hangGuard, "served again", func() bool {
		code, _ := s.Get(s.Inference + "/ping")
		return code == 200
	})
}

// TestRequestReadTimeout: with request_read_timeout=1 the server closes
// connections that send nothing, and one that sent half a request, after
// about a second (the guard only catches a server that never does).
func TestRequestReadTimeout(t *testing.T) {
	s := StartServer(t, Options{Config: map[string]string{"request_read_timeout": "1"}})
	addr := strings.TrimPrefix(s.Inference, "http://")
	conns := dialN(t, addr, 2)
	if _, err := conns[1].Write([]byte("POST /invocations HTTP/1.1\r\nHost: x\r\n")); err != nil {
		t.Fatal(err)
	}
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(hangGuard))
		if _, err := io.ReadAll(c); err != nil {
			t.Errorf("connection %d was not closed by request_read_timeout: %v", i, err)
		}
	}
}

// openConns waits until the inference listener counts n connections open.
func openConns(t *testing.T, s *Server, n int) {
	t.Helper()
	want := fmt.Sprintf(`switchyard_connections_open{listener="inference"} %d`, n)
	var last string
	if !testutil.Poll(hangGuard, func() bool {
		_, body := s.Get(s.Management + "/metrics")
		last = grepLines(string(body), "switchyard_connections")
		return strings.Contains(last, want)
	}) {
		t.Fatalf("not %d connections open within %v:\n%s", n, hangGuard, last)
	}
}

// dialN opens n connections to addr, closed when the test ends.
func dialN(t *testing.T, addr string, n int) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		conns = append(conns, c)
	}
	return conns
}

// grepLines returns the lines of text that contain sub.
func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
