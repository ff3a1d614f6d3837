package worker

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/gpu"
)

// Making room is a pure plan as well: planRoom looks at a roomView (every
// model that holds workers, copied under each model's lock, with the memory
// figures read before any lock was taken) and at what one worker about to
// start needs, and says whether the worker fits, which idle models to
// unload first to make it fit, whether to wait for room that is coming, or
// why it can never fit. The driver (residency.admit) reads, plans and
// carries the plan out; the plan reads nothing and changes nothing.

// roomView is what a plan to make room decides on.
type roomView struct {
	now          time.Time
	minResidence time.Duration // a model that loaded less than this ago is not evicted
	maxLoaded    int           // max_loaded_models; 0 for no cap
	budgetMiB    int64         // memory_budget_mb; 0 for no budget
	hostMiB      int64         // host memory available now; negative when unknown
	devices      []gpu.Device  // the GPUs' figures; nil without GPUs, or when they cannot be read
	models       []residentView
	// claim is what the worker that holds the right to evict needs, when
	// that is another model's worker: room made for it is not for others.
	claim *roomNeed
}

// residentView is one model as a plan to make room sees it.
type residentView struct {
	m        *Model
	name     string
	pinned   bool
	busy     bool // work in hand: a request queued, in a batch being filled or in flight, or a worker loading
	leaving  bool // its workers are on their way out (unloading, FAILED, removed): what they hold comes back
	workers  int  // worker slots that hold memory, or will once loaded
	hostMiB  int64
	loadMiB  int64            // the part of hostMiB that workers still loading have yet to take
	gpuMiB   map[string]int64 // what its workers hold per GPU or MIG device UUID
	loadGPU  map[string]int64 // GPU memory that workers still loading have yet to take, per device UUID
	lastUsed time.Time        // its last request, or the end of its last load if later
	readyAt  time.Time        // when its last load ended; zero while it loads
}

// roomNeed is what one worker about to start needs.
type roomNeed struct {
	m           *Model
	name        string
	fresh       bool  // its model has no worker: it takes a place under max_loaded_models
	hostMiB     int64 // host memory: the declared need, or what the model's workers were measured to hold, whichever is more
	reservedMiB int64 // host memory that must stay free (reserved_memory_mb)
	gpu         *gpu.Request
	temporary   bool // a scale-up worker of a model that serves: it never waits for room
}

// roomPlan is what a plan to make room says.
type roomPlan struct {
	victims []victim  // unload these (least recently used first), then plan again
	wait    bool      // no room yet: wait for models to go idle or leave
	retry   time.Time // when a model that blocks the way passes its minimum residence; zero for none
	err     error     // the worker can never fit (507): it names what holds the memory
}

// fits reports whether the worker may start now.
func (p roomPlan) fits() bool { return len(p.victims) == 0 && !p.wait && p.err == nil }

// shortage is the set of limits a worker does not fit within.
type shortage struct{ cap, budget, host, gpu bool }

func (s shortage) any() bool { return s.cap || s.budget || s.host || s.gpu }

// cause is why a model unloaded for this shortage is evicted: memory when
// memory is short, else the loaded-model cap.
func (s shortage) cause() string {
	if s.budget || s.host || s.gpu {
		return api.EvictMemory
	}
	return api.EvictLoadedModels
}

// room is what is taken: models loaded, host memory held and available,
// and the GPUs' free memory, as the plan assumes models gone.
type room struct {
	loaded  int
	usedMiB int64
	freeMiB int64 // negative when unknown
	devices []gpu.Device
}

// planRoom plans room for need. A worker that fits now starts. Otherwise,
// when even unloading every model that is not pinned would not make it fit,
// it never can (507). When unloading the least recently used models that
// are idle, not pinned and past their minimum residence makes it fit, those
// are the victims, and no more than it takes. Else it waits: for what
// leaving models give back, for models to go idle or pass their residence.
// Only one worker at a time evicts (the claim): while another one waits for
// its victims to leave, a worker that does not fit waits too. A temporary
// worker (a scale-up) evicts like any other, but never waits for models to
// go idle: it gives up with the 507.
func planRoom(v roomView, need roomNeed) roomPlan {
	base := v.taken(need, nil)
	if v.claim != nil {
		base = base.plus(*v.claim, need)
	}
	if !v.short(base, need).any() {
		return roomPlan{}
	}
	if err := v.never(need); err != nil {
		return roomPlan{err: err}
	}
	leaving := v.taken(need, func(r residentView) bool { return r.leaving })
	if v.claim != nil || !v.short(leaving, need).any() {
		return v.waitPlan(need, time.Time{})
	}
	return v.pickVictims(need)
}

