package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// TestShutdownUnderLoad sends SIGTERM while one request runs and six wait
// on a model with one worker (one held by the worker behind the one it
// runs, five queued): the queue drains, all seven are answered 200, the
// process exits 0 before the grace period ended, and no worker process or
// socket file is left. The running request waits at the probe's gate,
// which opens once the shutdown has begun, so the seven are in place when
// the signal comes however slow the machine. "Before the grace period
// ended" is the server's own verdict, not the test's clock: when the grace
// period (2 min, far above the work) ends with work left, the registry cuts
// it off (503), logs it and the process exits 1.
func TestShutdownUnderLoad(t *testing.T) {
	const grace = 2 * time.Minute
	store := t.TempDir()
	dir := probeModel(t, store, "steady", "minWorkers=1", "maxWorkers=1")
	s := StartServer(t, Options{Store: store, Config: map[string]string{"shutdown_grace_period": "120"}})
	s.WaitStatus(faultWait, api.StatusHealthy, "steady")
	pids := s.live("steady")
	g := newGates(t, dir, "go")
	c := newClient(8)
	first := holdWorker(t, c, s, dir, "steady")
	calls := make([]func() reply, 5)
	for i := range calls {
		tag := fmt.Sprintf("q%d", i)
		calls[i] = func() reply { return probeCall(c, s, "steady", tag, "") }
	}
	queued := async(calls...)
	waitQueued(t, s, "steady", 5)
	began := time.Now()
	s.Signal(syscall.SIGTERM)
	testutil.WaitFor(t, faultWait, "shutdown begun", func() bool { return strings.Contains(s.Log(), `"msg":"shutting down"`) })
	g.open("go")
	if !s.Wait(grace + faultWait) {
		t.Fatalf("the server did not exit within %v of SIGTERM", grace+faultWait)
	}
	took := time.Since(began)
	answers := append(collect(t, first, 2), collect(t, queued, 5)...)
	t.Logf("SIGTERM with 1 running and 6 queued on one worker: exited after %v (grace %v), exit code %d",
		took.Round(time.Millisecond), grace, s.exitCode())
	if code := s.exitCode(); code != 0 || strings.Contains(s.Log(), gracePeriodEnded) {
		t.Errorf("exit code %d after a graceful stop; the log says the grace period ended with work left: %v",
			code, strings.Contains(s.Log(), gracePeriodEnded))
	}
	for _, r := range answers {
		if a, err := r.probe(); err != nil || a.Tag != r.tag {
			t.Errorf("request %s: %+v, %v; want it served (200)", r.tag, a, err)
		}
	}
	checkNothingLeft(t, s, pids)
}

// gracePeriodEnded is what the server logs (in the error it stops with)
// when the shutdown grace period ended with work left.
const gracePeriodEnded = "shutdown grace period ended with work left"

// busyWorkers counts a describe record's BUSY workers.
func busyWorkers(rec api.ModelRecord) int {
	n := 0
	for _, g := range rec.WorkerGroups {
		for _, w := range g.Workers {
			if w.Status == "BUSY" {
				n++
			}
		}
	}
	return n
}

// checkNothingLeft checks that the worker processes pids and every socket
// file of the server are gone.
func checkNothingLeft(t *testing.T, s *Server, pids []int) {
	t.Helper()
	for _, p := range pids {
		if !testutil.ProcessGone(p) {
			t.Errorf("worker %d survived the server", p)
		}
	}
	if left := sockets(t, s.SocketDir); len(left) != 0 {
		t.Errorf("socket files left: %v", left)
	}
}

// TestShutdownGraceEnds sends SIGTERM while a request runs far longer than
// the grace period and another waits behind it (held by the worker, which
// has not started it): both are answered 503 when the grace period ends
// (not before: the server exits no sooner than 2 s after the signal), the
// process exits because it ended (its log says so, and it exits 1) without
// waiting for the 120 s handler, and its workers are gone.
func TestShutdownGraceEnds(t *testing.T) {
	const grace = 2 * time.Second
	store := t.TempDir()
	faultModel(t, store, "endless", []string{"minWorkers=1", "maxWorkers=1"}, nil)
	s := StartServer(t, Options{Store: store, Config: map[string]string{"shutdown_grace_period": "2"}})
	s.WaitStatus(faultWait, api.StatusHealthy, "endless")
	pids := s.live("endless")
	result := make(chan []outcome, 1)
	go func() { result <- load(s, "endless", 2, 2, clientTimeout, nil, "X-Sleep", "120") }()
	testutil.WaitFor(t, faultWait, "one request running, one held behind it", func() bool {
		return busyWorkers(s.Describe("endless")) == 1 && dispatched(s, "endless") == 2
	})
	began := time.Now()
	s.Signal(syscall.SIGTERM)
	if !s.Wait(faultWait) { // below the handler's 120 s: waiting for it counts as a hang
		t.Fatalf("the server did not exit within %v of SIGTERM", faultWait)
	}
	took := time.Since(began)
	outs := <-result
	out := outs[0]
	if outs[1].took > out.took {
		out = outs[1] // the one that ran is answered last
	}
	t.Logf("SIGTERM with a 120 s request and a %v grace period: exited after %v, exit code %d; the request got %d %q after %v",
		grace, took.Round(time.Millisecond), s.exitCode(), out.code, out.message, out.took.Round(time.Millisecond))
	if took < grace {
		t.Errorf("the server exited %v after SIGTERM, before its %v grace period ended", took, grace)
	}
	if code := s.exitCode(); code != 1 || !strings.Contains(s.Log(), gracePeriodEnded) {
		t.Errorf("exit code %d, want 1 with the log saying %q", code, gracePeriodEnded)
	}
	for _, o := range outs {
		if o.code != http.StatusServiceUnavailable || o.message == "" || o.took < grace {
			t.Errorf("a request cut off by the grace period's end: %+v, want 503 with a message, not before the grace period ended", o)
		}
	}
	checkNothingLeft(t, s, pids)
}

