package worker

import (
	"context"
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

// grow starts at most one worker: a missing permanent one first, else a
// temporary one when batching.ScaleUp says so.
func (m *Model) grow() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state == stateFailed || m.state == stateRemoved {
		return
	}
	for _, g := range m.groups {
		if g.permanent() < g.min {
			m.startLocked(g, false)
			return
		}
	}
	if m.state != stateReady || m.anyStartingLocked() {
		return
	}
	alive, limit := 0, 0
	var room []*group
	for _, g := range m.groups {
		alive += g.live()
		limit += g.max
		if g.active() < g.max {
			room = append(room, g)
		}
	}
	if len(room) == 0 || !batching.ScaleUp(m.queue.Len(), m.cfg.BatchSize, alive, limit) {
		return
	}
	g, err := m.reg.placeTemporary(m, room)
	if err != nil || g == nil {
		m.reg.log.Debug("no room for a temporary worker", zap.String("model", m.name), zap.Error(err))
		return
	}
	m.startLocked(g, true)
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
}

// nextWorkerID numbers the model's workers from 1.
func (m *Model) nextWorkerID() int {
	m.workerSeq++
	return m.workerSeq
}

// shrinkLocked asks workers beyond each group's maximum to stop after their
// current batch, temporary ones first.
func (m *Model) shrinkLocked() {
	for _, g := range m.groups {
		extra := g.active() - g.max
		for _, temp := range []bool{true, false} {
			for _, w := range g.workers {
				if extra > 0 && w.temporary == temp && !w.stopping() {
					w.stop()
					extra--
				}
			}
		}
	}
}

// setCounts changes every group's minimum and maximum.
func (m *Model) setCounts(req api.ScaleRequest) {
	for _, g := range m.groups {
		if req.MinWorker != nil {
			g.min = *req.MinWorker
		}
		if req.MaxWorker != nil {
			g.max = *req.MaxWorker
		}
		if g.max < g.min {
			g.max = g.min
		}
	}
}