// waitPlan is the plan of a worker that must wait for room, or, when it is
// a temporary one, give up.
func (v roomView) waitPlan(need roomNeed, retry time.Time) roomPlan {
	if need.temporary {
		return roomPlan{err: v.refusal(need, v.short(v.taken(need, nil), need))}
	}
	return roomPlan{wait: true, retry: retry}
}

// pickVictims returns the least recently used evictable models that make
// need fit, each taken only when it frees something that is short. When
// those that may be evicted now do not make it fit, it evicts none (a
// worker that evicts waits for its victims to leave, and must not wait for
// more than that): the worker waits, or a temporary one gives up.
func (v roomView) pickVictims(need roomNeed) roomPlan {
	gone := map[*Model]bool{}
	without := func(r residentView) bool { return r.leaving || gone[r.m] }
	var victims []victim
	for _, c := range v.evictable(need) {
		s := v.short(v.taken(need, without), need)
		if !v.frees(c, s, need) {
			continue
		}
		gone[c.m] = true
		victims = append(victims, victim{m: c.m, cause: s.cause()})
		if !v.short(v.taken(need, without), need).any() {
			return roomPlan{victims: victims}
		}
	}
	return v.waitPlan(need, v.nextResident(need))
}

// taken adds up what the models hold (need's own model's other workers
// included), leaving out those for which gone is true.
func (v roomView) taken(need roomNeed, gone func(residentView) bool) room {
	rm := room{freeMiB: v.hostMiB, devices: v.devices}
	for _, r := range v.models {
		if gone != nil && gone(r) {
			if rm.freeMiB >= 0 {
				rm.freeMiB += r.hostMiB - r.loadMiB
			}
			for unit, mib := range r.gpuMiB {
				rm.devices = gpu.Give(rm.devices, unit, uint64(max(mib-r.loadGPU[unit], 0)))
			}
			continue
		}
		if r.m != need.m && r.workers > 0 {
			rm.loaded++
		}
		rm.usedMiB += r.hostMiB
		if rm.freeMiB >= 0 {
			rm.freeMiB -= r.loadMiB
		}
		for unit, mib := range r.loadGPU {
			rm.devices = gpu.Take(rm.devices, unit, uint64(max(mib, 0)))
		}
	}
	return rm
}

// plus counts claim c as taken, for need.
func (rm room) plus(c, need roomNeed) room {
	if c.fresh && c.m != need.m {
		rm.loaded++
	}
	rm.usedMiB += c.hostMiB
	if rm.freeMiB >= 0 {
		rm.freeMiB -= c.hostMiB
	}
	if c.gpu != nil && rm.devices != nil {
		if u, err := gpu.Place(rm.devices, *c.gpu); err == nil {
			rm.devices = gpu.Take(rm.devices, u.UUID, uint64(max(c.gpu.RequiredMiB, 0)))
		}
	}
	return rm
}

// short says which limits need does not fit within, given rm. A GPU that
// is down is no shortage that unloading a model can mend: placement
// reports it.
func (v roomView) short(rm room, need roomNeed) shortage {
	var s shortage
	s.cap = need.fresh && v.maxLoaded > 0 && rm.loaded >= v.maxLoaded
	s.budget = v.budgetMiB > 0 && rm.usedMiB+need.hostMiB > v.budgetMiB
	s.host = rm.freeMiB >= 0 && gpu.CheckHost(uint64(rm.freeMiB), need.hostMiB, need.reservedMiB) != nil
	if need.gpu != nil && rm.devices != nil {
		_, err := gpu.Place(rm.devices, *need.gpu)
		s.gpu = errors.Is(err, gpu.ErrInsufficientMemory) && !errors.Is(err, gpu.ErrDeviceDown)
	}
	return s
}

