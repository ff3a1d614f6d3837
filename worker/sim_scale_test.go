package worker

// Scaling tests of the registry on fake workers, in virtual time:
// temporary workers under queue pressure, idle release, scale requests.

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
)

// peak watches a model's workers while a test runs: the most at once, and
// the most starting at once.
type peak struct {
	workers, starting int
}

func (p *peak) note(ws []api.WorkerRecord) {
	p.workers = max(p.workers, len(ws))
	p.starting = max(p.starting, count(ws, workerStarting, nil))
}

// TestSimScaleUpAndIdle sends a burst one worker cannot keep up with:
// temporary workers are added one at a time up to maxWorkers, and each is
// released exactly max_idle_time after its last request, leaving the
// permanent one.
func TestSimScaleUpAndIdle(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "elastic", "minWorkers=1", "maxWorkers=3", "max_idle_time=5")
		r.mustRegister(t, "elastic")
		var jobs []*batching.Job
		for range 24 {
			jobs = append(jobs, r.submit(t, "elastic", newJob("burst", "action", "sleep", "seconds", "1")))
		}
		var p peak
		for !allAnswered(jobs) {
			advance(50 * time.Millisecond)
			p.note(r.workersOf(t, "elastic"))
		}
		quiet := time.Now()
		if p.workers != 3 || p.starting != 1 {
			t.Errorf("peak %d workers, %d starting at once; want 3 and 1", p.workers, p.starting)
		}
		if n := len(w.startsOf("elastic")); n != 3 {
			t.Errorf("%d workers started, want 3", n)
		}
		for _, j := range jobs {
			if _, err := await(t, j); err != nil {
				t.Fatal(err)
			}
		}
		// Each temporary worker goes max_idle_time after its last request.
		temps := w.live("elastic")[1:]
		slices.SortFunc(temps, func(a, b *fakeRunner) int { return a.lastServed().Compare(b.lastServed()) })
		for _, tr := range temps {
			gone := tr.lastServed().Add(5 * time.Second)
			advance(time.Until(gone) - time.Millisecond)
			if tr.Err() != nil {
				t.Errorf("temporary worker %d gone before max_idle_time", tr.pid)
			}
			advance(time.Millisecond)
			if tr.Err() == nil {
				t.Errorf("temporary worker %d still there max_idle_time after its last request", tr.pid)
			}
		}
		ws := r.workersOf(t, "elastic")
		if len(ws) != 1 || count(ws, workerReady, permanent) != 1 {
			t.Errorf("%v after the quiet: %+v, want the permanent worker only", time.Since(quiet), ws)
		}
	})
}

// TestSimScaleFromZero: a model with no worker gets a temporary one for its
// first request, which is released after max_idle_time.
func TestSimScaleFromZero(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "lazy", "minWorkers=0", "maxWorkers=2", "max_idle_time=10")
		r.mustRegister(t, "lazy")
		if ws := r.workersOf(t, "lazy"); len(ws) != 0 {
			t.Fatalf("workers of a model with minWorkers 0: %+v", ws)
		}
		began := time.Now()
		if _, err := r.call(t, "lazy", newJob("wake up")); err != nil {
			t.Fatal(err)
		}
		if took := time.Since(began); took != fakeLoadTime {
			t.Errorf("the first request took %v, want the load time", took)
		}
		ws := r.workersOf(t, "lazy")
		if len(ws) != 1 || !ws[0].Temporary {
			t.Errorf("after a request with no worker: %+v, want one temporary worker", ws)
		}
		advance(10 * time.Second)
		if ws := r.workersOf(t, "lazy"); len(ws) != 0 {
			t.Errorf("after max_idle_time: %+v", ws)
		}
	})
}