// TestShutdownServerKilled SIGKILLs the server: every worker dies with it
// (how fast is logged; the bound is a guard against workers that outlive
// it). The socket files the dead server left are removed when the next
// server starts on the same folder.
func TestShutdownServerKilled(t *testing.T) {
	store := t.TempDir()
	faultModel(t, store, "one", nil, nil)
	faultModel(t, store, "two", []string{"minWorkers=2", "maxWorkers=2"}, nil)
	sockDir := testutil.ShortDir(t)
	s := StartServer(t, Options{Store: store, Config: map[string]string{"socket_dir": sockDir}})
	s.WaitStatus(faultWait, api.StatusHealthy, "one", "two")
	pids := append(s.live("one"), s.live("two")...)
	began := time.Now()
	s.Signal(syscall.SIGKILL)
	gone := testutil.Poll(faultWait, func() bool { return allGone(pids) })
	took := time.Since(began)
	left := sockets(t, sockDir)
	t.Logf("SIGKILL of the server: its %d workers gone after %v; %d socket files left behind", len(pids), took.Round(time.Millisecond), len(left))
	if !gone {
		t.Errorf("workers still alive %v after the server was killed", faultWait)
	}
	if len(left) != len(pids) {
		t.Fatalf("socket files after the kill: %v, want one per worker (else the next check proves nothing)", left)
	}
	next := StartServer(t, Options{Store: store, Models: "NONE", Config: map[string]string{"socket_dir": sockDir}})
	if still := sockets(t, sockDir); len(still) != 0 {
		t.Errorf("stale socket files after a new start: %v", still)
	}
	if !strings.Contains(next.Log(), "stale worker sockets removed") {
		t.Errorf("the new server did not report the stale sockets:\n%s", next.Log())
	}
}

// TestShutdownSecondSignal sends SIGTERM twice while a long request runs:
// the first starts the graceful stop, the second ends the process at once
// (it dies of the signal's default action, which only the second signal
// gets, instead of exiting when the grace period ends), and its workers
// die with it.
func TestShutdownSecondSignal(t *testing.T) {
	store := t.TempDir()
	faultModel(t, store, "patient", []string{"minWorkers=1", "maxWorkers=1"}, nil)
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(faultWait, api.StatusHealthy, "patient")
	pids := s.live("patient")
	result := make(chan []outcome, 1)
	go func() { result <- load(s, "patient", 1, 1, clientTimeout, nil, "X-Sleep", "120") }()
	testutil.WaitFor(t, faultWait, "the request running", func() bool { return busyWorkers(s.Describe("patient")) == 1 })
	s.Signal(syscall.SIGTERM)
	testutil.WaitFor(t, faultWait, "shutdown begun", func() bool { return strings.Contains(s.Log(), `"msg":"shutting down"`) })
	began := time.Now()
	s.Signal(syscall.SIGTERM)
	if !s.Wait(faultWait) {
		t.Fatalf("the server did not exit within %v of the second SIGTERM", faultWait)
	}
	took := time.Since(began)
	gone := testutil.Poll(faultWait, func() bool { return allGone(pids) })
	t.Logf("second SIGTERM during a 30 s grace period: %v after %v, workers gone %v", s.cmd.ProcessState, took.Round(time.Millisecond), gone)
	if !gone {
		t.Errorf("workers still alive %v after the server ended", faultWait)
	}
	if ws, ok := s.cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("the server ended with %v, want killed by the second SIGTERM", s.cmd.ProcessState)
	}
	if out := (<-result)[0]; out.err == nil && out.code == http.StatusOK {
		t.Errorf("the 120 s request completed: %+v", out)
	}
}