// frees reports whether unloading c helps with what is short.
func (v roomView) frees(c residentView, s shortage, need roomNeed) bool {
	if s.cap || (s.budget || s.host) && c.hostMiB > 0 {
		return true
	}
	if !s.gpu {
		return false
	}
	for unit, mib := range c.gpuMiB {
		if mib > 0 && unitAllowed(v.devices, unit, need.gpu.Allowed) {
			return true
		}
	}
	return false
}

// unitAllowed reports whether the GPU or MIG device unit is on one of the
// allowed GPUs (nil: all).
func unitAllowed(devs []gpu.Device, unit string, allowed []int) bool {
	for _, u := range gpu.Units(devs) {
		if u.UUID == unit {
			return allowed == nil || slices.Contains(allowed, u.Device)
		}
	}
	return false
}

// candidate reports whether r could ever be evicted for need: it holds
// workers, is not leaving, is not pinned and is another model.
func (v roomView) candidate(r residentView, need roomNeed) bool {
	return r.m != need.m && r.workers > 0 && !r.leaving && !r.pinned
}

// evictable returns the models that may be unloaded now, least recently
// used first: candidates that are idle and past their minimum residence.
func (v roomView) evictable(need roomNeed) []residentView {
	var out []residentView
	for _, r := range v.models {
		if v.candidate(r, need) && !r.busy && v.resident(r) {
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b residentView) int {
		if c := a.lastUsed.Compare(b.lastUsed); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return out
}

// resident reports whether r has loaded and stayed its minimum residence.
func (v roomView) resident(r residentView) bool {
	return !r.readyAt.IsZero() && !v.now.Before(r.readyAt.Add(v.minResidence))
}

// nextResident is when the first idle candidate still within its minimum
// residence passes it; zero when none is.
func (v roomView) nextResident(need roomNeed) time.Time {
	var next time.Time
	for _, r := range v.models {
		if !v.candidate(r, need) || r.busy || r.readyAt.IsZero() || v.resident(r) {
			continue
		}
		if at := r.readyAt.Add(v.minResidence); next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next
}

// never returns why need cannot fit even with every model that is not
// pinned unloaded (507), or nil when it can.
func (v roomView) never(need roomNeed) error {
	s := v.short(v.taken(need, func(r residentView) bool { return r.leaving || v.candidate(r, need) }), need)
	if !s.any() {
		return nil
	}
	return v.refusal(need, s)
}

// refusal is the 507 error of a worker that does not fit: the limits it
// meets and the models that hold what it needs.
func (v roomView) refusal(need roomNeed, s shortage) error {
	rm := v.taken(need, nil)
	var why []string
	if s.cap {
		why = append(why, fmt.Sprintf("max_loaded_models (%d) models are loaded", v.maxLoaded))
	}
	if s.budget {
		why = append(why, fmt.Sprintf("it needs %d MiB and memory_budget_mb (%d) has %d MiB left",
			need.hostMiB, v.budgetMiB, max(v.budgetMiB-rm.usedMiB, 0)))
	}
	if s.host {
		why = append(why, gpu.CheckHost(uint64(max(rm.freeMiB, 0)), need.hostMiB, need.reservedMiB).Error())
	}
	if s.gpu {
		_, err := gpu.Place(rm.devices, *need.gpu)
		why = append(why, err.Error())
	}
	return fmt.Errorf("%w: model %s does not fit: %s; %s", api.ErrInsufficientMemory, need.name,
		strings.Join(why, "; "), v.holders(need))
}

// holders names the models that hold memory, with what each holds and
// why it cannot be evicted.
func (v roomView) holders(need roomNeed) string {
	var parts []string
	for _, r := range v.models {
		if r.m == need.m || r.workers == 0 {
			continue
		}
		part := fmt.Sprintf("%s (%d MiB", r.name, r.hostMiB)
		for _, unit := range sortedKeys(r.gpuMiB) {
			part += fmt.Sprintf(", %d MiB on %s", r.gpuMiB[unit], unit)
		}
		switch {
		case r.pinned:
			part += ", pinned"
		case r.leaving:
			part += ", unloading"
		case r.busy:
			part += ", busy"
		}
		parts = append(parts, part+")")
	}
	if len(parts) == 0 {
		return "no other model holds memory"
	}
	return "held by " + strings.Join(parts, ", ")
}

func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
