package rig

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSample(t *testing.T) {
	for line, want := range map[string]struct {
		model string
		value float64
	}{
		`switchyard_model_loads_total{model="model-a"} 3`:                         {"model-a", 3},
		`switchyard_model_evictions_total{model="model-b",reason="memory"} 12`:    {"model-b", 12},
		`switchyard_model_evictions_total{reason="memory",model="model-c"} 1e+02`: {"model-c", 100},
	} {
		m, v, ok := sample(line)
		if !ok || m != want.model || v != want.value {
			t.Errorf("sample(%q) = %q, %v, %v; want %q, %v", line, m, v, ok, want.model, want.value)
		}
	}
	if _, _, ok := sample(`switchyard_model_loads_total 3`); ok {
		t.Error("a line without a model label was read")
	}
}

func TestRetries(t *testing.T) {
	log := filepath.Join(t.TempDir(), "haproxy.log")
	lines := `127.0.0.1:1 [27/Nov/2026:04:58:28.880] inference switchyard/sy1 0/0/0/1544/1544 200 196 - - ---- 4/4/3/1/0 0/0 "POST /predictions/model-a HTTP/1.1"
127.0.0.1:2 [27/Nov/2026:04:58:28.880] inference switchyard/sy2 0/0/1/5/6 200 196 - - ---- 4/4/3/1/1 0/0 "POST /predictions/model-b HTTP/1.1"
127.0.0.1:3 [27/Nov/2026:04:58:28.880] inference switchyard/sy3 0/0/1/5/6 200 196 - - ---- 4/4/3/1/+2 0/0 "POST /invocations HTTP/1.1"
[WARNING]  (3080) : Server switchyard/sy1 is DOWN, reason: Layer4 connection problem
`
	if err := os.WriteFile(log, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	retried, redispatched := retries(t, log)
	if retried != 2 || redispatched != 1 {
		t.Errorf("retries = %d, %d; want 2, 1", retried, redispatched)
	}
}
