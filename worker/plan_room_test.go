package worker

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/gpu"
)

// roomWorld builds the views of a plan-to-make-room test: models by name,
// each an idle resident holding hostMiB, last used at its index in
// minutes after t0.
type roomWorld struct {
	t0     time.Time
	models map[string]*Model
}

func newRoomWorld() *roomWorld {
	return &roomWorld{t0: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), models: map[string]*Model{}}
}

func (w *roomWorld) model(name string) *Model {
	if w.models[name] == nil {
		w.models[name] = &Model{name: name}
	}
	return w.models[name]
}

// resident is model name loaded with one worker holding hostMiB, used
// used minutes after t0, loaded an hour before t0.
func (w *roomWorld) resident(name string, hostMiB int64, used int) residentView {
	return residentView{m: w.model(name), name: name, workers: 1, hostMiB: hostMiB, gpuMiB: map[string]int64{},
		lastUsed: w.t0.Add(time.Duration(used) * time.Minute), readyAt: w.t0.Add(-time.Hour)}
}

// need is a fresh permanent worker of name that needs hostMiB.
func (w *roomWorld) need(name string, hostMiB int64) roomNeed {
	return roomNeed{m: w.model(name), name: name, fresh: true, hostMiB: hostMiB}
}

// view is a roomView at t0 + 10 minutes, with a budget and host memory
// that do not bind unless changed.
func (w *roomWorld) view(models ...residentView) roomView {
	return roomView{now: w.t0.Add(10 * time.Minute), minResidence: 5 * time.Second, hostMiB: -1, models: models}
}

func victimNames(p roomPlan) string {
	var names []string
	for _, v := range p.victims {
		names = append(names, v.m.name+":"+v.cause)
	}
	return strings.Join(names, ",")
}

func TestPlanRoom(t *testing.T) {
	w := newRoomWorld()
	with := func(r residentView, change func(*residentView)) residentView { change(&r); return r }
	budget := func(v roomView, mib int64) roomView { v.budgetMiB = mib; return v }
	busy := func(r *residentView) { r.busy = true }
	pinned := func(r *residentView) { r.pinned = true }
	leaving := func(r *residentView) { r.leaving = true }
	a, b, c := w.resident("a", 1024, 1), w.resident("b", 1024, 2), w.resident("c", 1024, 3)
	tests := []struct {
		name    string
		view    roomView
		need    roomNeed
		victims string // model:cause, in order
		wait    bool
		errHas  []string
	}{
		{name: "fits within the budget", view: budget(w.view(a), 2560), need: w.need("x", 1024)},
		{name: "no limit set", view: w.view(a, b, c), need: w.need("x", 1<<40)},
		{name: "the least recently used goes", view: budget(w.view(b, a), 2560), need: w.need("x", 1024),
			victims: "a:memory"},
		{name: "no more than it takes", view: budget(w.view(a, b, c), 3072), need: w.need("x", 1024),
			victims: "a:memory"},
		{name: "as many as it takes", view: budget(w.view(a, b, c), 3072), need: w.need("x", 2048),
			victims: "a:memory,b:memory"},
		{name: "a busy model is passed over", view: budget(w.view(with(a, busy), b), 2560), need: w.need("x", 1024),
			victims: "b:memory"},
		{name: "all busy: wait", view: budget(w.view(with(a, busy), with(b, busy)), 2560), need: w.need("x", 1024),
			wait: true},
		{name: "pinned ones are passed over", view: budget(w.view(with(a, pinned), b), 2560), need: w.need("x", 1024),
			victims: "b:memory"},
		{name: "all pinned: never (507 naming them)", view: budget(w.view(with(a, pinned), with(b, pinned)), 2560),
			need: w.need("x", 1024), errHas: []string{"model x does not fit", "memory_budget_mb (2560) has 512 MiB left",
				"held by a (1024 MiB, pinned), b (1024 MiB, pinned)"}},
		{name: "more than the budget alone: never", view: budget(w.view(a), 2560), need: w.need("x", 3000),
			errHas: []string{"it needs 3000 MiB"}},
		{name: "what leaves makes room: wait, evict no more", view: budget(w.view(with(a, leaving), b), 2560),
			need: w.need("x", 1024), wait: true},
		{name: "another worker's claim: wait", view: func() roomView {
			v := budget(w.view(a, b), 3072)
			c := w.need("y", 1024)
			v.claim = &c
			return v
		}(), need: w.need("x", 1024), wait: true},
		{name: "a claim of the same model takes no second place", view: func() roomView {
			v := w.view(a)
			v.maxLoaded = 2
			c := w.need("x", 0)
			v.claim = &c
			return v
		}(), need: w.need("x", 0)},
		{name: "its own workers count, and are never evicted", view: budget(w.view(a, w.resident("x", 1024, 0)), 2560),
			need: roomNeed{m: w.model("x"), name: "x", hostMiB: 1024}, victims: "a:memory"},
		{name: "the loaded-model cap", view: func() roomView { v := w.view(b, a); v.maxLoaded = 2; return v }(),
			need: w.need("x", 0), victims: "a:max_loaded_models"},
		{name: "the cap counts models, not workers", view: func() roomView {
			v := w.view(a, b)
			v.maxLoaded = 2
			return v
		}(), need: roomNeed{m: w.model("a"), name: "a", hostMiB: 1024}},
		{name: "the cap with every loaded model pinned: never", view: func() roomView {
			v := w.view(with(a, pinned))
			v.maxLoaded = 1
			return v
		}(), need: w.need("x", 0), errHas: []string{"max_loaded_models (1) models are loaded", "a (1024 MiB, pinned)"}},
		{name: "host memory short: evict what frees it", view: func() roomView {
			v := w.view(a, b)
			v.hostMiB = 1200
			return v
		}(), need: roomNeed{m: w.model("x"), name: "x", fresh: true, hostMiB: 1024, reservedMiB: 500}, victims: "a:memory"},
		{name: "a temporary worker does not wait", view: budget(w.view(with(a, busy)), 1024),
			need:   roomNeed{m: w.model("x"), name: "x", fresh: true, hostMiB: 1024, temporary: true},
			errHas: []string{"model x does not fit", "a (1024 MiB, busy)"}},
		{name: "a temporary worker evicts", view: budget(w.view(a), 1024),
			need: roomNeed{m: w.model("x"), name: "x", fresh: true, hostMiB: 1024, temporary: true}, victims: "a:memory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := planRoom(tt.view, tt.need)
			if got := victimNames(p); got != tt.victims || p.wait != tt.wait {
				t.Errorf("victims %q, wait %v; want %q, %v", got, p.wait, tt.victims, tt.wait)
			}
			if tt.errHas == nil {
				if p.err != nil {
					t.Errorf("err = %v", p.err)
				}
				return
			}
			if !errors.Is(p.err, api.ErrInsufficientMemory) {
				t.Fatalf("err = %v, want a 507", p.err)
			}
			for _, want := range tt.errHas {
				if !strings.Contains(p.err.Error(), want) {
					t.Errorf("err = %q, want it to say %q", p.err, want)
				}
			}
		})
	}
}

