package e2e

import (
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestConnectionLimits runs the server with max_connections=3 and a 1 s
// request_read_timeout: a fourth connection gets the 503 at once and is
// closed, the refusal shows in /metrics, and once the read timeout has
// closed the silent connections the listener serves again.
func TestConnectionLimits(t *testing.T) {
	s := StartServer(t, Options{Config: map[string]string{"max_connections": "3", "request_read_timeout": "1"}})
	addr := strings.TrimPrefix(s.Inference, "http://")
	var held []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	waitFor(t, 5*time.Second, func() bool {
		_, body := s.Get(s.Management + "/metrics")
		return strings.Contains(string(body), `switchyard_connections_open{listener="inference"} 3`)
	})

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	got, err := io.ReadAll(c)
	if err != nil || !strings.HasPrefix(string(got), "HTTP/1.1 503 ") || !strings.Contains(string(got), `"code":503`) {
		t.Fatalf("past the cap: %q, %v", got, err)
	}
	if _, body := s.Get(s.Management + "/metrics"); !strings.Contains(string(body), `switchyard_connections_refused_total{listener="inference"} 1`) {
		t.Errorf("/metrics has no refusal:\n%s", grepLines(string(body), "switchyard_connections"))
	}

	for _, h := range held {
		_ = h.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadAll(h); err != nil {
			t.Errorf("a silent connection outlived request_read_timeout: %v", err)
		}
	}
	waitFor(t, 5*time.Second, func() bool {
		code, _ := s.Get(s.Inference + "/ping")
		return code == 200
	})
}

// waitFor polls cond until it holds, failing the test after limit.
func waitFor(t *testing.T, limit time.Duration, cond func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); !cond(); {
		if time.Now().After(end) {
			t.Fatalf("not within %v", limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
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
