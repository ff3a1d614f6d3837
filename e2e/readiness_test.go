package e2e

import (
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
)

// pingSeen is one /ping answer and what it said about one model.
type pingSeen struct {
	code   int
	status string
}

// watchPing reads /ping until it answers 200 or limit passes, and returns
// every answer it saw, the last one first seen with 200.
func watchPing(t *testing.T, s *Server, model string, limit time.Duration) []pingSeen {
	t.Helper()
	var seen []pingSeen
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		code, ping := s.ping(t)
		seen = append(seen, pingSeen{code, ping[model].Status})
		if code == http.StatusOK {
			return seen
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("/ping never answered 200 within %v: %v", limit, summarize(seen))
	return nil
}

// summarize turns a run of /ping answers into "503 PENDING ×12, 200 Healthy ×1".
func summarize(seen []pingSeen) string {
	var parts []string
	for i := 0; i < len(seen); {
		j := i
		for j < len(seen) && seen[j] == seen[i] {
			j++
		}
		parts = append(parts, fmt.Sprintf("%d %s ×%d", seen[i].code, seen[i].status, j-i))
		i = j
	}
	return strings.Join(parts, ", ")
}

// TestReadinessStartupLoad starts a server whose only model loads until the
// test lets it (HOLD, then OPEN): /ping answers 503 (the model PENDING)
// during the load and 200 (Healthy) after it, and a request sent during the
// load waits in the model's queue and is answered 200 once the model is
// ready.
func TestReadinessStartupLoad(t *testing.T) {
	store := t.TempDir()
	dir := faultModel(t, store, "slow", []string{"minWorkers=1", "maxWorkers=1"}, map[string]string{"HOLD": ""})
	t.Cleanup(func() { mustWrite(t, filepath.Join(dir, "OPEN"), "") })
	s := StartServer(t, Options{Store: store})
	code, ping := s.ping(t)
	if code != http.StatusServiceUnavailable || ping["slow"].Status != api.StatusPending {
		t.Fatalf("first /ping during the load: %d %+v, want 503 with slow PENDING", code, ping)
	}
	early := make(chan outcome, 1)
	go func() { early <- invoke(&http.Client{}, s, "slow", clientTimeout) }()
	waitQueued(t, s, "slow", 1)
	if code, ping := s.ping(t); code != http.StatusServiceUnavailable || ping["slow"].Status != api.StatusPending {
		t.Fatalf("/ping with a request queued during the load: %d %+v, want 503 with slow PENDING", code, ping)
	}
	began := time.Now()
	mustWrite(t, filepath.Join(dir, "OPEN"), "") // the load ends only now
	seen := watchPing(t, s, "slow", faultWait)
	out := <-early
	t.Logf("/ping after the load was let go (%v): %s; the request sent during the load: %d after %v",
		time.Since(began).Round(time.Millisecond), summarize(seen), out.code, out.took.Round(time.Millisecond))
	for _, p := range seen[:len(seen)-1] {
		if p != (pingSeen{http.StatusServiceUnavailable, api.StatusPending}) {
			t.Errorf("/ping during the load answered %d with the model %s, want 503 PENDING", p.code, p.status)
		}
	}
	if last := seen[len(seen)-1]; last.status != api.StatusHealthy {
		t.Errorf("/ping 200 with the model %s, want Healthy", last.status)
	}
	if out.err != nil || out.code != http.StatusOK {
		t.Errorf("the request sent during the load: %+v, want 200", out)
	}
}

// TestReadinessNoWait checks DJL's wait_model_loading=false: /ping answers
// 200 while a startup model loads (PENDING), and allow_multi_status=true
// turns that into 207.
func TestReadinessNoWait(t *testing.T) {
	for _, tc := range []struct {
		name   string
		config map[string]string
		code   int
	}{
		{"wait_model_loading=false", map[string]string{"wait_model_loading": "false"}, http.StatusOK},
		{"with allow_multi_status=true", map[string]string{"wait_model_loading": "false", "allow_multi_status": "true"}, http.StatusMultiStatus},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := t.TempDir()
			held := WriteModel(t, store, "held", map[string]string{"model.py": heldSource})
			t.Cleanup(func() { mustWrite(t, held+"/OPEN", "") })
			s := StartServer(t, Options{Store: store, Config: tc.config})
			code, ping := s.ping(t)
			if code != tc.code || ping["held"].Status != api.StatusPending {
				t.Errorf("/ping while the startup model loads: %d %+v, want %d with held PENDING", code, ping, tc.code)
			}
		})
	}
}
