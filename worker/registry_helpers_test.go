package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/gpu"
	"github.com/switchyard/switchyard/internal/testutil"
	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/properties"
	"github.com/switchyard/switchyard/worker/process"
)

// waitLimit bounds every wait of the registry tests for real processes: far
// above what a step takes, so that it fails only when the step never comes.
const waitLimit = time.Minute

// testRegistry is a CPU-only registry whose workers run the real Python
// runtime, with its log kept for assertions.
type testRegistry struct {
	*Registry
	logs  *observer.ObservedLogs
	world *fakeWorld // the fake workers, on a registry of simTest's
}

// newTestRegistry returns a registry on an empty model store; change
// sets server settings before it is built. It is shut down when the test
// ends.
func newTestRegistry(t *testing.T, change ...func(*properties.Server)) *testRegistry {
	t.Helper()
	python := testutil.Python(t)
	return newBareRegistry(t, append([]func(*properties.Server){func(s *properties.Server) { s.PythonExecutable = python }}, change...)...)
}

// newBareRegistry is newTestRegistry for tests that start no worker (they
// register models whose minimum is 0, or that must be refused), so that
// they also run with -short and without Python.
func newBareRegistry(t *testing.T, change ...func(*properties.Server)) *testRegistry {
	t.Helper()
	srv := properties.DefaultServer()
	srv.SocketDir = testutil.ShortDir(t)
	srv.ModelStore = t.TempDir()
	srv.AllowedModelRoots = []string{srv.ModelStore}
	for _, c := range change {
		c(srv)
	}
	core, logs := observer.New(zap.InfoLevel)
	tee := zapcore.NewTee(core, zaptest.NewLogger(t, zaptest.Level(zap.ErrorLevel)).Core())
	rt := testutil.UnpackRuntime(t)
	reg, err := NewRegistry(Config{Server: srv, Engine: rt.Engine, PythonPath: []string{rt.PythonPath},
		GPU: gpu.CPUOnly(), Logger: zap.New(tee)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		_ = reg.Shutdown(ctx)
	})
	return &testRegistry{Registry: reg, logs: logs}
}

// probe writes a model folder name in the store: the probe model.py, the
// given serving.properties lines, and empty marker files (BROKEN, SINGLE,
// SEEN). It returns the folder.
func (r *testRegistry) probe(t *testing.T, name string, props []string, markers ...string) string {
	t.Helper()
	dir := filepath.Join(r.cfg.Server.ModelStore, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(filepath.Join("testdata", "registry", "probe", "model.py"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"model.py": src, properties.ModelFile: []byte(strings.Join(props, "\n") + "\n")}
	for _, m := range markers {
		files[m] = nil
	}
	for f, data := range files {
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// register registers the store's folder name synchronously.
func (r *testRegistry) register(t *testing.T, name string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	_, err := r.Register(ctx, api.RegisterRequest{URL: name, Synchronous: true})
	return err
}

// loadStartup loads the store's folder name as a model of the server's
// configuration and waits until it is FAILED, failing the test when it
// loads instead.
func (r *testRegistry) loadStartup(t *testing.T, name string) {
	t.Helper()
	dir := filepath.Join(r.cfg.Server.ModelStore, name)
	if err := r.LoadStartup([]properties.ModelRef{{Name: name, Path: dir}}); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, waitLimit, name+" settled", func() bool { return r.status(t, name) != api.StatusPending })
	if st := r.status(t, name); st != api.StatusFailed {
		t.Fatalf("%s is %s, want %s", name, st, api.StatusFailed)
	}
}

// mustRegister is register that fails the test on an error.
func (r *testRegistry) mustRegister(t *testing.T, name string) {
	t.Helper()
	if err := r.register(t, name); err != nil {
		t.Fatalf("register %s: %v", name, err)
	}
}

// newJob returns a job whose body is body and whose properties are the
// key, value pairs of kv.
func newJob(body string, kv ...string) *batching.Job {
	in := message.Input{Content: []message.Item{{Key: "data", Value: []byte(body)}}}
	for i := 0; i+1 < len(kv); i += 2 {
		in.Props = append(in.Props, message.Prop{Key: kv[i], Value: kv[i+1]})
	}
	return batching.NewJob(body, in, time.Now(), time.Time{})
}

// submit queues j for model and fails the test when it is refused.
func (r *testRegistry) submit(t *testing.T, model string, j *batching.Job) *batching.Job {
	t.Helper()
	if err := r.Submit(model, j); err != nil {
		t.Fatalf("submit %s to %s: %v", j.ID, model, err)
	}
	return j
}

// call submits j and waits for its answer.
func (r *testRegistry) call(t *testing.T, model string, j *batching.Job) (*message.Response, error) {
	t.Helper()
	r.submit(t, model, j)
	return await(t, j)
}

// await waits for j's answer.
func await(t *testing.T, j *batching.Job) (*message.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	resp, err := j.Wait(ctx)
	if ctx.Err() != nil {
		t.Fatalf("job %s not answered within %v", j.ID, waitLimit)
	}
	return resp, err
}

// pidOf returns the worker pid a probe answer names.
func pidOf(t *testing.T, resp *message.Response) int {
	t.Helper()
	pid, err := strconv.Atoi(propOf(resp, "x-pid"))
	if err != nil {
		t.Fatalf("answer without x-pid: %+v", resp)
	}
	return pid
}

// workersOf returns the worker records of a model's groups.
func (r *testRegistry) workersOf(t *testing.T, model string) []api.WorkerRecord {
	t.Helper()
	rec, err := r.Describe(model)
	if err != nil {
		t.Fatal(err)
	}
	var out []api.WorkerRecord
	for _, g := range rec.WorkerGroups {
		out = append(out, g.Workers...)
	}
	return out
}

// count returns how many of ws have the status and, when temp is not nil,
// that kind.
func count(ws []api.WorkerRecord, status string, temp *bool) int {
	n := 0
	for _, w := range ws {
		if w.Status == status && (temp == nil || w.Temporary == *temp) {
			n++
		}
	}
	return n
}

var (
	temporary = ptr(true)
	permanent = ptr(false)
)

func ptr[T any](v T) *T { return &v }

// status returns a model's status, failing the test when it is unknown.
func (r *testRegistry) status(t *testing.T, model string) string {
	t.Helper()
	rec, err := r.Describe(model)
	if err != nil {
		t.Fatal(err)
	}
	return rec.Status
}

// started counts the worker processes of model the log saw start.
func (r *testRegistry) started(model string) int {
	n := 0
	for _, e := range r.logs.FilterMessage("worker started").All() {
		if e.ContextMap()["model"] == model {
			n++
		}
	}
	return n
}

// socketFiles lists the worker socket files in dir.
func socketFiles(t *testing.T, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, process.SocketPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	return paths
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%q", err.Error())
}

// propOf returns the value of r's last property named key, or "".
func propOf(r *message.Response, key string) string {
	v, _ := r.Prop(key)
	return v
}
