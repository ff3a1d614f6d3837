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

// TestAPIGolden compares GET /models (whole, and in pages) and GET
// /models/{name} from a real server on three probe models with the golden
// files in testdata/golden. Values that differ from run to run (pids,
// start times, socket numbers, resident memory, the store's path) are
// checked for their form and then replaced by placeholders.
func TestAPIGolden(t *testing.T) {
	store := t.TempDir()
	probeModel(t, store, "alpha", "batch_size=2", "max_batch_delay=50", "job_queue_size=10", "minWorkers=1", "maxWorkers=2")
	probeModel(t, store, "beta", "minWorkers=1", "maxWorkers=1")
	probeModel(t, store, "gamma", "minWorkers=0", "maxWorkers=1", "max_idle_time=30")
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(waitLimit, api.StatusHealthy, "alpha", "beta", "gamma")
	real, err := filepath.EvalSymlinks(store)
	if err != nil {
		t.Fatal(err)
	}
	n := normalizer{store: real, sockets: regexp.MustCompile("^" + regexp.QuoteMeta(s.SocketDir) + `/switchyard\.sock\.\d+$`)}
	for _, tc := range []struct{ file, path string }{
		{"models.json", "/models"},
		{"models_limit2.json", "/models?limit=2"},
		{"models_page2.json", "/models?limit=2&next_page_token=2"},
		{"describe_alpha.json", "/models/alpha"},
		{"describe_gamma.json", "/models/gamma"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			code, body := s.Get(s.Management + tc.path)
			if code != http.StatusOK {
				t.Fatalf("GET %s: %d %s", tc.path, code, body)
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
	case "startTime":
		_, err := time.Parse(time.RFC3339Nano, s)
		ok = err == nil
	case "socket":
		ok = n.sockets.MatchString(s)
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
