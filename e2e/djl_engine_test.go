package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/djlsrc"
)

// TestDJLEngine serves a DJL-style model folder through switchyard with DJL
// Serving's own Python engine (djl_python_engine.py and its djl_python, read
// from DJL's source into a temporary folder) as python_engine: the workers
// start with DJL 0.36's command line and speak its wire protocol, and a
// single request, a dynamic batch of four and a handler error (424) are
// answered as with switchyard's own engine. It skips where DJL's source is
// not at hand (CI).
func TestDJLEngine(t *testing.T) {
	needE2E(t)
	repo := djlsrc.Repo(t)
	setup := djlsrc.Extract(t, repo, "engines/python/setup", t.TempDir())
	engine := filepath.Join(setup, "djl_python_engine.py")
	store := t.TempDir()
	src, err := os.ReadFile(probeSource)
	if err != nil {
		t.Fatal(err)
	}
	dir := WriteModel(t, store, "djl", map[string]string{
		"model.py":           string(src),
		"serving.properties": "engine=Python\nbatch_size=4\nmax_batch_delay=100\nminWorkers=1\nmaxWorkers=1\n",
	})
	s := StartServer(t, Options{Store: store, Config: map[string]string{"python_engine": engine}})
	s.WaitStatus(waitLimit, api.StatusHealthy, "djl")
	t.Logf("DJL %s: %s", djlsrc.Head(t, repo), workerArgs(t, s))
	c := newClient(8)

	single, err := probeCall(c, s, "djl", "one", "").probe()
	if err != nil || single.BatchSize != 1 || single.Tag != "one" {
		t.Fatalf("single request through DJL's engine: %+v, %v", single, err)
	}
	checkDJLBatch(t, s, c, dir)
	r := send(c, http.MethodPost, s.Inference+"/predictions/djl", []byte(`{}`), "Content-Type", "application/json", "x-probe-fail", "1")
	if p, err := r.problem(); err != nil || r.code != http.StatusFailedDependency {
		t.Errorf("handler error through DJL's engine: %d %s (%v), want 424", r.code, r.body, err)
	} else {
		t.Logf("handler error: %d %s: %q", r.code, p.Type, p.Message)
	}
}

// checkDJLBatch holds the only worker with two requests (one it runs, one
// DJL's engine holds in its socket behind it: the engine takes frames one
// after another), queues four more, and checks that they reach the handler
// as one batch of four.
func checkDJLBatch(t *testing.T, s *Server, c *http.Client, dir string) {
	t.Helper()
	g := newGates(t, dir, "go")
	held := holdWorker(t, c, s, dir, "djl")
	tags := []string{"b0", "b1", "b2", "b3"}
	var calls []func() reply
	for _, tag := range tags {
		calls = append(calls, func() reply { return probeCall(c, s, "djl", tag, "") })
	}
	batch := async(calls...)
	waitQueued(t, s, "djl", len(tags))
	g.open("go")
	for _, r := range collect(t, held, 2) {
		if a, err := r.probe(); err != nil || a.Tag != r.tag {
			t.Fatalf("the request %s: %+v, %v", r.tag, a, err)
		}
	}
	seenCalls := map[int]bool{}
	var got []string
	for _, r := range collect(t, batch, len(tags)) {
		a, err := r.probe()
		if err != nil || a.BatchSize != len(tags) {
			t.Errorf("batched request %s: %+v, %v; want a batch of %d", r.tag, a, err, len(tags))
		}
		seenCalls[a.Call] = true
		got = append(got, a.Tag)
	}
	slices.Sort(got)
	if !slices.Equal(got, tags) || len(seenCalls) != 1 {
		t.Errorf("batch answers %v from %d handler calls, want %v from one", got, len(seenCalls), tags)
	}
}

// workerArgs returns the argument list the server logged for its first
// worker, checking DJL's flags are in it.
func workerArgs(t *testing.T, s *Server) string {
	t.Helper()
	for _, line := range strings.Split(s.Log(), "\n") {
		if !strings.Contains(line, `"msg":"worker started"`) {
			continue
		}
		for _, want := range []string{`"--entry-point","model.py"`, `"--recommended-entry-point",""`, `"--no-async-mode"`} {
			if !strings.Contains(line, want) {
				t.Errorf("worker command line lacks %s: %s", want, line)
			}
		}
		return line
	}
	t.Fatalf("no worker started line in the log")
	return ""
}
