package worker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/properties"
)

// TestRegistryWorkerDies kills the only worker of a model: from inside
// while it holds a request (exit status 3), with SIGKILL while it holds one,
// and with SIGKILL while it is idle. A request it held fails at once with a
// message naming how the process ended, and a fresh worker takes the next
// request.
func TestRegistryWorkerDies(t *testing.T) {
	r := newTestRegistry(t)
	r.probe(t, "fragile", []string{"minWorkers=1", "maxWorkers=1"})
	r.mustRegister(t, "fragile")
	tests := []struct {
		name string
		job  *batching.Job // the request the worker holds, if any
		kill bool          // SIGKILL the worker
		want string        // in the held request's error
	}{
		{"exits", newJob("doomed", "action", "crash"), false, "exit status 3"},
		{"SIGKILL busy", newJob("doomed", "action", "sleep", "seconds", "600"), true, "signal: killed"},
		{"SIGKILL idle", nil, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			eventuallyTrue(t, "worker ready", func() bool { return count(r.workersOf(t, "fragile"), workerReady, nil) == 1 })
			before := r.workersOf(t, "fragile")[0].PID
			if tt.job != nil {
				r.submit(t, "fragile", tt.job)
				eventuallyTrue(t, "worker busy or gone", func() bool { return count(r.workersOf(t, "fragile"), workerReady, nil) == 0 })
			}
			if tt.kill {
				if err := syscall.Kill(before, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
			if tt.job != nil {
				_, err := await(t, tt.job)
				if !errors.Is(err, api.ErrWorkerDied) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("in-flight job error = %s, want ErrWorkerDied naming %q", errText(err), tt.want)
				}
			}
			died := time.Now()
			eventuallyTrue(t, "old worker gone", func() bool { return gone(before) })
			resp, err := r.call(t, "fragile", newJob("next"))
			if err != nil {
				t.Fatalf("request after the death: %v", err)
			}
			t.Logf("worker %d died; pid %d answered %v later", before, pidOf(t, resp), time.Since(died).Round(time.Millisecond))
			if pidOf(t, resp) == before {
				t.Errorf("the dead worker %d answered", before)
			}
			if st := r.status(t, "fragile"); st != api.StatusHealthy {
				t.Errorf("status after the restart = %s", st)
			}
		})
	}
}

// TestRegistryRollingWorkerDies kills a rolling-batch worker that holds
// several requests: each fails at once, and a fresh worker serves on.
func TestRegistryRollingWorkerDies(t *testing.T) {
	r := newTestRegistry(t)
	r.probe(t, "rolling", []string{"option.rolling_batch=scheduler", "minWorkers=1", "maxWorkers=1"})
	r.mustRegister(t, "rolling")
	var held []*batching.Job
	for range 3 {
		held = append(held, r.submit(t, "rolling", newJob("held", "action", "sleep", "seconds", "600")))
	}
	eventuallyTrue(t, "worker busy", func() bool { return count(r.workersOf(t, "rolling"), workerBusy, nil) == 1 })
	pid := r.workersOf(t, "rolling")[0].PID
	if _, err := r.call(t, "rolling", newJob("crash", "action", "crash")); !errors.Is(err, api.ErrWorkerDied) {
		t.Fatalf("crashing request: %s", errText(err))
	}
	for _, j := range held {
		if _, err := await(t, j); !errors.Is(err, api.ErrWorkerDied) {
			t.Errorf("held request: %s, want ErrWorkerDied", errText(err))
		}
	}
	resp, err := r.call(t, "rolling", newJob("next"))
	if err != nil || pidOf(t, resp) == pid {
		t.Fatalf("after the crash: %+v, %v (old pid %d)", resp, err, pid)
	}
}

// TestRegistryFailedAfterRetries loads a model whose model.py raises at
// import next to a healthy one, as a model of the server's configuration:
// the broken one is FAILED after retry_threshold starts, with the
// traceback in its record, and the healthy one keeps serving.
func TestRegistryFailedAfterRetries(t *testing.T) {
	r := newTestRegistry(t, func(s *properties.Server) { s.RetryThreshold = 2 })
	r.probe(t, "healthy", nil)
	r.mustRegister(t, "healthy")
	r.probe(t, "broken", nil, "BROKEN")
	began := time.Now()
	r.loadStartup(t, "broken")
	t.Logf("FAILED after %v", time.Since(began).Round(time.Millisecond))
	if n := r.started("broken"); n != 2 {
		t.Errorf("%d starts, want retry_threshold = 2", n)
	}
	rec, _ := r.Describe("broken")
	const last = "RuntimeError: probe: the BROKEN marker is present"
	if rec.Status != api.StatusFailed || !strings.Contains(rec.LastError, last) || !strings.Contains(rec.LastError, "Traceback") {
		t.Errorf("record status %s, lastError:\n%s", rec.Status, rec.LastError)
	}
	h := r.Health()
	if h["broken"].Status != api.StatusFailed || h["broken"].Error == "" || h["healthy"] != (api.ModelHealth{Status: api.StatusHealthy}) {
		t.Errorf("Health = %+v", h)
	}
	if err := r.Submit("broken", newJob("x")); !errors.Is(err, api.ErrModelFailed) {
		t.Errorf("Submit to a FAILED model = %v", err)
	}
	if _, err := r.call(t, "healthy", newJob("still here")); err != nil {
		t.Errorf("the healthy model: %v", err)
	}
	eventuallyTrue(t, "no worker left", func() bool { return len(r.workersOf(t, "broken")) == 0 })
	logged := r.logs.FilterMessageSnippet("model FAILED").All()
	if len(logged) != 1 || logged[0].ContextMap()["model"] != "broken" || !strings.Contains(fmt.Sprint(logged[0].ContextMap()["error"]), "BROKEN") {
		t.Errorf("the FAILED model is logged as %+v", logged)
	}
}

