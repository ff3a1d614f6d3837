package worker

import (
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/gpu"
)

// A model's residency: whether it holds workers, when it was last used,
// and its loads and unloads. A model loads when it is registered (unless
// load_on_demand leaves it unloaded at start) and, once unloaded, on its
// next request or scale; it unloads when it is evicted to make room for
// another (residency.go), or, without a minimum, when its last worker goes
// idle.

// pinnedLocked reports whether the model must never be evicted: its
// pinned key when set; else, unless models load on demand, whether it has
// a minimum of workers (DJL keeps minWorkers running).
func (m *Model) pinnedLocked() bool {
	if m.cfg.Pinned != nil {
		return *m.cfg.Pinned
	}
	return !m.reg.cfg.Server.LoadOnDemand && m.totalMinLocked() >= 1
}

// slotsLocked counts the model's worker slots, whatever their state.
func (m *Model) slotsLocked() int {
	n := 0
	for _, g := range m.groups {
		n += len(g.workers)
	}
	return n
}

// liveLocked counts the model's workers that take requests.
func (m *Model) liveLocked() int {
	n := 0
	for _, g := range m.groups {
		n += g.live()
	}
	return n
}

// loadedLocked reports whether the model has a worker that takes requests.
func (m *Model) loadedLocked() bool {
	return !m.state.unloading() && m.liveLocked() > 0
}

// loaded is loadedLocked with the lock taken.
func (m *Model) loaded() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.loadedLocked()
}

// onDemandNow reports whether the model is not loaded because it loads on
// demand: unloaded, unloading, or loading for a request.
func (m *Model) onDemandNow() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.onDemand()
}

// busyLocked reports whether the model has work in hand: it is loading, a
// request waits in its queue or in a batch being filled, a worker took a
// batch and has not yet marked itself busy (the queue handed out more jobs
// than the workers took), or a worker that holds room is busy or loading.
func (m *Model) busyLocked() bool {
	if m.state.loading() {
		return true
	}
	q := m.queue
	if q.Held() > 0 || q.Stats().Dispatched > m.taken.Load() {
		return true
	}
	for _, g := range m.groups {
		for _, w := range g.workers {
			if w.holdsWork() {
				return true
			}
		}
	}
	return false
}

// took notes n jobs a worker took from the queue, after it marked itself
// busy with them.
func (m *Model) took(n int) {
	m.taken.Add(uint64(n))
	m.used()
}

// idled notes a worker that has nothing left to do: the model was used
// now, and a worker waiting for room may find this model idle.
func (m *Model) idled() {
	m.used()
	m.reg.res.notify()
}

// used notes that the model was used now.
func (m *Model) used() { m.lastUsed.Store(time.Now().UnixNano()) }

// lastUsedTime returns when the model was last used; zero for never.
func (m *Model) lastUsedTime() time.Time {
	n := m.lastUsed.Load()
	if n == 0 {
		return time.Time{}
	}
	return recordTime(time.Unix(0, n))
}

// admitLoad marks w as holding room. The first worker of a load brings the
// model's other permanent workers that wait in with it: the plan counted
// the whole minimum.
func (m *Model) admitLoad(w *run) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fresh := true
	for _, g := range m.groups {
		for _, x := range g.workers {
			fresh = fresh && !x.isAdmitted()
		}
	}
	w.setAdmitted()
	if !fresh || w.isTemporary() {
		return
	}
	for _, g := range m.groups {
		for _, x := range g.workers {
			if !x.isTemporary() && !x.stopping() {
				x.setAdmitted()
			}
		}
	}
}

// abandonUnwanted gives up a load that no request waits for any more
// while no worker of the model serves: a load on demand leaves the model
// unloaded again and its workers stop (evAbandon); a temporary worker that
// would wake a model without a minimum just stops. It reports whether it
// gave up.
func (m *Model) abandonUnwanted(w *run) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.queue.Held() > 0 || m.liveLocked() > 0 {
		return false
	}
	switch {
	case m.fireLocked(evAbandon, cause{}):
		m.changedLocked()
	case w.isTemporary():
		w.stop()
	default:
		return false
	}
	m.reg.log.Info("model load abandoned: no request waits for it", zap.String("model", m.name))
	return true
}

// evict unloads the model to make room for model forModel, if it may be:
// ready, holding workers, idle, not pinned (evEvict). It reports whether
// it did. Its workers stop (they have nothing to finish) and the model is
// unloaded once they are gone; a request that comes meanwhile loads it
// again after that.
func (m *Model) evict(forModel, why string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.slotsLocked() == 0 || m.busyLocked() || m.pinnedLocked() {
		return false
	}
	if !m.fireLocked(evEvict, cause{forModel: forModel, evicted: why}) {
		return false
	}
	m.changedLocked()
	return true
}

