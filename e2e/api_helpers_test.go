package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/internal/testutil"
)

// probeSource is the handler the API tests copy into their model folders.
const probeSource = "testdata/models/probe/model.py"

// waitLimit bounds every wait for a condition in the API tests; it is a
// ceiling for a slow machine, never the thing a test measures.
const waitLimit = 60 * time.Second

// probeModel writes a probe model folder called name into store, with
// engine=Python and the given serving.properties lines, and returns its path.
func probeModel(t testing.TB, store, name string, props ...string) string {
	t.Helper()
	src, err := os.ReadFile(probeSource)
	if err != nil {
		t.Fatal(err)
	}
	lines := append([]string{"engine=Python", "option.entryPoint=model.py"}, props...)
	return WriteModel(t, store, name, map[string]string{
		"model.py":           string(src),
		"serving.properties": strings.Join(lines, "\n") + "\n",
	})
}

// probeAnswer is the probe handler's JSON answer.
type probeAnswer struct {
	Model     string `json:"model"`
	Tag       string `json:"tag"`
	BatchSize int    `json:"batch_size"`
	Call      int    `json:"call"`
	PID       int    `json:"pid"`
}

// errorBody is the JSON body of every error answer.
type errorBody struct {
	Code    int    `json:"code"`
	Type    string `json:"type"`
	Message string `json:"message"`
}

// reply is one HTTP answer as a goroutine collects it.
type reply struct {
	tag    string
	code   int
	header http.Header
	body   []byte
	took   time.Duration
	err    error
}

// probe decodes the answer as the probe handler's.
func (r reply) probe() (probeAnswer, error) {
	var a probeAnswer
	if r.err != nil {
		return a, r.err
	}
	if r.code != http.StatusOK {
		return a, fmt.Errorf("status %d: %s", r.code, r.body)
	}
	err := json.Unmarshal(r.body, &a)
	return a, err
}

// problem decodes an error answer strictly: exactly the three fields, and
// a code equal to the HTTP status.
func (r reply) problem() (errorBody, error) {
	var e errorBody
	if r.err != nil {
		return e, r.err
	}
	d := json.NewDecoder(bytes.NewReader(r.body))
	d.DisallowUnknownFields()
	if err := d.Decode(&e); err != nil {
		return e, fmt.Errorf("error body %s: %w", r.body, err)
	}
	if e.Code != r.code || e.Type == "" || e.Message == "" {
		return e, fmt.Errorf("error body %s does not match status %d", r.body, r.code)
	}
	return e, nil
}

// newClient returns an HTTP client that keeps up to conns idle
// connections per host, so concurrent test requests reuse them.
func newClient(conns int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = conns
	return &http.Client{Transport: tr, Timeout: 3 * time.Minute}
}