// TestRegistryFailedRecovers fixes a FAILED model's folder, then brings it
// back once by scaling it and once by registering it again.
func TestRegistryFailedRecovers(t *testing.T) {
	r := newTestRegistry(t, func(s *properties.Server) { s.RetryThreshold = 1 })
	tests := []struct {
		name    string
		recover func(t *testing.T, name string) error
	}{
		{"scale", func(t *testing.T, name string) error {
			return r.Scale(context.Background(), name, api.ScaleRequest{MinWorker: ptr(1), Synchronous: true})
		}},
		{"register", func(t *testing.T, name string) error { return r.register(t, name) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := r.probe(t, tt.name, nil, "BROKEN")
			r.loadStartup(t, tt.name)
			if err := os.Remove(filepath.Join(dir, "BROKEN")); err != nil {
				t.Fatal(err)
			}
			if err := tt.recover(t, tt.name); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			rec, _ := r.Describe(tt.name)
			if rec.Status != api.StatusHealthy || rec.LastError != "" {
				t.Errorf("after %s: status %s, lastError %q", tt.name, rec.Status, rec.LastError)
			}
			if _, err := r.call(t, tt.name, newJob("back")); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestRegistryPredictTimeout sends a request that outlives
// option.predict_timeout: it fails with ErrPredictTimeout, the worker that
// held it is replaced, and the model stays healthy.
func TestRegistryPredictTimeout(t *testing.T) {
	r := newTestRegistry(t)
	r.probe(t, "slow", []string{"option.predict_timeout=1", "minWorkers=1", "maxWorkers=1"})
	r.mustRegister(t, "slow")
	old := r.workersOf(t, "slow")[0].PID
	began := time.Now()
	_, err := r.call(t, "slow", newJob("stuck", "action", "sleep", "seconds", "600"))
	if !errors.Is(err, api.ErrPredictTimeout) {
		t.Fatalf("error = %s, want ErrPredictTimeout", errText(err))
	}
	t.Logf("timed out after %v", time.Since(began).Round(time.Millisecond))
	resp, err := r.call(t, "slow", newJob("fresh"))
	if err != nil {
		t.Fatal(err)
	}
	if pidOf(t, resp) == old {
		t.Errorf("the timed-out worker %d answered again", old)
	}
	eventuallyTrue(t, "timed-out worker gone", func() bool { return gone(old) })
	if st := r.status(t, "slow"); st != api.StatusHealthy {
		t.Errorf("status = %s", st)
	}
}

// TestRegistryQueueDeadline queues a job with a short deadline behind a busy
// worker: it is answered with batching.ErrExpired while the worker is still
// busy, and never reaches the worker.
func TestRegistryQueueDeadline(t *testing.T) {
	r := newTestRegistry(t)
	dir := r.probe(t, "busy", []string{"minWorkers=1", "maxWorkers=1"}, "SEEN")
	r.mustRegister(t, "busy")
	long := r.submit(t, "busy", newJob("long", "action", "sleep", "seconds", "3"))
	eventuallyTrue(t, "worker busy", func() bool { return count(r.workersOf(t, "busy"), workerBusy, nil) == 1 })
	in := batching.Input{Content: []batching.Item{{Key: "data", Value: []byte("late")}}}
	late := batching.NewJob(context.Background(), "late", in, time.Now(), time.Now().Add(200*time.Millisecond))
	if _, err := r.call(t, "busy", late); !errors.Is(err, batching.ErrExpired) {
		t.Fatalf("late job error = %s, want ErrExpired", errText(err))
	}
	if long.Answered() {
		t.Fatal("the long job ended before the late one expired; the test proves nothing")
	}
	if _, err := await(t, long); err != nil {
		t.Fatal(err)
	}
	if _, err := r.call(t, "busy", newJob("after")); err != nil {
		t.Fatal(err)
	}
	if got := seen(t, dir); !slices.Equal(got, []string{"long", "after"}) {
		t.Errorf("the worker saw %v, want [long after]", got)
	}
}

// TestRegistryUnhealthy keeps a model below its minimum: a second worker of
// the SINGLE model cannot load while the first lives. The model is
// Unhealthy until the minimum comes down again.
func TestRegistryUnhealthy(t *testing.T) {
	r := newTestRegistry(t, func(s *properties.Server) { s.RetryThreshold = 100 })
	r.probe(t, "single", []string{"minWorkers=1", "maxWorkers=2"}, "SINGLE")
	r.mustRegister(t, "single")
	ctx := context.Background()
	if err := r.Scale(ctx, "single", api.ScaleRequest{MinWorker: ptr(2)}); err != nil {
		t.Fatal(err)
	}
	eventuallyTrue(t, "a second worker failed", func() bool { return r.logs.FilterMessage("worker failed to start").Len() > 0 })
	if h := r.Health()["single"]; h.Status != api.StatusUnhealthy {
		t.Errorf("Health with one live worker of two = %+v, want Unhealthy", h)
	}
	if _, err := r.call(t, "single", newJob("served anyway")); err != nil {
		t.Errorf("an Unhealthy model with a live worker: %v", err)
	}
	if err := r.Scale(ctx, "single", api.ScaleRequest{MinWorker: ptr(1), Synchronous: true}); err != nil {
		t.Fatal(err)
	}
	if st := r.status(t, "single"); st != api.StatusHealthy {
		t.Errorf("status after scaling back = %s", st)
	}
}