// TestPlanRoomResidence: a model that loaded less than the minimum
// residence ago is not evicted; the plan says when it may be.
func TestPlanRoomResidence(t *testing.T) {
	w := newRoomWorld()
	v := w.view()
	v.budgetMiB = 1024
	fresh := w.resident("a", 1024, 0)
	fresh.readyAt = v.now.Add(-2 * time.Second)
	v.models = []residentView{fresh}
	p := planRoom(v, w.need("x", 1024))
	if !p.wait || len(p.victims) > 0 || !p.retry.Equal(fresh.readyAt.Add(v.minResidence)) {
		t.Fatalf("plan %+v, want a wait until %v", p, fresh.readyAt.Add(v.minResidence))
	}
	v.now = p.retry
	if p := planRoom(v, w.need("x", 1024)); victimNames(p) != "a:memory" {
		t.Errorf("at the end of the residence: %+v, want a evicted", p)
	}
	loading := fresh
	loading.readyAt = time.Time{}
	v.models = []residentView{loading}
	if p := planRoom(v, w.need("x", 1024)); !p.wait || !p.retry.IsZero() {
		t.Errorf("a model still loading: %+v, want a wait without a time", p)
	}
}

// TestPlanRoomGPU: on a GPU that is short, only models that hold memory
// on that GPU are evicted.
func TestPlanRoomGPU(t *testing.T) {
	w := newRoomWorld()
	v := w.view()
	v.devices = gpuFree(1000, 1000)
	a, b := w.resident("a", 0, 1), w.resident("b", 0, 2)
	a.gpuMiB["GPU-b"] = 20000 // on the other GPU
	b.gpuMiB["GPU-a"] = 10000
	v.models = []residentView{a, b}
	need := roomNeed{m: w.model("x"), name: "x", fresh: true, gpu: &gpu.Request{Allowed: []int{0}, RequiredMiB: 8000, ReservedMiB: 500}}
	if p := planRoom(v, need); victimNames(p) != "b:memory" {
		t.Errorf("plan %+v, want b (on gpu 0) evicted, not a", p)
	}
	need.gpu.RequiredMiB = 30000
	p := planRoom(v, need)
	if !errors.Is(p.err, api.ErrInsufficientMemory) || !strings.Contains(p.err.Error(), "gpu 0 has 1000 MiB free") {
		t.Errorf("plan %+v, want a 507: gpu 0 cannot hold 30000 MiB", p)
	}
	v.devices[0].Err, v.devices[0].Memory = "GetMemoryInfo: ERROR_GPU_IS_LOST", nil
	need.gpu.RequiredMiB = 8000
	if p := planRoom(v, need); !p.fits() {
		t.Errorf("a GPU that is down: %+v, want no opinion (placement says so)", p)
	}
}
