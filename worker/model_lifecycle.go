package worker

import (
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
)

// The driver of a model's lifecycle (lifecycle.go): fireLocked steps the
// model's state through one event, under m.mu, and carries out what the
// transition says. The events come from the model's methods: launch
// (registry_register.go); workerReady, deviceDown, workerFailed and submit
// (model.go); evict, abandonUnwanted and lastLeftLocked, which run.leave
// calls (model_residency.go); rescale, drain and detach
// (registry_lifecycle.go).

// cause is what the actions of one event need to know.
type cause struct {
	err      error    // why a worker failed, or a load or a launch
	stderr   []string // the failed worker's stderr
	forModel string   // an eviction: the model it makes room for
	evicted  string   // an eviction: why (api.EvictMemory or api.EvictLoadedModels)
}

// fireLocked steps the model's lifecycle through ev and carries out the
// actions and follow-ups. It reports whether anything changed: false when
// the state refuses ev or ev does nothing there. m.mu is held; the caller
// wakes everyone waiting for the model to change (changedLocked) at the
// end of its hold of the lock, as the model's other changes do.
func (m *Model) fireLocked(ev modelEvent, c cause) bool {
	if !acts(m.state, ev) {
		return false
	}
	fire(&m.state, ev, func(a modelActs) (modelEvent, bool) { return m.apply(a, c) })
	return true
}

// apply carries out one transition's actions in their order and returns
// the follow-up event that one of them found; it runs in fireLocked.
func (m *Model) apply(a modelActs, c cause) (modelEvent, bool) {
	m.applyRecord(a, c)
	m.applyWorkers(a, c)
	if follow, ok := m.applyLoad(a); ok {
		return follow, true
	}
	if a.has(actCountFailure) && m.failures >= m.reg.retryThreshold() {
		return evRetriesExhausted, true
	}
	return 0, false
}

// applyRecord carries out the actions on the model's failure record.
func (m *Model) applyRecord(a modelActs, c cause) {
	if a.has(actRecordError) {
		m.lastErr = c.err.Error()
	}
	if a.has(actCountFailure) {
		m.failures++
		m.lastErr = describeFailure(c.err, c.stderr)
	}
	if a.has(actForgetFailures) {
		m.failures = 0
	}
	if a.has(actClearError) {
		m.lastErr = ""
	}
}

// applyWorkers carries out the actions that log an unload, begin a load,
// stop the workers or answer the queue.
func (m *Model) applyWorkers(a modelActs, c cause) {
	if a.has(actLogUnloaded) {
		m.reg.log.Info("model unloaded", zap.String("model", m.name), zap.String("reason", m.lastUnload.Reason))
	}
	if a.has(actBeginLoad) {
		m.readyAt = time.Time{}
		m.poke()
	}
	if a.has(actStopWorkers) {
		m.stopAllLocked()
	}
	if a.has(actNoteEvicted) {
		m.noteEvictedLocked(c)
	}
	if a.has(actFail) {
		m.failLocked()
	}
	if a.has(actRefuseLoad) {
		m.swapQueueLocked(fmt.Errorf("model %s could not load: %w", m.name, c.err))
		m.reg.log.Warn("model not loaded: no room", zap.String("model", m.name), zap.Error(c.err))
	}
}

// applyLoad carries out the actions on the model's workers and loads, and
// returns the follow-up event one of them found.
func (m *Model) applyLoad(a modelActs) (follow modelEvent, ok bool) {
	if a.has(actFit) {
		m.carryOutLocked(m.viewLocked(false, false))
	}
	if a.has(actFill) {
		m.carryOutLocked(m.viewLocked(true, false))
		follow, ok = evMinimumLive, m.totalMinLocked() == 0 // ready without any worker
	}
	if a.has(actEndLoad) {
		m.loadEndedLocked()
	}
	if a.has(actNoteIdle) {
		m.lastUnload = &api.Unload{Time: recordTime(time.Now()), Reason: api.UnloadIdle}
	}
	if a.has(actStartScaler) {
		m.wg.Add(1)
		go m.scaler()
	}
	if a.has(actLoadIfAsked) && m.queue.Held() > 0 {
		follow, ok = evRequest, true // a request came while the model unloaded
	}
	return follow, ok
}

// failLocked carries out actFail: the model's workers stop and what waits
// in its queue is answered; a fresh queue takes requests again once the
// model is scaled or registered anew.
func (m *Model) failLocked() {
	m.reg.log.Error("model FAILED; scale or register it again once the cause is fixed",
		zap.String("model", m.name), zap.Int("failures", m.failures), zap.String("error", firstLine(m.lastErr)))
	m.stopAllLocked()
	m.loadBegan = time.Time{}
	m.swapQueueLocked(fmt.Errorf("%w: model %s failed to load: %s", api.ErrModelFailed, m.name, firstLine(m.lastErr)))
}

// noteEvictedLocked carries out actNoteEvicted: the eviction is recorded
// for describe, counted and logged.
func (m *Model) noteEvictedLocked(c cause) {
	m.lastUnload = &api.Unload{Time: recordTime(time.Now()), Reason: api.UnloadEvicted, ForModel: c.forModel, Cause: c.evicted}
	m.reg.loads.evicted(m.name, c.evicted)
	m.reg.log.Info("model evicted", zap.String("model", m.name), zap.String("for", c.forModel), zap.String("cause", c.evicted),
		zap.Time("lastUsed", m.lastUsedTime()), zap.Int("queued", m.queue.Held()))
}

// loadEndedLocked carries out actEndLoad: the load under way, if a worker
// started it, is counted, timed and logged, and the model's minimum
// residence begins.
func (m *Model) loadEndedLocked() {
	if m.loadBegan.IsZero() {
		return
	}
	took := time.Since(m.loadBegan)
	m.readyAt, m.loadBegan = time.Now(), time.Time{}
	m.reg.loads.loaded(m.name, took)
	m.reg.log.Info("model loaded", zap.String("model", m.name), zap.Duration("took", took))
}

// stopAllLocked asks every worker of the model to stop.
func (m *Model) stopAllLocked() {
	for _, g := range m.groups {
		for _, w := range g.workers {
			w.stop()
		}
	}
}
