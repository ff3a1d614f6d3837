package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// promtool is Debian's (package prometheus); the metrics test is skipped
// without it.
const promtool = "/usr/bin/promtool"

// metricFamilies are the switchyard_ families a scrape after traffic must
// hold, with their types.
var metricFamilies = []struct{ name, kind string }{
	{"switchyard_requests_total", "counter"},
	{"switchyard_request_duration_seconds", "histogram"},
	{"switchyard_queue_wait_seconds", "histogram"},
	{"switchyard_queue_depth_requests", "gauge"},
	{"switchyard_requests_waiting", "gauge"},
	{"switchyard_requests_in_flight", "gauge"},
	{"switchyard_batch_size_requests", "histogram"},
	{"switchyard_worker_processes", "gauge"},
	{"switchyard_worker_restarts_total", "counter"},
	{"switchyard_connections_open", "gauge"},
	{"switchyard_connections_refused_total", "counter"},
}

// TestAPIMetrics sends known traffic (one request alone, one held behind
// it, six more in three batches of two, one to an unknown model), kills the
// worker once, waits
// for its restart, sends one more request, and then checks a /metrics
// scrape: promtool accepts it and the series hold the traffic's figures.
func TestAPIMetrics(t *testing.T) {
	if _, err := os.Stat(promtool); err != nil {
		t.Skip(promtool + " is not installed (Debian package prometheus)")
	}
	store := t.TempDir()
	dir := probeModel(t, store, "m", "batch_size=2", "max_batch_delay=20", "minWorkers=1", "maxWorkers=1")
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(waitLimit, api.StatusHealthy, "m")
	batchedTraffic(t, s, dir)
	if r := probeCall(newClient(1), s, "nope", "lost", ""); r.code != http.StatusNotFound {
		t.Fatalf("unknown model: %d %s", r.code, r.body)
	}
	restartWorker(t, s, "m")
	if _, err := probeCall(newClient(1), s, "m", "last", "").probe(); err != nil {
		t.Fatalf("request after the restart: %v", err)
	}
	// The worker turns READY again just after its answer has gone out.
	testutil.WaitFor(t, waitLimit, "the worker is idle", func() bool {
		ws := s.Describe("m").WorkerGroups[0].Workers
		return len(ws) == 1 && ws[0].Status == "READY"
	})
	scrape := s.scrape()
	checkPromtool(t, scrape)
	for _, f := range metricFamilies {
		if !strings.Contains(scrape, "# TYPE "+f.name+" "+f.kind+"\n") {
			t.Errorf("the scrape has no %s %s", f.kind, f.name)
		}
	}
	checkSamples(t, scrape, map[string]float64{
		`switchyard_requests_total{code="200",model="m"}`:                   9,
		`switchyard_request_duration_seconds_count{model="m"}`:              9,
		`switchyard_queue_wait_seconds_count{model="m"}`:                    9,
		`switchyard_batch_size_requests_count{model="m"}`:                   6,
		`switchyard_batch_size_requests_sum{model="m"}`:                     9,
		`switchyard_queue_depth_requests{model="m"}`:                        0,
		`switchyard_requests_waiting`:                                       0,
		`switchyard_requests_in_flight{model="m"}`:                          0,
		`switchyard_worker_processes{device="cpu",model="m",state="READY"}`: 1,
		`switchyard_worker_restarts_total{model="m"}`:                       1,
	})
	if strings.Contains(scrape, `model="nope"`) {
		t.Error("a request to an unknown model minted series for it")
	}
}

// batchedTraffic holds the worker with two requests (one it runs, one it
// holds behind it), queues six more and lets them go: the worker takes
// them in three batches of two.
func batchedTraffic(t *testing.T, s *Server, dir string) {
	t.Helper()
	g := newGates(t, dir, "go")
	c := newClient(8)
	first := holdWorker(t, c, s, dir, "m")
	calls := make([]func() reply, 6)
	for i := range calls {
		tag := fmt.Sprintf("b%d", i)
		calls[i] = func() reply { return probeCall(c, s, "m", tag, "") }
	}
	rest := async(calls...)
	waitQueued(t, s, "m", 6)
	g.open("go")
	for _, r := range append(collect(t, first, 2), collect(t, rest, 6)...) {
		if _, err := r.probe(); err != nil {
			t.Fatalf("%s: %v", r.tag, err)
		}
	}
}

// restartWorker kills model's only worker (a grandchild of this test,
// started by the server under test) and waits until a new one is READY.
func restartWorker(t *testing.T, s *Server, model string) {
	t.Helper()
	old := s.WorkerPIDs(model)
	if len(old) != 1 {
		t.Fatalf("want one worker, have %v", old)
	}
	if err := syscall.Kill(old[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, waitLimit, "the worker is restarted", func() bool {
		ws := s.Describe(model).WorkerGroups[0].Workers
		return len(ws) == 1 && ws[0].Status == "READY" && ws[0].PID != 0 && !slices.Contains(old, ws[0].PID)
	})
}

// checkPromtool runs promtool check metrics on the scrape.
func checkPromtool(t *testing.T, scrape string) {
	t.Helper()
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(scrape)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out.String())
	}
}

// checkSamples compares series values with want.
func checkSamples(t *testing.T, scrape string, want map[string]float64) {
	t.Helper()
	for series, v := range want {
		text, ok := sample(scrape, series)
		if !ok {
			t.Errorf("no series %s in the scrape", series)
			continue
		}
		if got, err := strconv.ParseFloat(text, 64); err != nil || got != v {
			t.Errorf("%s = %s, want %v", series, text, v)
		}
	}
}
