package worker

// Shutdown and unregister tests of the registry on fake workers, in
// virtual time: the drain within shutdown_grace_period, what the end of
// the grace period cuts off, models that are still loading.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
)

// busySim registers a one-worker model and gives it a request that runs
// for seconds, one the worker holds behind it (a batch model's worker takes
// the next batch while it runs one; a rolling-batch one with a single slot
// leaves it queued) and one that waits in the queue.
func busySim(t *testing.T, r *testRegistry, name, seconds string, props ...string) (running, next, queued *batching.Job) {
	t.Helper()
	r.model(t, name, append([]string{"minWorkers=1", "maxWorkers=1"}, props...)...)
	r.mustRegister(t, name)
	running = r.submit(t, name, newJob("running", "action", "sleep", "seconds", seconds))
	settle()
	next = r.submit(t, name, newJob("next"))
	settle()
	queued = r.submit(t, name, newJob("queued"))
	return running, next, queued
}

// shutdownIn runs Shutdown with a grace period of grace and returns its
// result channel.
func shutdownIn(r *testRegistry, grace time.Duration) <-chan error {
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		defer cancel()
		done <- r.Shutdown(ctx)
	}()
	return done
}

// allStopped reports whether every fake worker the world started has
// exited.
func (w *fakeWorld) allStopped() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.runners {
		if r.Err() == nil {
			return false
		}
	}
	return true
}

// TestSimShutdownDrains stops a registry with work running and queued:
// new requests are refused at once (503), everything accepted is served,
// Shutdown returns as soon as the queue is empty and every worker has
// stopped, and later registrations are refused.
func TestSimShutdownDrains(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "b", "minWorkers=2", "maxWorkers=2")
		r.mustRegister(t, "b")
		running, next, queued := busySim(t, r, "a", "5")
		began := time.Now()
		done := shutdownIn(r, 30*time.Second)
		settle()
		if err := r.Submit("a", newJob("during")); !errors.Is(err, batching.ErrClosed) {
			t.Errorf("Submit while draining = %v, want ErrClosed (503)", err)
		}
		if err := <-done; err != nil || time.Since(began) != 5*time.Second {
			t.Errorf("Shutdown = %v after %v, want nil once the running request ends (5s)", err, time.Since(began))
		}
		for _, j := range []*batching.Job{running, next, queued} {
			if resp, err := await(t, j); err != nil || string(resp.Body) != j.ID {
				t.Errorf("%s: %+v, %s; want it served", j.ID, resp, errText(err))
			}
		}
		if !w.allStopped() {
			t.Error("workers left running")
		}
		if err := r.Submit("b", newJob("late")); !errors.Is(err, batching.ErrClosed) {
			t.Errorf("Submit after Shutdown = %v, want ErrClosed (503)", err)
		}
		r.model(t, "c")
		if err := r.register(t, "c"); !errors.Is(err, batching.ErrClosed) {
			t.Errorf("Register after Shutdown = %v, want ErrClosed", err)
		}
	})
}

// TestSimShutdownGraceEnds stops a registry whose running request outlives
// the grace period: at its end Shutdown reports it, the running request
// and those behind it are answered with ErrClosed (503), and the worker is
// killed.
func TestSimShutdownGraceEnds(t *testing.T) {
	for _, rolling := range []string{"disable", "scheduler"} {
		t.Run(rolling, func(t *testing.T) {
			simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
				running, next, queued := busySim(t, r, "stubborn", "600", "option.rolling_batch="+rolling, "option.max_rolling_batch_size=1")
				began := time.Now()
				if err := <-shutdownIn(r, 3*time.Second); !errors.Is(err, context.DeadlineExceeded) || time.Since(began) != 3*time.Second {
					t.Errorf("Shutdown = %v after %v, want the grace period's end after 3s", err, time.Since(began))
				}
				for _, j := range []*batching.Job{running, next, queued} {
					if _, err := await(t, j); !errors.Is(err, batching.ErrClosed) {
						t.Errorf("%s: %s, want ErrClosed", j.ID, errText(err))
					}
				}
				if !w.allStopped() {
					t.Error("workers left running")
				}
			})
		})
	}
}

// TestSimShutdownWhileLoading stops a registry whose models are still
// loading: one with a request queued is served once it has loaded, one
// with nothing queued is stopped at once.
func TestSimShutdownWhileLoading(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		for _, name := range []string{"busy", "idle"} {
			r.model(t, name, "minWorkers=1", "maxWorkers=1")
			w.set(name, func(s *fakeScript) { s.loadTime = 10 * time.Second })
			if _, err := r.Register(context.Background(), api.RegisterRequest{URL: name}); err != nil {
				t.Fatal(err)
			}
		}
		queued := r.submit(t, "busy", newJob("waited"))
		began := time.Now()
		done := shutdownIn(r, 30*time.Second)
		settle()
		if ws := r.workersOf(t, "idle"); len(ws) != 0 {
			t.Errorf("idle's loading worker: %+v, want it stopped at once", ws)
		}
		if err := <-done; err != nil || time.Since(began) != 10*time.Second {
			t.Errorf("Shutdown = %v after %v, want nil once busy has loaded and served (10s)", err, time.Since(began))
		}
		if resp, err := await(t, queued); err != nil || string(resp.Body) != "waited" {
			t.Errorf("the request queued while busy loaded: %+v, %s", resp, errText(err))
		}
	})
}

// TestSimUnregister removes a busy model: what waits in its queue is
// answered at once, the requests on the worker finish, its worker stops,
// and the name is free again.
func TestSimUnregister(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		running, next, queued := busySim(t, r, "leaving", "1")
		began := time.Now()
		if err := r.Unregister(context.Background(), "leaving"); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(began); took != time.Second {
			t.Errorf("Unregister returned after %v, want once the running request ended (1s)", took)
		}
		if _, err := await(t, queued); !errors.Is(err, batching.ErrClosed) {
			t.Errorf("queued job: %s, want ErrClosed", errText(err))
		}
		for _, j := range []*batching.Job{running, next} {
			if resp, err := await(t, j); err != nil || string(resp.Body) != j.ID {
				t.Errorf("job on the worker %s: %+v, %v", j.ID, resp, err)
			}
		}
		if !w.allStopped() {
			t.Error("the worker still runs")
		}
		if _, err := r.Describe("leaving"); !errors.Is(err, api.ErrModelNotFound) {
			t.Errorf("Describe after Unregister = %v", err)
		}
		r.mustRegister(t, "leaving")
	})
}

// TestSimQueueFullMessage fills the queue of a model that has no worker:
// the refusal wraps batching.ErrQueueFull and says which model and which
// limit. The shutdown then ends at its grace period, since no worker can
// ever serve what waits.
func TestSimQueueFullMessage(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "tiny", "minWorkers=0", "maxWorkers=0", "job_queue_size=1")
		r.mustRegister(t, "tiny")
		r.submit(t, "tiny", newJob("first"))
		err := r.Submit("tiny", newJob("second"))
		want := "batching: queue full: model tiny has 1 requests waiting (job_queue_size)"
		if !errors.Is(err, batching.ErrQueueFull) || err.Error() != want {
			t.Fatalf("Submit = %v, want %q", err, want)
		}
	})
}
