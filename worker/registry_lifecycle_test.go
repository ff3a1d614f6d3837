package worker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
)

// busyModel registers a one-worker model and gives it a request that runs
// for seconds and one that waits behind it in the queue.
func busyModel(t *testing.T, r *testRegistry, name, seconds string) (running, queued *batching.Job, pid int) {
	t.Helper()
	r.probe(t, name, []string{"minWorkers=1", "maxWorkers=1"})
	r.mustRegister(t, name)
	running = r.submit(t, name, newJob("running", "action", "sleep", "seconds", seconds))
	eventuallyTrue(t, name+" busy", func() bool { return count(r.workersOf(t, name), workerBusy, nil) == 1 })
	queued = r.submit(t, name, newJob("queued"))
	return running, queued, r.workersOf(t, name)[0].PID
}

// TestRegistryUnregister removes a model that is busy: what waits in its
// queue is answered at once, the request in flight finishes, and nothing of
// the model is left.
func TestRegistryUnregister(t *testing.T) {
	r := newTestRegistry(t)
	running, queued, pid := busyModel(t, r, "leaving", "1")
	if err := r.Unregister(context.Background(), "leaving"); err != nil {
		t.Fatal(err)
	}
	if _, err := await(t, queued); !errors.Is(err, batching.ErrClosed) {
		t.Errorf("queued job: %s, want ErrClosed", errText(err))
	}
	if resp, err := await(t, running); err != nil || string(resp.Body) != "running" {
		t.Errorf("job in flight: %+v, %v", resp, err)
	}
	if !gone(pid) {
		t.Errorf("worker %d still runs", pid)
	}
	if files := socketFiles(t, r.cfg.Server.SocketDir); len(files) != 0 {
		t.Errorf("socket files left: %v", files)
	}
	if _, err := r.Describe("leaving"); !errors.Is(err, api.ErrModelNotFound) {
		t.Errorf("Describe after Unregister = %v", err)
	}
	r.probe(t, "leaving", nil)
	r.mustRegister(t, "leaving") // the name is free again
}

// TestRegistryShutdown stops a registry with work in flight and in the
// queue: both are served (the queue drains), new work is refused with
// ErrClosed (503), every worker process is gone and every socket file
// removed.
func TestRegistryShutdown(t *testing.T) {
	r := newTestRegistry(t)
	running, queued, pid := busyModel(t, r, "a", "1")
	r.probe(t, "b", []string{"minWorkers=2", "maxWorkers=2"})
	r.mustRegister(t, "b")
	pids := []int{pid}
	for _, w := range r.workersOf(t, "b") {
		pids = append(pids, w.PID)
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	began := time.Now()
	done := make(chan error, 1)
	go func() { done <- r.Shutdown(ctx) }()
	eventuallyTrue(t, "new work refused while draining", func() bool {
		return errors.Is(r.Submit("a", newJob("during")), batching.ErrClosed)
	})
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("shut down in %v", time.Since(began).Round(time.Millisecond))
	if resp, err := await(t, running); err != nil || string(resp.Body) != "running" {
		t.Errorf("job in flight: %+v, %v", resp, err)
	}
	if resp, err := await(t, queued); err != nil || string(resp.Body) != "queued" {
		t.Errorf("queued job: %+v, %s; want it served", resp, errText(err))
	}
	for _, p := range pids {
		if !gone(p) {
			t.Errorf("worker %d still runs", p)
		}
	}
	if files := socketFiles(t, r.cfg.Server.SocketDir); len(files) != 0 {
		t.Errorf("socket files left: %v", files)
	}
	if err := r.Submit("b", newJob("late")); !errors.Is(err, batching.ErrClosed) {
		t.Errorf("Submit after Shutdown = %v, want ErrClosed (503)", err)
	}
	r.probe(t, "c", nil)
	if err := r.register(t, "c"); !errors.Is(err, batching.ErrClosed) {
		t.Errorf("Register after Shutdown = %v, want ErrClosed", err)
	}
}

// TestRegistryShutdownGraceEnds stops a registry whose request in flight
// outlives the grace period: Shutdown reports it, the request is answered
// with ErrClosed, and the worker is killed.
func TestRegistryShutdownGraceEnds(t *testing.T) {
	r := newTestRegistry(t)
	running, queued, pid := busyModel(t, r, "stubborn", "600")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if err := r.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown = %v, want the grace period's end", err)
	}
	if _, err := await(t, running); !errors.Is(err, batching.ErrClosed) {
		t.Errorf("job in flight: %s, want ErrClosed", errText(err))
	}
	if _, err := await(t, queued); !errors.Is(err, batching.ErrClosed) {
		t.Errorf("queued job behind it: %s, want ErrClosed", errText(err))
	}
	if !gone(pid) {
		t.Errorf("worker %d still runs", pid)
	}
	if files := socketFiles(t, r.cfg.Server.SocketDir); len(files) != 0 {
		t.Errorf("socket files left: %v", files)
	}
}

// TestRegistryShutdownWhileLoading stops a registry whose models are still
// loading: one with a request queued is served once it has loaded, one with
// nothing queued is stopped without waiting for its load, and Shutdown
// ends within its grace period.
func TestRegistryShutdownWhileLoading(t *testing.T) {
	r := newTestRegistry(t)
	busy := r.probe(t, "busy", []string{"minWorkers=1", "maxWorkers=1"}, "GATE")
	r.probe(t, "idle", []string{"minWorkers=1", "maxWorkers=1"}, "GATE")
	for _, name := range []string{"busy", "idle"} {
		if _, err := r.Register(context.Background(), api.RegisterRequest{URL: name}); err != nil {
			t.Fatal(err)
		}
	}
	queued := r.submit(t, "busy", newJob("waited"))
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Shutdown(ctx) }()
	eventuallyTrue(t, "idle's loading worker stopped", func() bool { return len(r.workersOf(t, "idle")) == 0 })
	if err := os.WriteFile(filepath.Join(busy, "OPEN"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Errorf("Shutdown = %v, want a drain within the grace period", err)
	}
	if resp, err := await(t, queued); err != nil || string(resp.Body) != "waited" {
		t.Errorf("the request queued while busy loaded: %+v, %s", resp, errText(err))
	}
}