// lastLeftLocked follows the model's last worker slot out (w): the load
// timer stops; an unloading model is unloaded, and loads again if a scale
// or a request asked meanwhile (evWorkersGone); a loaded model whose last
// worker went for want of work records that (evIdledOut).
func (m *Model) lastLeftLocked(w *run) {
	m.loadBegan = time.Time{}
	ev := evWorkersGone
	if w.wentIdle() {
		ev = evIdledOut
	}
	m.fireLocked(ev, cause{})
}

// workerPIDs returns the pids of the model's worker processes.
func (m *Model) workerPIDs() []int {
	m.mu.Lock()
	defer m.mu.Unlock()
	var pids []int
	for _, g := range m.groups {
		for _, w := range g.workers {
			if pid, _ := w.procInfo(); pid != 0 {
				pids = append(pids, pid)
			}
		}
	}
	return pids
}

// residentView is the model as a plan to make room sees it, on figures f,
// leaving out worker except (the one that asks); need is what except
// needs: for the first permanent worker of a load, the model's whole
// minimum. It updates what one worker of the model was measured to hold.
func (m *Model) residentView(except *run, f roomFigures) (residentView, roomNeed) {
	m.mu.Lock()
	defer m.mu.Unlock()
	rv := residentView{
		m: m, name: m.name, pinned: m.pinnedLocked(), busy: m.busyLocked(),
		leaving: m.state.leaving(),
		readyAt: m.readyAt, gpuMiB: map[string]int64{}, loadGPU: map[string]int64{},
	}
	if m.state.loading() {
		rv.readyAt = time.Time{}
	}
	rv.lastUsed = later(m.lastUsedTime(), rv.readyAt)
	for _, g := range m.groups {
		for _, w := range g.workers {
			if w != except && w.isAdmitted() {
				m.addWorker(&rv, g, w, f)
			}
		}
	}
	return rv, m.needLocked(except, rv.workers == 0, f)
}

// addWorker counts what worker w of group g holds into rv: its declared
// needs, or what it was measured to hold where that is more.
func (m *Model) addWorker(rv *residentView, g *group, w *run, f roomFigures) {
	rv.workers++
	pid, unit := w.procInfo()
	host := max(m.needs.hostRequired, 0)
	if rss, ok := f.rss[pid]; ok && pid != 0 {
		m.peakHostMiB = max(m.peakHostMiB, rss)
		host = max(host, rss)
	} else if pid == 0 {
		host = max(host, m.peakHostMiB)
		rv.loadMiB += host
	}
	rv.hostMiB += host
	if !g.isGPU() {
		return
	}
	if unit == "" {
		unit = gpuUUID(f.devices, g.device.DeviceID) // a worker that has not chosen yet: its GPU, unless in MIG mode
	}
	if unit == "" {
		return
	}
	mib := max(m.needs.gpuRequired, 0)
	if used, ok := f.gpuMemory(unit, pid); ok && pid != 0 {
		m.peakGPUMiB = max(m.peakGPUMiB, used)
		mib = max(mib, used)
	} else if pid == 0 {
		mib = max(mib, m.peakGPUMiB)
		rv.loadGPU[unit] += mib
	}
	rv.gpuMiB[unit] += mib
}

// gpuUUID returns the UUID of GPU index among devs when it is not in MIG
// mode; "" otherwise.
func gpuUUID(devs []gpu.Device, index int) string {
	for _, d := range devs {
		if d.Index == index && !d.MIG {
			return d.UUID
		}
	}
	return ""
}

// needLocked is what worker w needs to start; fresh says the model holds
// no room yet.
func (m *Model) needLocked(w *run, fresh bool, f roomFigures) roomNeed {
	n := roomNeed{m: m, name: m.name, fresh: fresh, reservedMiB: m.needs.hostReserved, temporary: w.isTemporary() && !fresh}
	workers := 1
	if fresh && !n.temporary {
		workers = max(m.totalMinLocked(), 1)
	}
	n.hostMiB = int64(workers) * max(m.needs.hostRequired, m.peakHostMiB, 0)
	if w.g != nil && w.g.isGPU() && f.devices != nil {
		req := m.needs.gpuRequest([]int{w.g.device.DeviceID}, nil)
		req.RequiredMiB = max(req.RequiredMiB, m.peakGPUMiB)
		n.gpu = &req
	}
	return n
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
