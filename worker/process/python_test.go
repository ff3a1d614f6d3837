package process

// Integration tests with the real Python runtime (pyruntime) and the
// project's interpreter (testutil.Python). They are skipped with -short or
// without that interpreter.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/internal/testutil"
	"github.com/switchyard/switchyard/message"
)

// pythonHarness returns a harness whose spec runs the model folder
// testdata/<model> with the real runtime.
func pythonHarness(tb testing.TB, model string) *harness {
	tb.Helper()
	python := testutil.Python(tb)
	h := newHarness(tb)
	rt := testutil.UnpackRuntime(tb)
	dir, err := filepath.Abs(filepath.Join("testdata", model))
	if err != nil {
		tb.Fatal(err)
	}
	h.spec.Model, h.spec.ModelDir, h.spec.Python, h.spec.Engine = model, dir, python, rt.Engine
	h.spec.PythonPath, h.spec.Env = []string{rt.PythonPath}, nil
	h.runtime = rt
	return h
}

// startedPID returns the pid of the last worker the harness's logger saw
// start.
func (h *harness) startedPID(tb testing.TB) int {
	tb.Helper()
	started := h.logs.FilterMessage("worker started").All()
	if len(started) == 0 {
		tb.Fatal("no worker started")
	}
	pid, _ := started[len(started)-1].ContextMap()["pid"].(int64)
	return int(pid)
}

func TestPythonEcho(t *testing.T) {
	p := pythonHarness(t, "echo").start(t)
	in := input("héllo \x00 bytes", "content-type", "text/plain", "x-custom", "v1")
	resp, err := p.predict(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Code != 200 || string(resp.Body) != "héllo \x00 bytes" {
		t.Errorf("reply %d %q", resp.Code, resp.Body)
	}
	for _, pr := range in.Props {
		if got := propOf(resp, "x-echo-"+pr.Key); got != pr.Value {
			t.Errorf("property %s=%q came back as %q", pr.Key, pr.Value, got)
		}
	}
}

func TestPythonBatch(t *testing.T) {
	p := pythonHarness(t, "echo").start(t)
	var ins []*message.Input
	for i := range 4 {
		ins = append(ins, input(fmt.Sprint("item ", i)))
	}
	results, err := p.predictBatch(context.Background(), ins)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range results {
		if r.Err != nil {
			t.Fatalf("item %d: %v", i, r.Err)
		}
		if string(r.Resp.Body) != fmt.Sprint("item ", i) || propOf(r.Resp, "x-batch-size") != "4" {
			t.Errorf("item %d: body %q, batch size %q", i, r.Resp.Body, propOf(r.Resp, "x-batch-size"))
		}
	}
}

func TestPythonStatusCodes(t *testing.T) {
	p := pythonHarness(t, "echo").start(t)
	tests := []struct {
		action  string
		code    int
		message string
	}{
		{"bad", 424, "bad"},
		{"oom", 507, ""},
		{"none", 204, ""},
	}
	for _, tt := range tests {
		t.Run(tt.action, func(t *testing.T) {
			resp, err := p.predict(context.Background(), input("x", "action", tt.action))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Code != tt.code || !strings.Contains(resp.Message, tt.message) {
				t.Errorf("reply %d %q, want %d with %q", resp.Code, resp.Message, tt.code, tt.message)
			}
		})
	}
}

func TestPythonKilledMidRequest(t *testing.T) {
	h := pythonHarness(t, "echo")
	killMidRequest(t, h, h.start(t), "echo: hanging")
}

func TestPythonStop(t *testing.T) {
	p := pythonHarness(t, "echo").start(t)
	if err := p.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkStopped(t, p)
}

func TestPythonSyntaxError(t *testing.T) {
	h := pythonHarness(t, "syntax")
	_, err := Start(context.Background(), h.spec)
	if err == nil {
		t.Fatal("a model with a syntax error loaded")
	}
	t.Log(err)
	checkErr(t, err, []error{ErrLoad}, []string{"SyntaxError"})
	checkGone(t, h)
}

// TestPythonTracebackOneRecord loads a model.py that raises at import: the
// worker's traceback reaches the log as one record at Error, the whole
// traceback in its traceback field, and no frame line is a record of its own.
func TestPythonTracebackOneRecord(t *testing.T) {
	h := pythonHarness(t, "raises")
	_, err := Start(context.Background(), h.spec)
	checkErr(t, err, []error{ErrLoad}, []string{"ConnectionError"})
	var withTB []string
	for _, e := range h.logs.All() {
		if strings.HasPrefix(strings.TrimSpace(e.Message), "File \"") || e.Message == tracebackHeader {
			t.Errorf("a traceback line logged as a record of its own: %q", e.Message)
		}
		tb, ok := e.ContextMap()["traceback"].(string)
		if !ok {
			continue
		}
		withTB = append(withTB, tb)
		if e.Level != zap.ErrorLevel || !strings.Contains(tb, "in _connect") || !strings.Contains(tb, "ConnectionError: cannot reach") {
			t.Errorf("traceback record at %v, %q:\n%s", e.Level, e.Message, tb)
		}
	}
	if len(withTB) != 1 {
		t.Fatalf("%d records with a traceback, want 1: %q", len(withTB), withTB)
	}
	t.Logf("one record:\n%s", withTB[0])
}

func TestPythonSlowInit(t *testing.T) {
	h := pythonHarness(t, "slowinit")
	h.spec.LoadTimeout = 3 * time.Second
	_, err := Start(context.Background(), h.spec)
	if !errors.Is(err, ErrLoadTimeout) {
		t.Fatalf("error %v, want ErrLoadTimeout", err)
	}
	t.Log(err)
	checkErr(t, err, nil, []string{"did not start within 3s"})
	checkGone(t, h)
}

// checkGone checks that the harness's last worker process and every socket
// file are gone.
func checkGone(t *testing.T, h *harness) {
	t.Helper()
	if pid := h.startedPID(t); !gone(pid) {
		t.Errorf("worker pid %d still exists", pid)
	}
	left, _ := filepath.Glob(filepath.Join(h.spec.SocketDir, SocketPrefix+"*"))
	if len(left) > 0 {
		t.Errorf("socket files left: %v", left)
	}
}
