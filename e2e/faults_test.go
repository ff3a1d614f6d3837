package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// clientTimeout is every fault test request's own timeout: a guard that
// turns a request nobody answers into a failure instead of a hang, far above
// what an answer takes. It stays below the default predict_timeout (120 s),
// so that a request answered only because the predict timeout fired shows
// as a missing answer, and below the 120 s handlers of the shutdown tests.
const clientTimeout = time.Minute

// TestFaultsWorkerKilledUnderLoad SIGKILLs one of two workers while 200
// requests run at concurrency 16: every request gets exactly one answer
// (200, or a 5xx naming the signal), the server restarts the worker after
// the first step of its backoff (its log says so: the wall clock of a
// loaded machine would not), the worker is back, and the requests after
// that succeed.
func TestFaultsWorkerKilledUnderLoad(t *testing.T) {
	store := t.TempDir()
	faultModel(t, store, "victim", []string{"minWorkers=2", "maxWorkers=2"}, nil)
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(faultWait, api.StatusHealthy, "victim")
	before := s.live("victim")

	var done atomic.Int64
	victim := before[0]
	killed := make(chan time.Time, 1)
	result := make(chan []outcome, 1)
	go func() {
		result <- load(s, "victim", 200, 16, clientTimeout, func(int) {
			if done.Add(1) == 50 {
				_ = syscall.Kill(victim, syscall.SIGKILL)
				killed <- time.Now()
			}
		}, "X-Sleep", "0.05")
	}()
	at := <-killed
	back := testutil.Poll(faultWait, func() bool {
		pids := s.live("victim")
		return len(pids) == 2 && !slices.Contains(pids, victim)
	})
	recovery := time.Since(at)
	outs := <-result
	sum := newTally(outs)
	t.Logf("SIGKILL of worker %d after 50 answers: %s; errors %v; worker back %v after the kill",
		victim, sum, sum.messages, recovery.Round(time.Millisecond))
	checkAllAnswered(t, outs)
	if !back {
		t.Errorf("the killed worker was not replaced within %v", faultWait)
	}
	checkRestart(t, s, "victim", victim)
	after := load(s, "victim", 20, 4, clientTimeout, nil)
	if sum := newTally(after); sum.codes[http.StatusOK] != 20 {
		t.Errorf("requests after the recovery: %s %v", sum, sum.messages)
	}
}

// checkRestart checks the server's log for one restart of model's worker
// pid, which died of SIGKILL: a single "worker died; restarting" record,
// naming the signal, with the first, shortest step of the restart backoff
// (1 s; the log writes durations in seconds).
func checkRestart(t *testing.T, s *Server, model string, pid int) {
	t.Helper()
	recs := s.records("worker died; restarting", model)
	if len(recs) != 1 {
		t.Fatalf("%d restarts of %s logged, want 1: %v", len(recs), model, recs)
	}
	err, _ := recs[0]["error"].(string)
	if backoff := recs[0]["backoff"]; backoff != 1.0 || !strings.Contains(err, "signal: killed") || !strings.Contains(err, strconv.Itoa(pid)) {
		t.Errorf("restart of worker %d logged as %v, want its SIGKILL and a backoff of 1 s", pid, recs[0])
	}
}

// checkAllAnswered checks that every request got an HTTP answer before its
// timeout: a 200, or a 5xx with a message.
func checkAllAnswered(t *testing.T, outs []outcome) {
	t.Helper()
	for i, o := range outs {
		switch {
		case o.err != nil:
			t.Errorf("request %d: no answer (%v) after %v", i, o.err, o.took)
		case o.code == http.StatusOK:
		case o.code >= 500 && o.message != "":
		default:
			t.Errorf("request %d: %d %q", i, o.code, o.message)
		}
	}
}

