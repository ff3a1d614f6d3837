package e2e

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// heldSource is a model.py whose import waits until a file OPEN appears in
// its folder (at most two minutes): the model stays PENDING until then.
const heldSource = `import os
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
_deadline = time.monotonic() + 120
while not os.path.exists(os.path.join(_HERE, "OPEN")) and time.monotonic() < _deadline:
    time.sleep(0.01)


def handle(inputs):
    return None
`

// TestAPIGolden compares GET /models (whole, and in pages), GET
// /models/{name} and GET /ping from a real server with the golden files in
// testdata/golden: three probe models that load (READY, Healthy), one whose
// import fails (FAILED) and one registered later whose import is held
// (PENDING). Values that differ from run to run (pids, start times, socket
// numbers, resident memory, the store's path, a traceback) are checked for
// their form and then replaced by placeholders.
func TestAPIGolden(t *testing.T) {
	store := t.TempDir()
	probeModel(t, store, "alpha", "batch_size=2", "max_batch_delay=50", "job_queue_size=10", "minWorkers=1", "maxWorkers=2")
	probeModel(t, store, "beta", "minWorkers=1", "maxWorkers=1")
	probeModel(t, store, "gamma", "minWorkers=0", "maxWorkers=1", "max_idle_time=30")
	WriteModel(t, store, "delta", map[string]string{"model.py": brokenSource})
	held := WriteModel(t, store, "epsilon", map[string]string{"model.py": heldSource})
	t.Cleanup(func() { mustWrite(t, filepath.Join(held, "OPEN"), "") })
	s := StartServer(t, Options{Store: store, Models: "alpha,beta,gamma,delta", Config: map[string]string{"retry_threshold": "1"}})
	s.WaitStatus(waitLimit, api.StatusHealthy, "alpha", "beta", "gamma")
	s.WaitStatus(waitLimit, api.StatusFailed, "delta")
	if code, body := s.Do(http.MethodPost, s.Management+"/models?url=epsilon&synchronous=false", "", nil); code != http.StatusAccepted {
		t.Fatalf("register epsilon: %d %s", code, body)
	}
	real, err := filepath.EvalSymlinks(store)
	if err != nil {
		t.Fatal(err)
	}
	n := normalizer{store: real, sockets: regexp.MustCompile("^" + regexp.QuoteMeta(s.SocketDir) + `/switchyard\.sock\.\d+$`)}
	for _, tc := range []struct {
		file, path string
		code       int
	}{
		{"models.json", "/models", http.StatusOK},
		{"models_limit2.json", "/models?limit=2", http.StatusOK},
		{"models_page2.json", "/models?limit=2&next_page_token=2", http.StatusOK},
		{"describe_alpha.json", "/models/alpha", http.StatusOK},
		{"describe_gamma.json", "/models/gamma", http.StatusOK},
		{"describe_delta.json", "/models/delta", http.StatusOK},
		{"ping.json", "/ping", http.StatusInternalServerError},
	} {
		t.Run(tc.file, func(t *testing.T) {
			base := s.Management
			if tc.path == "/ping" {
				base = s.Inference
			}
			code, body := s.Get(base + tc.path)
			if code != tc.code {
				t.Fatalf("GET %s: %d %s, want %d", tc.path, code, body, tc.code)
			}
			checkGolden(t, tc.file, n.normalize(t, body))
		})
	}
}

// normalizer replaces the values of an answer that change between runs.
type normalizer struct {
	store   string         // the model store's real path
	sockets *regexp.Regexp // the form of a worker's socket path
}

// normalize parses body, replaces volatile values and indents it again
// (object keys come out sorted).
func (n normalizer) normalize(t *testing.T, body []byte) []byte {
	t.Helper()
	var v any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, body)
	}
	var out bytes.Buffer
	e := json.NewEncoder(&out)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if err := e.Encode(n.walk(t, "", v)); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func (n normalizer) walk(t *testing.T, key string, v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			x[k] = n.walk(t, k, e)
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = n.walk(t, "", e)
		}
		return x
	}
	return n.value(t, key, v)
}

// value checks and replaces one volatile field; others pass unchanged.
func (n normalizer) value(t *testing.T, key string, v any) any {
	t.Helper()
	s := fmt.Sprint(v)
	var ok bool
	switch key {
	case "pid", "rssMiB":
		ok = positive(s)
	case "startTime", "lastUsed", "time":
		_, err := time.Parse(time.RFC3339Nano, s)
		ok = err == nil
	case "socket":
		ok = n.sockets.MatchString(s)
	case "lastError", "error":
		ok = strings.Contains(s, brokenLine) || strings.Contains(s, "exit status 1")
	case "modelUrl":
		rest, found := strings.CutPrefix(s, n.store+"/")
		if !found {
			t.Errorf("modelUrl = %q is not in the model store %s", s, n.store)
		}
		return "<store>/" + rest
	default:
		return v
	}
	if !ok {
		t.Errorf("%s = %q has not the expected form", key, s)
	}
	return "<" + key + ">"
}

func positive(s string) bool {
	var n int64
	_, err := fmt.Sscan(s, &n)
	return err == nil && n > 0
}

// checkGolden compares got with testdata/golden/file, or rewrites the file
// with -update.
func checkGolden(t *testing.T, file string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", file)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking the diff)\ngot:\n%s\nwant:\n%s", path, got, want)
	}
}
