package worker

import (
	"context"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/gpu"
)

// scaleTick is how often the scaler looks at the queue without being poked.
const scaleTick = time.Second

// scaler adds temporary workers, one at a time, while the model's queue is
// long or no worker is alive, and brings the groups back to their minimum:
// one round of the scaling plan (plan.go) each time it is poked, and every
// scaleTick.
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

// grow runs one round of the scaling plan. A model on GPUs reads their
// figures (at most deviceCacheTTL old) before it takes its lock: /ping and
// every submit wait on that lock, and NVML can block for seconds on a
// failing GPU.
func (m *Model) grow() {
	devs, devErr := m.reg.figuresFor(m)
	m.mu.Lock()
	defer m.mu.Unlock()
	v := m.viewLocked(true, true)
	v.devices, v.devErr = devs, devErr
	m.carryOutLocked(v)
}

// figuresFor reads the GPU figures a scaling plan of m needs: none for a
// model without GPU groups.
func (r *Registry) figuresFor(m *Model) ([]gpu.Device, error) {
	for _, g := range m.groups { // fixed since the model was prepared
		if g.isGPU() {
			return r.gpus.cached()
		}
	}
	return nil, nil
}

// viewLocked is what a scaling plan of the model decides on, device
// figures aside; m.mu is held. A model that is gone, or drains an empty
// queue, runs no worker.
func (m *Model) viewLocked(fill, grow bool) scaleView {
	v := scaleView{
		active:    !m.state.gone() && !(m.state.draining() && m.queue.Len() == 0),
		ready:     m.state.in(stReady),
		queued:    m.queue.Len(),
		batchSize: m.cfg.BatchSize,
		fill:      fill, grow: grow,
		needs: m.needs,
	}
	for _, g := range m.groups {
		v.groups = append(v.groups, g.viewLocked())
	}
	return v
}

// carryOutLocked plans on v and carries the plan out; m.mu is held.
func (m *Model) carryOutLocked(v scaleView) {
	acts, why := plan(v)
	if why != nil {
		m.reg.log.Debug("no room for a temporary worker", zap.String("model", m.name), zap.Error(why))
	}
	if len(acts) > 0 {
		m.reg.log.Debug("scaling", zap.String("model", m.name), zap.Stringers("actions", acts))
	}
	for _, a := range acts {
		switch a.kind {
		case startWorker:
			m.startLocked(a.group, a.temporary)
		case stopWorker:
			a.worker.stop()
		case retagWorker:
			a.worker.setTemporary(a.temporary)
		}
	}
	if len(acts) > 0 {
		m.changedLocked()
	}
}

// startLocked adds one worker to g and starts its goroutine.
func (m *Model) startLocked(g *group, temporary bool) {
	if m.slotsLocked() == 0 {
		m.loadBegan = time.Now()
	}
	ctx, cancel := context.WithCancel(m.ctx)
	id := m.nextWorkerID()
	w := &run{m: m, g: g, env: m.reg.slotEnv(g, id), id: id, temporary: temporary, ctx: ctx, cancel: cancel,
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