// send makes one request and never touches a testing.T, so goroutines may
// call it. headers are name, value pairs.
func send(c *http.Client, method, url string, body []byte, headers ...string) reply {
	req, err := http.NewRequestWithContext(context.Background(), method, url, bytes.NewReader(body))
	if err != nil {
		return reply{err: err}
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	start := time.Now()
	resp, err := c.Do(req)
	if err != nil {
		return reply{err: err, took: time.Since(start)}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return reply{code: resp.StatusCode, header: resp.Header, body: b, took: time.Since(start), err: err}
}

// probeCall sends an empty JSON request tagged tag to model's predictions
// route; a non-empty gate holds the worker until openGate(gate).
func probeCall(c *http.Client, s *Server, model, tag, gate string) reply {
	h := []string{"Content-Type", "application/json", "x-probe-tag", tag}
	if gate != "" {
		h = append(h, "x-probe-gate", gate)
	}
	r := send(c, http.MethodPost, s.Inference+"/predictions/"+model, []byte(`{}`), h...)
	r.tag = tag
	return r
}

// async runs calls in goroutines and returns the channel their replies
// arrive on; wait with collect.
func async(calls ...func() reply) <-chan reply {
	out := make(chan reply, len(calls))
	for _, call := range calls {
		go func() { out <- call() }()
	}
	return out
}

// collect receives n replies from ch.
func collect(t testing.TB, ch <-chan reply, n int) []reply {
	t.Helper()
	got := make([]reply, 0, n)
	timeout := time.After(3 * time.Minute)
	for len(got) < n {
		select {
		case r := <-ch:
			got = append(got, r)
		case <-timeout:
			t.Fatalf("only %d of %d replies arrived", len(got), n)
		}
	}
	return got
}

// seen returns the tags the probe in dir has recorded, in order.
func seen(dir string) []string {
	b, err := os.ReadFile(filepath.Join(dir, "seen.log"))
	if err != nil {
		return nil
	}
	return strings.Fields(string(b))
}

// waitSeen waits until the probe in dir has recorded tag.
func waitSeen(t testing.TB, dir, tag string) {
	t.Helper()
	testutil.WaitFor(t, waitLimit, "probe records "+tag, func() bool { return slices.Contains(seen(dir), tag) })
}

// holdWorker makes the only worker of the probe model in dir busy and
// full: a request it runs, which waits at the probe's gate "go" (tagged
// blocker), and one it holds behind it (held: switchyard sends a worker
// its next batch while it runs one), so that what comes next waits in the
// queue. The two replies come on the channel returned once the gate opens.
func holdWorker(t testing.TB, c *http.Client, s *Server, dir, model string) <-chan reply {
	t.Helper()
	sent := dispatched(s, model)
	replies := make(chan reply, 2)
	go func() { replies <- probeCall(c, s, model, "blocker", "go") }()
	waitSeen(t, dir, "blocker")
	go func() { replies <- probeCall(c, s, model, "held", "") }()
	testutil.WaitFor(t, waitLimit, "two batches sent to "+model, func() bool { return dispatched(s, model) == sent+2 })
	return replies
}

// dispatched returns how many batches model's workers have been sent (the
// count of switchyard_batch_size_requests; 0 before the first).
func dispatched(s *Server, model string) int {
	v, _ := sample(s.scrape(), fmt.Sprintf(`switchyard_batch_size_requests_count{model=%q}`, model))
	n, _ := strconv.Atoi(v)
	return n
}

// waitQueued waits until model's queue holds n requests.
func waitQueued(t testing.TB, s *Server, model string, n int) {
	t.Helper()
	testutil.WaitFor(t, waitLimit, fmt.Sprintf("%d requests queued for %s", n, model), func() bool {
		return s.Describe(model).RequestInQueue == n
	})
}

// gates opens the probe's gate files in dir; the zero value is not usable,
// use newGates, which also opens every gate when the test ends so that no
// worker is left waiting.
type gates struct {
	t   testing.TB
	dir string
}

func newGates(t testing.TB, dir string, names ...string) *gates {
	g := &gates{t: t, dir: dir}
	t.Cleanup(func() {
		for _, n := range names {
			g.open(n)
		}
	})
	return g
}

// open creates the gate file name, letting every request held on it go.
func (g *gates) open(name string) {
	if err := os.WriteFile(filepath.Join(g.dir, name), nil, 0o644); err != nil {
		g.t.Error(err)
	}
}

// scrape returns the text of GET /metrics.
func (s *Server) scrape() string {
	s.t.Helper()
	code, body := s.Get(s.Management + "/metrics")
	if code != http.StatusOK {
		s.t.Fatalf("GET /metrics: %d %s", code, body)
	}
	return string(body)
}

// sample returns the value of the series whose line starts with series
// (name and labels as the text format writes them), and whether it is there.
func sample(scrape, series string) (string, bool) {
	for line := range strings.Lines(scrape) {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			return strings.TrimSpace(rest), true
		}
	}
	return "", false
}