// TestFaultsPredictTimeout sends a request whose handler sleeps past
// option.predict_timeout: the client gets an error at the timeout (the
// error of the timer that fired, and never before the 2 s it is set to),
// and the next request succeeds on a fresh worker.
func TestFaultsPredictTimeout(t *testing.T) {
	store := t.TempDir()
	faultModel(t, store, "sleepy", []string{"minWorkers=1", "maxWorkers=1", "option.predict_timeout=2"}, nil)
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(faultWait, api.StatusHealthy, "sleepy")
	old := s.live("sleepy")[0]
	c := &http.Client{}
	stuck := invoke(c, s, "sleepy", clientTimeout, "X-Sleep", "60")
	t.Logf("handler sleeping 60 s with predict_timeout=2: %d %q after %v", stuck.code, stuck.message, stuck.took.Round(time.Millisecond))
	if stuck.err != nil || stuck.code < 500 || !strings.Contains(stuck.message, "did not answer within 2s") {
		t.Fatalf("stuck request: %+v", stuck)
	}
	if stuck.took < 2*time.Second {
		t.Errorf("answered after %v, before the 2 s predict timeout", stuck.took)
	}
	next := invoke(c, s, "sleepy", clientTimeout)
	t.Logf("next request: %d from worker %s (the timed-out one was %d)", next.code, next.pid, old)
	if next.code != http.StatusOK || next.pid == "" || next.pid == strconv.Itoa(old) {
		t.Errorf("next request: %+v", next)
	}
	testutil.WaitFor(t, faultWait, "timed-out worker gone", func() bool { return testutil.ProcessGone(old) })
}

// TestFaultsImportError serves a model whose model.py raises at import next
// to a healthy one: the broken one is FAILED after retry_threshold (3)
// starts with the traceback's last line in its record, /ping says 500 and
// shows both, the healthy one answers throughout, and a scale after the fix
// clears FAILED.
func TestFaultsImportError(t *testing.T) {
	store := t.TempDir()
	faultModel(t, store, "healthy", nil, nil)
	broken := WriteModel(t, store, "broken", map[string]string{"model.py": brokenSource})
	began := time.Now()
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(faultWait, api.StatusHealthy, "healthy")
	c := &http.Client{}
	var during []outcome
	testutil.WaitFor(t, faultWait, "broken FAILED", func() bool {
		during = append(during, invoke(c, s, "healthy", clientTimeout))
		return s.Describe("broken").Status == api.StatusFailed
	})
	t.Logf("broken FAILED %v after the server started, after %d starts; healthy meanwhile: %s",
		time.Since(began).Round(time.Millisecond), s.started("broken"), newTally(during))
	if n := s.started("broken"); n != 3 {
		t.Errorf("broken started %d times, want retry_threshold = 3", n)
	}
	if sum := newTally(during); sum.codes[http.StatusOK] != sum.sent {
		t.Errorf("the healthy model while the other failed: %s %v", sum, sum.messages)
	}
	rec := s.Describe("broken")
	if !strings.Contains(rec.LastError, brokenLine) {
		t.Errorf("lastError does not hold %q:\n%s", brokenLine, rec.LastError)
	}
	code, ping := s.ping(t)
	t.Logf("/ping: %d %+v", code, ping)
	if code != http.StatusInternalServerError || ping["broken"].Status != api.StatusFailed || ping["broken"].Error == "" ||
		ping["healthy"].Status != api.StatusHealthy {
		t.Errorf("/ping = %d %+v", code, ping)
	}
	if code, body := s.Do(http.MethodPost, s.Inference+"/predictions/broken", "", []byte("x")); code != http.StatusServiceUnavailable {
		t.Errorf("request to the FAILED model: %d %s", code, body)
	}

	mustWrite(t, filepath.Join(broken, "model.py"), faultSource)
	if code, body := s.Do(http.MethodPut, s.Management+"/models/broken?min_worker=1", "", nil); code != http.StatusOK {
		t.Fatalf("scale after the fix: %d %s", code, body)
	}
	if rec := s.Describe("broken"); rec.Status != api.StatusHealthy || rec.LastError != "" {
		t.Errorf("after the fix and a scale: %+v", rec)
	}
	if code, _ := s.ping(t); code != http.StatusOK {
		t.Errorf("/ping after the fix = %d", code)
	}
}

