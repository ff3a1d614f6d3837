package worker

// The harness of the registry's lifecycle tests on fake workers: a registry
// whose workers are fakeRunners and whose view of the host is injected, run
// inside a testing/synctest bubble, so that minutes of backoff, idle time
// and grace periods pass in virtual time.

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/switchyard/switchyard/gpu"
	"github.com/switchyard/switchyard/properties"
)

// simHost is the host the fake registry sees: 64000 MiB, 32000 available.
func simHost() (totalMiB, availableMiB uint64, err error) { return 64000, 32000, nil }

// simTest runs f in a synctest bubble with a registry on fake workers;
// change adjusts the registry's configuration before it is built.
func simTest(t *testing.T, f func(t *testing.T, r *testRegistry, w *fakeWorld), change ...func(*Config)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		r, w := newSimRegistry(t, change...)
		f(t, r, w)
	})
}

// newSimRegistry returns a registry whose workers are fake runners of a new
// fakeWorld. It must run in a synctest bubble; it is shut down when the
// test ends.
func newSimRegistry(t *testing.T, change ...func(*Config)) (*testRegistry, *fakeWorld) {
	t.Helper()
	srv := properties.DefaultServer()
	srv.PythonExecutable = "/fake/python3"
	srv.SocketDir = "/fake"
	srv.ModelStore = t.TempDir()
	srv.AllowedModelRoots = []string{srv.ModelStore}
	core, logs := observer.New(zap.InfoLevel)
	log := zap.New(zapcore.NewTee(core, zaptest.NewLogger(t, zaptest.Level(zap.ErrorLevel)).Core()))
	w := newFakeWorld()
	cfg := Config{
		Server: srv, Engine: "/fake/engine.py", GPU: gpu.CPUOnly(), Logger: log, LogLevel: "info",
		CacheDir: t.TempDir(), Start: w.start, HostMemory: simHost,
		RSS:         func(int) int64 { return 42 },
		ProcessTree: func() func(int) []int { return func(int) []int { return nil } },
		PIDExists:   w.exists,
		Pip:         func(context.Context, string, string, []string) ([]byte, error) { panic("pip without a fake") },
	}
	for _, c := range change {
		c(&cfg)
	}
	reg, err := NewRegistry(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = reg.Shutdown(ctx)
	})
	return &testRegistry{Registry: reg, logs: logs, world: w}, w
}

// model writes a model folder name into the store with the given
// serving.properties lines and returns it.
func (r *testRegistry) model(t *testing.T, name string, props ...string) string {
	t.Helper()
	dir := filepath.Join(r.cfg.Server.ModelStore, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	text := ""
	for _, p := range props {
		text += p + "\n"
	}
	if err := os.WriteFile(filepath.Join(dir, properties.ModelFile), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// since returns the times of ts relative to t0.
func since(t0 time.Time, ts ...time.Time) []time.Duration {
	out := make([]time.Duration, len(ts))
	for i, t := range ts {
		out[i] = t.Sub(t0)
	}
	return out
}

// startTimes returns when each of starts began.
func startTimes(starts []fakeStart) []time.Time {
	out := make([]time.Time, len(starts))
	for i, s := range starts {
		out[i] = s.at
	}
	return out
}

// settle lets every goroutine of the bubble run until all wait.
func settle() { synctest.Wait() }

// advance lets d of virtual time pass, then lets everything settle.
func advance(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}
