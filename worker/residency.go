package worker

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/gpu"
)

// errLoadAbandoned ends the wait for room of a load on demand that no
// request waits for any more (they were answered, expired, or their
// clients left): the model goes back to being unloaded.
var errLoadAbandoned = errors.New("worker: load abandoned: no request waits for it")

// residency makes room for the workers about to start: before a worker
// loads, admit reads the memory figures, takes a view of every model,
// plans (planRoom) and carries the plan out: the worker starts, idle
// models are unloaded for it, it waits, or it is refused (507).
type residency struct {
	r *Registry

	// mu is held while one plan is made and carried out, so that two
	// workers never count on the same room. It is taken before any
	// model's lock and never with one held.
	mu     sync.Mutex
	holder *run     // the worker that evicted and waits for its victims to leave; nil when none
	claim  roomNeed // what the holder needs

	nmu     sync.Mutex    // guards changed; a leaf
	changed chan struct{} // closed and replaced when room may have come
	waiters atomic.Int32  // workers waiting for room; notify does nothing without them
}

func newResidency(r *Registry) *residency {
	return &residency{r: r, changed: make(chan struct{})}
}

// notify wakes the workers waiting for room: a model went idle, a worker
// left, a load ended, the right to evict was given back. It takes no lock
// when nobody waits, so that the request path can call it.
func (res *residency) notify() {
	if res.waiters.Load() == 0 {
		return
	}
	res.nmu.Lock()
	close(res.changed)
	res.changed = make(chan struct{})
	res.nmu.Unlock()
}

// subscribe returns the channel that the next notify closes.
func (res *residency) subscribe() <-chan struct{} {
	res.nmu.Lock()
	defer res.nmu.Unlock()
	return res.changed
}

// admit returns once worker w may load: there is room for it, made if need
// be by unloading the least recently used idle models and waiting for them
// to leave. It returns a 507 error when w can never fit (or, for a
// temporary worker, does not fit now), errLoadAbandoned when w's load on
// demand is no longer wanted, and w's context's error when w is stopped.
// The first worker of a load is admitted with the whole minimum of its
// model, so that two models never each hold half of what they need.
func (res *residency) admit(w *run) error {
	if w.isAdmitted() {
		return nil
	}
	res.waiters.Add(1)
	defer res.waiters.Add(-1)
	defer res.release(w)
	for {
		ch := res.subscribe()
		p, err := res.decide(w, res.r.readRoom())
		if err != nil || p.fits() {
			return err
		}
		if err := pauseFor(w, ch, p.retry); err != nil {
			return err
		}
	}
}

// pauseFor waits for a notify, until retry when set, at most scaleTick, or
// until w is stopped.
func pauseFor(w *run, ch <-chan struct{}, retry time.Time) error {
	d := scaleTick
	if !retry.IsZero() {
		d = min(d, max(time.Until(retry), 0))
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-w.ctx.Done():
		return w.ctx.Err()
	}
	return nil
}

// release gives back the right to evict if w holds it.
func (res *residency) release(w *run) {
	res.mu.Lock()
	mine := res.holder == w
	if mine {
		res.holder = nil
	}
	res.mu.Unlock()
	if mine {
		res.notify()
	}
}

// decide plans room for w on figures f and carries the plan out.
func (res *residency) decide(w *run, f roomFigures) (roomPlan, error) {
	res.mu.Lock()
	defer res.mu.Unlock()
	if err := w.ctx.Err(); err != nil {
		return roomPlan{}, err
	}
	if w.isAdmitted() {
		return roomPlan{}, nil // admitted with the first worker of its load
	}
	if w.m.abandonUnwanted(w) {
		return roomPlan{}, errLoadAbandoned
	}
	v, need := res.view(w, f)
	if res.holder != nil && res.holder != w {
		c := res.claim
		v.claim = &c
	}
	p := planRoom(v, need)
	switch {
	case p.err != nil:
		return p, p.err
	case len(p.victims) > 0:
		res.holder, res.claim = w, need
		for _, vic := range p.victims {
			if !vic.m.evict(need.name, vic.cause) {
				return roomPlan{wait: true, retry: time.Now()}, nil // it took work meanwhile: plan again
			}
		}
		return roomPlan{wait: true}, nil
	case p.fits():
		w.m.admitLoad(w)
		if res.holder == w {
			res.holder = nil
		}
	}
	return p, nil
}

// view builds the plan's view of every model, and what w needs.
func (res *residency) view(w *run, f roomFigures) (roomView, roomNeed) {
	srv := res.r.cfg.Server
	v := roomView{
		now: time.Now(), minResidence: srv.MinResidenceTime, maxLoaded: srv.MaxLoadedModels,
		budgetMiB: srv.MemoryBudgetMB, hostMiB: f.hostMiB, devices: f.devices,
	}
	for _, m := range res.r.snapshot() {
		if m != w.m {
			rv, _ := m.residentView(w, f)
			v.models = append(v.models, rv)
		}
	}
	rv, need := w.m.residentView(w, f)
	v.models = append(v.models, rv)
	return v, need
}

// couldFit says whether one load of m could fit, once idle models were
// unloaded: nil when it could, else the 507 error that names what holds the
// memory; evictable reports whether any model could be unloaded for it.
// It starts and changes nothing.
func (res *residency) couldFit(m *Model) (err error, evictable bool) {
	f := res.r.readRoom()
	res.mu.Lock()
	defer res.mu.Unlock()
	w := &run{m: m, g: m.groups[0]}
	v, need := res.view(w, f)
	for _, r := range v.models {
		evictable = evictable || v.candidate(r, need)
	}
	return v.never(need), evictable
}

// roomFigures are the memory figures a plan to make room reads, before any
// lock is taken.
type roomFigures struct {
	hostMiB int64         // available host memory; negative when unknown
	rss     map[int]int64 // the workers' resident memory by pid, MiB
	devices []gpu.Device  // the GPUs' figures; nil without GPUs or when unknown
	gpu     figures       // per-process GPU memory, when there are GPUs
}

// readRoom reads the host's available memory, every worker's RSS and, on a
// GPU host, the devices' figures (fresh: a worker that just left must
// count as gone) and each process's GPU memory. It holds no model's lock
// while it reads.
func (r *Registry) readRoom() roomFigures {
	f := roomFigures{hostMiB: -1, rss: map[int]int64{}}
	if _, avail, err := r.cfg.HostMemory(); err == nil {
		f.hostMiB = int64(avail)
	}
	for _, m := range r.snapshot() {
		for _, pid := range m.workerPIDs() {
			f.rss[pid] = r.cfg.RSS(pid)
		}
	}
	if r.gpus.hasGPU() {
		f.gpu = r.gpus.figures()
		if devs, err := r.gpus.fresh(); err == nil {
			f.devices = devs
		}
	}
	return f
}

// gpuMemory returns what the worker pid pinned to unit holds on it.
func (f roomFigures) gpuMemory(unit string, pid int) (int64, bool) {
	if !f.gpu.gpu {
		return 0, false
	}
	return f.gpu.workerMemory(unit, f.gpu.tree.of(pid))
}

// victim is one model a plan unloads, and why: api.EvictMemory or
// api.EvictLoadedModels.
type victim struct {
	m     *Model
	cause string
}

// copyUnload copies u; nil stays nil.
func copyUnload(u *api.Unload) *api.Unload {
	if u == nil {
		return nil
	}
	c := *u
	return &c
}