// TestFaultsRegisterOutsideRoots registers urls that lead out of the model
// store and the allowed roots: each is refused with 400, while a model of an
// allowed root outside the store registers.
func TestFaultsRegisterOutsideRoots(t *testing.T) {
	base := t.TempDir()
	store, extra, outside := filepath.Join(base, "store"), filepath.Join(base, "extra"), filepath.Join(base, "outside")
	for _, d := range []string{store, extra, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	faultModel(t, outside, "secret", []string{"minWorkers=0"}, nil)
	faultModel(t, extra, "shared", []string{"minWorkers=0"}, nil)
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(store, "link")); err != nil {
		t.Fatal(err)
	}
	s := StartServer(t, Options{Store: store, Models: "NONE", Config: map[string]string{"allowed_model_roots": store + "," + extra}})
	tests := []struct {
		name, query string
		want        int
	}{
		{"dot-dot", "url=../outside/secret", 400},
		{"dot-dot deep", "url=link/../../outside/secret&model_name=deep", 400},
		{"encoded dot-dot", "url=%2e%2e%2foutside%2fsecret&model_name=enc", 400},
		{"absolute", "url=" + filepath.Join(outside, "secret"), 400},
		{"file url", "url=file://" + filepath.Join(outside, "secret") + "&model_name=f", 400},
		{"symlink out", "url=link", 400},
		{"system folder", "url=/etc&model_name=etc", 400},
		{"bad name", "url=" + filepath.Join(extra, "shared") + "&model_name=a%20b", 400},
		{"long name", "url=" + filepath.Join(extra, "shared") + "&model_name=" + strings.Repeat("n", 65), 400},
		{"missing inside", "url=nothing", 404},
		{"allowed root", "url=" + filepath.Join(extra, "shared"), 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, body := s.Do(http.MethodPost, s.Management+"/models?"+tt.query, "", nil)
			if code != tt.want || (code >= 400 && !strings.Contains(string(body), `"message"`)) {
				t.Errorf("POST /models?%s = %d %s, want %d", tt.query, code, body, tt.want)
			}
		})
	}
	_, body := s.Get(s.Management + "/models")
	if strings.Contains(string(body), "secret") || !strings.Contains(string(body), "shared") {
		t.Errorf("models after the refusals: %s", body)
	}
}

// TestFaultsQueueDeadlineHeader queues a request with X-Request-Timeout-Ms
// behind a busy worker: it is answered 503 when its deadline passes (not
// before), while the worker is still busy, and the model serves on. The
// busy request waits at the probe's gate, which opens only once the late
// request has its answer, so "while the worker is still busy" is an order
// of events that no slow machine can turn round.
func TestFaultsQueueDeadlineHeader(t *testing.T) {
	store := t.TempDir()
	dir := probeModel(t, store, "queued", "minWorkers=1", "maxWorkers=1")
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(faultWait, api.StatusHealthy, "queued")
	g := newGates(t, dir, "go")
	c := newClient(2)
	busy := async(func() reply { return probeCall(c, s, "queued", "busy", "go") })
	waitSeen(t, dir, "busy")
	late := send(c, http.MethodPost, s.Inference+"/predictions/queued", []byte(`{}`),
		"Content-Type", "application/json", "x-probe-tag", "late", "X-Request-Timeout-Ms", "300")
	e, err := late.problem()
	t.Logf("request with X-Request-Timeout-Ms: 300 behind a held one: %d %q after %v", late.code, e.Message, late.took.Round(time.Millisecond))
	if len(busy) != 0 {
		t.Fatal("the busy request ended first; the test proves nothing")
	}
	if late.code != http.StatusServiceUnavailable || err != nil || !strings.Contains(e.Message, "expired") {
		t.Errorf("the late request: %d %s %v", late.code, late.body, err)
	}
	if late.took < 300*time.Millisecond { // a lower bound: no slow machine breaks it
		t.Errorf("the late request expired after %v, before its 300 ms deadline", late.took)
	}
	g.open("go")
	if a, err := collect(t, busy, 1)[0].probe(); err != nil || a.Tag != "busy" {
		t.Errorf("the busy request: %+v, %v", a, err)
	}
	if a, err := probeCall(c, s, "queued", "after", "").probe(); err != nil || a.Tag != "after" {
		t.Errorf("a request after the expired one: %+v, %v", a, err)
	}
}
