package worker

import (
	"context"
	"slices"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
)

// scaleTick is how often the scaler looks at the queue without being poked.
const scaleTick = time.Second

// scaler adds temporary workers, one at a time, while the model's queue is
// long or no worker is alive, and brings the groups back to their minimum.
func (m *Model) scaler() {
	defer m.wg.Done()
	tick := time.NewTicker(scaleTick)
	defer tick.Stop()
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-m.scaleReq:
		case <-tick.C:
		}
		m.grow()
	}
}

// grow starts the missing permanent workers, or else at most one
// temporary worker when batching.ScaleUp says so. Placing a temporary GPU
// worker reads device figures, which happens without the model's lock:
// /ping and every submit wait on that lock, and NVML can block for seconds
// on a failing GPU.
func (m *Model) grow() {
	room := m.growLocked()
	if room == nil {
		return
	}
	g, err := m.reg.placeTemporary(m, room)
	if err != nil || g == nil {
		m.reg.log.Debug("no room for a temporary worker", zap.String("model", m.name), zap.Error(err))
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if slices.Contains(m.temporaryRoomLocked(), g) {
		m.startLocked(g, true)
	}
}

// growLocked starts the missing permanent workers, if any, and otherwise
// returns the groups that may take a temporary worker (nil for none).
func (m *Model) growLocked() []*group {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state == stateFailed || m.state == stateRemoved || m.idleDrainLocked() {
		return nil
	}
	for _, g := range m.groups {
		if g.permanent() < g.min {
			m.fillLocked()
			return nil
		}
	}
	return m.temporaryRoomLocked()
}

// temporaryRoomLocked returns the groups that may take a temporary worker
// now: the model is ready, no worker is starting, and the queue asks for
// one.
func (m *Model) temporaryRoomLocked() []*group {
	if m.state != stateReady || m.anyStartingLocked() {
		return nil
	}
	return m.roomLocked()
}

// roomLocked returns the groups that may take a temporary worker when
// batching.ScaleUp says the model needs one, else nil.
func (m *Model) roomLocked() []*group {
	alive, limit := 0, 0
	var room []*group
	for _, g := range m.groups {
		alive += g.live()
		limit += g.max
		if g.active() < g.max {
			room = append(room, g)
		}
	}
	if !batching.ScaleUp(m.queue.Len(), m.cfg.BatchSize, alive, limit) {
		return nil
	}
	return room
}

func (m *Model) anyStartingLocked() bool {
	for _, g := range m.groups {
		if g.starting() {
			return true
		}
	}
	return false
}

// startLocked adds one worker to g and starts its goroutine.
func (m *Model) startLocked(g *group, temporary bool) {
	ctx, cancel := context.WithCancel(m.ctx)
	w := &run{g: g, id: m.nextWorkerID(), temporary: temporary, ctx: ctx, cancel: cancel,
		done: make(chan struct{}), state: workerStarting, began: time.Now()}
	g.workers = append(g.workers, w)
	m.wg.Add(1)
	go w.loop()
	m.changedLocked()
}

// nextWorkerID numbers the model's workers from 1.
func (m *Model) nextWorkerID() int {
	m.workerSeq++
	return m.workerSeq
}

// setCounts changes every group's minimum and maximum as scaledCounts says.
func (m *Model) setCounts(req api.ScaleRequest) {
	for _, g := range m.groups {
		g.min, g.max = scaledCounts(g.min, g.max, req)
	}
}

// maxAfter is the sum of the groups' maximums after req; m.mu is held.
func (m *Model) maxAfter(req api.ScaleRequest) int {
	after := make([]*group, len(m.groups))
	for i, g := range m.groups {
		_, hi := scaledCounts(g.min, g.max, req)
		after[i] = &group{max: hi}
	}
	return sumMax(after)
}

// scaledCounts returns a group's minimum and maximum after req. A maximum
// set below the minimum (alone) lowers the minimum, and a minimum set above
// the maximum (alone) raises the maximum.
func scaledCounts(lo, hi int, req api.ScaleRequest) (int, int) {
	if req.MinWorker != nil {
		lo = *req.MinWorker
	}
	if req.MaxWorker != nil {
		hi = *req.MaxWorker
	}
	switch {
	case hi >= lo:
	case req.MaxWorker != nil && req.MinWorker == nil:
		lo = hi
	default:
		hi = lo
	}
	return lo, hi
}

// rebalanceLocked fits the running workers to new counts: temporary workers
// become permanent while a group is below its minimum, permanent workers
// beyond the minimum become temporary, and workers beyond the maximum stop
// after their current batch, temporary ones first. fillLocked then starts
// what is still missing.
func (m *Model) rebalanceLocked() {
	for _, g := range m.groups {
		g.retag(true, g.min-g.permanent())
		g.retag(false, g.permanent()-g.min)
		g.shrink()
	}
}

// retag turns up to n workers that are temporary (when promote is set) or
// permanent (else) into the other kind. Promotion takes serving workers
// first; demotion takes the others (starting, in backoff) first.
func (g *group) retag(promote bool, n int) {
	for _, w := range g.candidates(promote) {
		if n <= 0 {
			return
		}
		if w.isTemporary() == promote {
			w.setTemporary(!promote)
			n--
		}
	}
}

// shrink asks the workers beyond the group's maximum to stop after their
// current batch: temporary ones first, and of each kind those that do not
// serve first, then idle ones, then busy ones.
func (g *group) shrink() {
	extra := g.active() - g.max
	for _, temp := range []bool{true, false} {
		for _, w := range g.candidates(false) {
			if extra > 0 && w.isTemporary() == temp {
				w.stop()
				extra--
			}
		}
	}
}

// candidates returns the group's workers that are not stopping, ordered by
// how much they are doing: not serving (starting, in backoff), idle, busy;
// busiest first when busyFirst is set.
func (g *group) candidates(busyFirst bool) []*run {
	rank := func(w *run) int {
		switch w.getState() {
		case workerBusy:
			return 2
		case workerReady:
			return 1
		}
		return 0
	}
	var out []*run
	for _, w := range g.workers {
		if !w.stopping() {
			out = append(out, w)
		}
	}
	slices.SortStableFunc(out, func(a, b *run) int {
		if busyFirst {
			return rank(b) - rank(a)
		}
		return rank(a) - rank(b)
	})
	return out
}
