package worker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/internal/testutil"
)

// busyModel registers a one-worker model and gives it a request that runs
// until the test writes the file gate into the returned model folder, and
// one that waits behind it.
func busyModel(t *testing.T, r *testRegistry, name, gate string) (running, queued *batching.Job, pid int, dir string) {
	t.Helper()
	dir = r.probe(t, name, []string{"minWorkers=1", "maxWorkers=1"})
	t.Cleanup(func() { openGate(t, dir, gate) })
	r.mustRegister(t, name)
	running = r.submit(t, name, newJob("running", "action", "wait", "gate", gate))
	testutil.WaitFor(t, waitLimit, name+" busy", func() bool { return count(r.workersOf(t, name), workerBusy, nil) == 1 })
	queued = r.submit(t, name, newJob("queued"))
	return running, queued, r.workersOf(t, name)[0].PID, dir
}

// openGate writes the file gate into dir, which lets a probe request that
// waits for it go on.
func openGate(t *testing.T, dir, gate string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, gate), nil, 0o644); err != nil {
		t.Error(err)
	}
}

// TestRegistryShutdown stops a registry with work in flight and in the
// queue: new work is refused with ErrClosed (503) while it drains (the
// running request waits for the test to let it go), both are served,
// every worker process is gone and every socket file removed.
func TestRegistryShutdown(t *testing.T) {
	r := newTestRegistry(t)
	running, queued, pid, dir := busyModel(t, r, "a", "go")
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
	testutil.WaitFor(t, waitLimit, "new work refused while draining", func() bool {
		return errors.Is(r.Submit("a", newJob("during")), batching.ErrClosed)
	})
	select {
	case err := <-done:
		t.Fatalf("Shutdown returned (%v) while a request ran", err)
	default:
	}
	openGate(t, dir, "go")
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
		if !testutil.ProcessGone(p) {
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
