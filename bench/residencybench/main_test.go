package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParseArgs(t *testing.T) {
	var stderr bytes.Buffer
	cfg, err := parseArgs([]string{"-loads", "3", "-copies", "4", "-fit", "1", "-duration", "2s", "-residence", "0s, 5s"}, &stderr)
	if err != nil || cfg.loads != 3 || cfg.copies != 4 || cfg.fit != 1 || cfg.duration != 2*time.Second ||
		len(cfg.residences) != 2 || cfg.residences[0] != 0 || cfg.residences[1] != 5*time.Second {
		t.Errorf("parseArgs = %+v, %v", cfg, err)
	}
	for _, bad := range [][]string{{"-loads", "0"}, {"-copies", "2", "-fit", "2"}, {"-fit", "0"}, {"-duration", "10ms"},
		{"-residence", "1500ms"}, {"-residence", "2s,x"}, {"extra"}} {
		if _, err := parseArgs(bad, &stderr); err == nil {
			t.Errorf("parseArgs(%q) accepted", bad)
		}
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 10; i >= 1; i-- {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for p, want := range map[float64]time.Duration{50: 5 * time.Millisecond, 90: 9 * time.Millisecond, 99: 10 * time.Millisecond, 100: 10 * time.Millisecond, 1: time.Millisecond} {
		if got := percentile(d, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if percentile(nil, 50) != 0 {
		t.Error("the percentile of nothing is not 0")
	}
}

func TestSumSeries(t *testing.T) {
	text := []byte(`# HELP switchyard_model_evictions_total Times.
# TYPE switchyard_model_evictions_total counter
switchyard_model_evictions_total{model="m1",reason="memory"} 4
switchyard_model_evictions_total{model="m2",reason="memory"} 3
switchyard_model_evictions_totally 100
switchyard_model_loads_total{model="m1"} 7
`)
	if got := sumSeries(text, "switchyard_model_evictions_total"); got != 7 {
		t.Errorf("evictions = %v, want 7", got)
	}
	if got := sumSeries(text, "switchyard_model_loads_total"); got != 7 {
		t.Errorf("loads = %v, want 7", got)
	}
}

func TestCopyModel(t *testing.T) {
	src, store := t.TempDir(), t.TempDir()
	files := map[string]string{"model.py": "x = 1\n", "serving.properties": "engine=Python\nbatch_size=8"}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(src, "testdata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := copyModel(src, store, "m1", "minWorkers=1", "required_memory_mb=300"); err != nil {
		t.Fatal(err)
	}
	props, _ := os.ReadFile(filepath.Join(store, "m1", "serving.properties"))
	if string(props) != "engine=Python\nbatch_size=8\nminWorkers=1\nrequired_memory_mb=300\n" {
		t.Errorf("serving.properties = %q", props)
	}
	if _, err := os.Stat(filepath.Join(store, "m1", "model.py")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(store, "m1", "testdata")); err == nil {
		t.Error("a folder was copied")
	}
}

// TestRoundRobin runs the traffic against a fake server: every client goes
// round the models from its own start, and errors are counted apart.
func TestRoundRobin(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		model := strings.TrimPrefix(r.URL.Path, "/predictions/")
		mu.Lock()
		seen[model]++
		mu.Unlock()
		if model == "bad" {
			http.Error(w, `{"code": 507}`, http.StatusInsufficientStorage)
			return
		}
		time.Sleep(time.Millisecond)
	}))
	defer srv.Close()
	c := caller{c: srv.Client(), inference: srv.URL, management: srv.URL}
	res := roundRobin(context.Background(), c, []string{"a", "b", "bad"}, 3, 200*time.Millisecond)
	if res.requests == 0 || res.errors != seen["bad"] || len(res.latencies) != res.requests-res.errors {
		t.Errorf("result %d requests, %d errors, %d latencies; server saw %v", res.requests, res.errors, len(res.latencies), seen)
	}
	if seen["a"] == 0 || seen["b"] == 0 || seen["bad"] == 0 {
		t.Errorf("not every model was sent requests: %v", seen)
	}
	srv.CloseClientConnections()
	c.c.CloseIdleConnections()
}

func TestReport(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	r := results{
		cold: coldResult{cold: []time.Duration{ms(300), ms(500), ms(400)}, warm: []time.Duration{ms(2), ms(4), ms(3)}},
		rr: []rrResult{{name: "3 copies, 2 fit", requests: 100, errors: 0, latencies: []time.Duration{ms(10), ms(20)},
			took: 10 * time.Second, loads: 50, evictions: 48}},
	}
	var out bytes.Buffer
	r.print(&out, config{model: "langid", clients: 2, duration: 10 * time.Second})
	for _, want := range []string{"| cold | 3 | 400.0 | 500.0 | 500.0 |", "| warm | 3 | 3.0 | 4.0 | 4.0 |",
		"Cold p50 is 133 times warm p50.", "| 3 copies, 2 fit | 100 | 0 | 10.0 | 10.0 | 20.0 | 50 | 48 |"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
