package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// faultWait bounds the waits of the fault tests for a state the server must
// reach (a model loaded, a worker back): far above what it takes.
const faultWait = time.Minute

// faultSource is the model.py of the fault tests. Request headers pick what
// a request does; files in the model folder change how the model loads.
const faultSource = `"""A model for switchyard's fault tests.

Headers: X-Sleep (seconds to sleep first), X-Crash (the process exits with
status 3). Every answer echoes the body and names the worker's pid in x-pid.
Files in the folder: HOLD makes the import wait until a file OPEN appears
next to it (two minutes at most), so that a test decides when a load ends;
SINGLE is locked at import, so that a second worker of the folder cannot
load while the first one lives.
"""

import fcntl
import os
import time

from djl_python import Input, Output

_HERE = os.path.dirname(os.path.abspath(__file__))


def _marker(name):
    path = os.path.join(_HERE, name)
    return path if os.path.exists(path) else None


if _marker("HOLD"):
    _deadline = time.monotonic() + 120
    while not _marker("OPEN") and time.monotonic() < _deadline:
        time.sleep(0.01)

if _marker("SINGLE"):
    _LOCK = open(_marker("SINGLE"), "a")
    try:
        fcntl.flock(_LOCK, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise RuntimeError("faults: another worker holds SINGLE")


def handle(inputs: Input):
    if inputs.is_empty():
        return None
    seconds = inputs.get_property("x-sleep")
    if seconds:
        time.sleep(float(seconds))
    if inputs.get_property("x-crash"):
        os._exit(3)
    out = Output()
    out.add_property("x-pid", str(os.getpid()))
    return out.add(inputs.get_as_bytes())
`

// brokenSource is a model.py that raises while it is imported.
const brokenSource = `import os

raise RuntimeError("faults: this model cannot load")
`

// brokenLine is the last line of brokenSource's traceback.
const brokenLine = "RuntimeError: faults: this model cannot load"

// faultModel writes a model folder name in store with faultSource, the
// serving.properties lines props and the marker files (name=content).
func faultModel(t testing.TB, store, name string, props []string, markers map[string]string) string {
	t.Helper()
	files := map[string]string{"model.py": faultSource, "serving.properties": strings.Join(props, "\n") + "\n"}
	for k, v := range markers {
		files[k] = v
	}
	return WriteModel(t, store, name, files)
}

// outcome is what one client request got.
type outcome struct {
	code    int    // 0 when no HTTP answer came
	pid     string // x-pid of a 200
	message string // the error body's message
	err     error  // transport error, timeout included
	took    time.Duration
}

// invoke sends one POST to the model's /predictions path with headers (key,
// value pairs) and a client timeout.
func invoke(c *http.Client, s *Server, model string, timeout time.Duration, headers ...string) outcome {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	began := time.Now()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.Inference+"/predictions/"+model, strings.NewReader("ping"))
	if err != nil {
		return outcome{err: err}
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := c.Do(req)
	if err != nil {
		return outcome{err: err, took: time.Since(began)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	o := outcome{code: resp.StatusCode, pid: resp.Header.Get("x-pid"), err: err, took: time.Since(began)}
	if resp.StatusCode != http.StatusOK {
		var p struct{ Message string }
		_ = json.Unmarshal(body, &p)
		o.message = p.Message
	}
	return o
}

// tally sums outcomes up.
type tally struct {
	sent, answered, timedOut, transport int
	codes                               map[int]int
	messages                            map[string]int
}

func newTally(outs []outcome) tally {
	t := tally{sent: len(outs), codes: map[int]int{}, messages: map[string]int{}}
	for _, o := range outs {
		switch {
		case errors.Is(o.err, context.DeadlineExceeded):
			t.timedOut++
		case o.err != nil:
			t.transport++
		default:
			t.answered++
			t.codes[o.code]++
			if o.code != http.StatusOK {
				t.messages[fmt.Sprintf("%d %s", o.code, o.message)]++
			}
		}
	}
	return t
}

func (t tally) String() string {
	codes := make([]int, 0, len(t.codes))
	for c := range t.codes {
		codes = append(codes, c)
	}
	sort.Ints(codes)
	var parts []string
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d×%d", t.codes[c], c))
	}
	return fmt.Sprintf("sent %d, answered %d (%s), client timeouts %d, transport errors %d",
		t.sent, t.answered, strings.Join(parts, ", "), t.timedOut, t.transport)
}

// load runs n requests at concurrency conc against model; each one runs
// onDone (which may be nil) with its index when it ends.
func load(s *Server, model string, n, conc int, timeout time.Duration, onDone func(int), headers ...string) []outcome {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	defer c.CloseIdleConnections()
	outs := make([]outcome, n)
	next := make(chan int)
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for i := range next {
				outs[i] = invoke(c, s, model, timeout, headers...)
				if onDone != nil {
					onDone(i)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	return outs
}

// live returns the pids of a model's workers that serve (READY or BUSY).
func (s *Server) live(model string) []int {
	var pids []int
	for _, g := range s.Describe(model).WorkerGroups {
		for _, w := range g.Workers {
			if w.Status == "READY" || w.Status == "BUSY" {
				pids = append(pids, w.PID)
			}
		}
	}
	return pids
}

// workers returns a model's worker records.
func (s *Server) workers(model string) []api.WorkerRecord {
	var ws []api.WorkerRecord
	for _, g := range s.Describe(model).WorkerGroups {
		ws = append(ws, g.Workers...)
	}
	return ws
}

// ping returns /ping's status and per-model map.
func (s *Server) ping(t testing.TB) (int, map[string]api.ModelHealth) {
	t.Helper()
	code, body := s.Get(s.Inference + "/ping")
	var m map[string]api.ModelHealth
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("/ping body %q: %v", body, err)
	}
	return code, m
}

// started counts the "worker started" lines of model in the server's log.
func (s *Server) started(model string) int {
	return len(s.records("worker started", model))
}

// records returns the server's JSON log records with the message msg
// about model, in order.
func (s *Server) records(msg, model string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(s.Log(), "\n") {
		var e map[string]any
		if json.Unmarshal([]byte(line), &e) == nil && e["msg"] == msg && e["model"] == model {
			out = append(out, e)
		}
	}
	return out
}

// sockets lists the worker socket files in dir.
func sockets(t testing.TB, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "switchyard.sock.*"))
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

// allGone reports whether every process of pids is gone.
func allGone(pids []int) bool {
	for _, p := range pids {
		if !testutil.ProcessGone(p) {
			return false
		}
	}
	return true
}

// exitCode returns the server's exit status once it has exited.
func (s *Server) exitCode() int {
	<-s.exited
	if s.cmd.ProcessState == nil {
		return -1
	}
	return s.cmd.ProcessState.ExitCode()
}

// mustWrite writes a file or fails the test.
func mustWrite(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
