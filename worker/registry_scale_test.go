package worker

import (
	"context"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
)

// TestRegistryScaleUpAndIdle sends a burst that a single worker cannot keep
// up with: temporary workers are added one at a time up to maxWorkers, and
// released after max_idle_time once the burst is over.
func TestRegistryScaleUpAndIdle(t *testing.T) {
	r := newTestRegistry(t)
	r.probe(t, "elastic", []string{"minWorkers=1", "maxWorkers=3", "max_idle_time=1"})
	r.mustRegister(t, "elastic")
	began := time.Now()
	var jobs []*batching.Job
	for range 24 {
		jobs = append(jobs, r.submit(t, "elastic", newJob("burst", "action", "sleep", "seconds", "0.4")))
	}
	peak, starting := 0, 0
	eventuallyTrue(t, "burst answered", func() bool {
		ws := r.workersOf(t, "elastic")
		peak, starting = max(peak, len(ws)), max(starting, count(ws, workerStarting, nil))
		return allAnswered(jobs)
	})
	t.Logf("burst of %d answered after %v; peak %d workers", len(jobs), time.Since(began).Round(time.Millisecond), peak)
	for _, j := range jobs {
		if _, err := await(t, j); err != nil {
			t.Fatal(err)
		}
	}
	if peak != 3 || starting > 1 {
		t.Errorf("peak %d workers, %d starting at once; want 3 and at most 1", peak, starting)
	}
	if n := r.started("elastic"); n != 3 {
		t.Errorf("%d worker processes started, want 3", n)
	}
	quiet := time.Now()
	eventuallyTrue(t, "back to minWorkers", func() bool { return len(r.workersOf(t, "elastic")) == 1 })
	t.Logf("back to 1 worker %v after the burst", time.Since(quiet).Round(time.Millisecond))
	if ws := r.workersOf(t, "elastic"); count(ws, workerReady, permanent) != 1 {
		t.Errorf("left after the quiet: %+v, want the permanent worker", ws)
	}
}

func allAnswered(jobs []*batching.Job) bool {
	for _, j := range jobs {
		if !j.Answered() {
			return false
		}
	}
	return true
}

// TestRegistryScaleAtRunTime changes a model's counts while it serves.
func TestRegistryScaleAtRunTime(t *testing.T) {
	r := newTestRegistry(t)
	r.probe(t, "knob", []string{"minWorkers=1", "maxWorkers=1", "max_idle_time=1"})
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
	eventuallyTrue(t, "a worker busy", func() bool { return count(r.workersOf(t, "knob"), workerBusy, nil) == 1 })
	if err := r.Scale(ctx, "knob", api.ScaleRequest{MinWorker: ptr(1), MaxWorker: ptr(1)}); err != nil {
		t.Fatal(err)
	}
	if _, err := await(t, busy); err != nil {
		t.Errorf("the request in flight during the scale down: %v", err)
	}
	eventuallyTrue(t, "one worker left", func() bool { return len(r.workersOf(t, "knob")) == 1 })

	// Minimum 0: the last worker becomes temporary and goes after max_idle_time.
	if err := r.Scale(ctx, "knob", api.ScaleRequest{MinWorker: ptr(0), MaxWorker: ptr(2)}); err != nil {
		t.Fatal(err)
	}
	eventuallyTrue(t, "no worker left", func() bool { return len(r.workersOf(t, "knob")) == 0 })
	if st := r.status(t, "knob"); st != api.StatusHealthy {
		t.Errorf("status with minWorkers 0 and no worker = %s", st)
	}

	// A request brings a temporary worker back.
	if _, err := r.call(t, "knob", newJob("wake up")); err != nil {
		t.Fatal(err)
	}
	if ws := r.workersOf(t, "knob"); len(ws) != 1 || !ws[0].Temporary {
		t.Errorf("after a request with no worker: %+v, want one temporary worker", ws)
	}
}

func TestSetCounts(t *testing.T) {
	tests := []struct {
		name             string
		min, max         int
		req              api.ScaleRequest
		wantMin, wantMax int
	}{
		{"both", 1, 2, api.ScaleRequest{MinWorker: ptr(3), MaxWorker: ptr(4)}, 3, 4},
		{"min only", 1, 4, api.ScaleRequest{MinWorker: ptr(2)}, 2, 4},
		{"min above max raises max", 1, 2, api.ScaleRequest{MinWorker: ptr(5)}, 5, 5},
		{"max only", 1, 2, api.ScaleRequest{MaxWorker: ptr(8)}, 1, 8},
		{"max below min lowers min", 3, 4, api.ScaleRequest{MaxWorker: ptr(1)}, 1, 1},
		{"max zero", 1, 2, api.ScaleRequest{MaxWorker: ptr(0)}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Model{}
			m.groups = []*group{{m: m, min: tt.min, max: tt.max}, {m: m, min: tt.min, max: tt.max}}
			m.setCounts(tt.req)
			for i, g := range m.groups {
				if g.min != tt.wantMin || g.max != tt.wantMax {
					t.Errorf("group %d: min %d max %d, want %d %d", i, g.min, g.max, tt.wantMin, tt.wantMax)
				}
			}
		})
	}
}

func TestCheckScale(t *testing.T) {
	tests := []struct {
		name string
		req  api.ScaleRequest
		ok   bool
	}{
		{"none", api.ScaleRequest{}, true},
		{"equal", api.ScaleRequest{MinWorker: ptr(2), MaxWorker: ptr(2)}, true},
		{"negative min", api.ScaleRequest{MinWorker: ptr(-1)}, false},
		{"negative max", api.ScaleRequest{MaxWorker: ptr(-1)}, false},
		{"max below min", api.ScaleRequest{MinWorker: ptr(3), MaxWorker: ptr(2)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := checkScale(tt.req); (err == nil) != tt.ok {
				t.Errorf("checkScale = %v, want ok %v", err, tt.ok)
			}
		})
	}
}

// TestRegistryScalePromotes raises the minimum while a temporary worker
// runs: the temporary worker becomes permanent instead of a new process
// starting next to it, so the group never exceeds its maximum.
func TestRegistryScalePromotes(t *testing.T) {
	r := newTestRegistry(t)
	r.probe(t, "grow", []string{"minWorkers=1", "maxWorkers=2", "max_idle_time=60"})
	r.mustRegister(t, "grow")
	var jobs []*batching.Job
	for range 8 {
		jobs = append(jobs, r.submit(t, "grow", newJob("burst", "action", "sleep", "seconds", "0.3")))
	}
	eventuallyTrue(t, "a temporary worker", func() bool {
		return count(r.workersOf(t, "grow"), workerReady, temporary)+count(r.workersOf(t, "grow"), workerBusy, temporary) == 1
	})
	if err := r.Scale(context.Background(), "grow", api.ScaleRequest{MinWorker: ptr(2), Synchronous: true}); err != nil {
		t.Fatal(err)
	}
	ws := r.workersOf(t, "grow")
	if len(ws) != 2 || ws[0].Temporary || ws[1].Temporary {
		t.Errorf("after raising the minimum to 2: %+v, want two permanent workers", ws)
	}
	if n := r.started("grow"); n != 2 {
		t.Errorf("%d processes started, want 2", n)
	}
	for _, j := range jobs {
		if _, err := await(t, j); err != nil {
			t.Error(err)
		}
	}
}