// TestSimScaleAtRunTime changes a model's counts while it serves.
func TestSimScaleAtRunTime(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "knob", "minWorkers=1", "maxWorkers=1", "max_idle_time=1")
		r.mustRegister(t, "knob")
		ctx := context.Background()

		// Up: three permanent workers, all live when the synchronous call returns.
		if err := r.Scale(ctx, "knob", api.ScaleRequest{MinWorker: ptr(3), MaxWorker: ptr(3), Synchronous: true}); err != nil {
			t.Fatal(err)
		}
		if ws := r.workersOf(t, "knob"); count(ws, workerReady, permanent) != 3 {
			t.Fatalf("after scaling to 3: %+v", ws)
		}

		// Down while busy: the surplus stops, the request in flight is answered.
		busy := r.submit(t, "knob", newJob("busy", "action", "sleep", "seconds", "1"))
		settle()
		if err := r.Scale(ctx, "knob", api.ScaleRequest{MinWorker: ptr(1), MaxWorker: ptr(1)}); err != nil {
			t.Fatal(err)
		}
		settle()
		if ws := r.workersOf(t, "knob"); len(ws) != 1 || ws[0].Status != workerBusy {
			t.Errorf("after scaling down to 1: %+v, want the busy worker kept", ws)
		}
		if _, err := await(t, busy); err != nil {
			t.Errorf("the request in flight during the scale down: %v", err)
		}

		// Minimum 0: the last worker becomes temporary and goes after max_idle_time.
		if err := r.Scale(ctx, "knob", api.ScaleRequest{MinWorker: ptr(0), MaxWorker: ptr(2)}); err != nil {
			t.Fatal(err)
		}
		advance(time.Second)
		if ws := r.workersOf(t, "knob"); len(ws) != 0 {
			t.Errorf("a second after the minimum went to 0: %+v", ws)
		}
		if st := r.status(t, "knob"); st != api.StatusHealthy {
			t.Errorf("status with minWorkers 0 and no worker = %s", st)
		}
	})
}

// TestSimScalePromotes raises the minimum while a temporary worker runs:
// it becomes permanent instead of a new process starting next to it.
func TestSimScalePromotes(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "grow", "minWorkers=1", "maxWorkers=2", "max_idle_time=60")
		r.mustRegister(t, "grow")
		var jobs []*batching.Job
		for range 8 {
			jobs = append(jobs, r.submit(t, "grow", newJob("burst", "action", "sleep", "seconds", "1")))
		}
		advance(time.Second)
		if ws := r.workersOf(t, "grow"); count(ws, workerBusy, temporary) != 1 {
			t.Fatalf("during the burst: %+v, want a busy temporary worker", ws)
		}
		if err := r.Scale(context.Background(), "grow", api.ScaleRequest{MinWorker: ptr(2), Synchronous: true}); err != nil {
			t.Fatal(err)
		}
		ws := r.workersOf(t, "grow")
		if len(ws) != 2 || ws[0].Temporary || ws[1].Temporary {
			t.Errorf("after raising the minimum to 2: %+v, want two permanent workers", ws)
		}
		if n := len(w.startsOf("grow")); n != 2 {
			t.Errorf("%d processes started, want 2", n)
		}
		for _, j := range jobs {
			if _, err := await(t, j); err != nil {
				t.Error(err)
			}
		}
	})
}

// TestSimUnhealthy keeps a model below its minimum: a second worker cannot
// load while the first lives. The model is Unhealthy and serves, until the
// minimum comes down again.
func TestSimUnhealthy(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "single", "minWorkers=1", "maxWorkers=2")
		w.set("single", func(s *fakeScript) { s.single = true })
		r.mustRegister(t, "single")
		ctx := context.Background()
		if err := r.Scale(ctx, "single", api.ScaleRequest{MinWorker: ptr(2)}); err != nil {
			t.Fatal(err)
		}
		advance(time.Second)
		if n := r.logs.FilterMessage("worker failed to start").Len(); n == 0 {
			t.Fatal("the second worker did not fail")
		}
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
	}, retryAlways)
}

// TestSimBatches sends a burst to a model with batch_size 4 and a long
// max_batch_delay: the worker gets full batches, and every job its own
// answer.
func TestSimBatches(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "batched", "batch_size=4", "max_batch_delay=200", "minWorkers=1", "maxWorkers=1")
		r.mustRegister(t, "batched")
		var jobs []*batching.Job
		for _, body := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
			jobs = append(jobs, r.submit(t, "batched", newJob(body)))
		}
		for _, j := range jobs {
			resp, err := await(t, j)
			if err != nil || string(resp.Body) != j.ID {
				t.Errorf("job %s: %+v, %v", j.ID, resp, err)
			}
		}
		if n := w.live("batched")[0].servedCount(); n != 8 {
			t.Errorf("served %d", n)
		}
	})
}
