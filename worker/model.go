package worker

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/properties"
)

// modelState is where a model is in its life.
type modelState int

const (
	stateLoading modelState = iota // first workers starting
	stateReady                     // loaded at least once
	stateFailed                    // workers failed retry_threshold times in a row
	stateRemoved                   // unregistered or shut down
)

// Model ties one registered model's configuration, queue and worker groups.
type Model struct {
	reg     *Registry
	name    string
	url     string
	cfg     *properties.Model
	startup bool
	queue   *batching.Queue

	ctx    context.Context // canceled when the model is removed
	cancel context.CancelFunc
	wg     sync.WaitGroup // worker and scaler goroutines

	mu        sync.Mutex
	state     modelState
	failures  int    // consecutive worker failures
	lastErr   string // last failure, with the stderr tail
	deps      string // folder of the model's pip requirements, if any
	rolling   string // dispatch mode the workers report: "disable" or a rolling-batch backend
	groups    []*group
	workerSeq int
	settled   chan struct{} // closed when the first load ends (ready or failed)
	scaleReq  chan struct{}
}

func newModel(reg *Registry, name, url string, cfg *properties.Model, startup bool) *Model {
	ctx, cancel := context.WithCancel(reg.ctx)
	return &Model{
		reg: reg, name: name, url: url, cfg: cfg, startup: startup,
		queue:    batching.NewQueue(cfg.JobQueueSize),
		ctx:      ctx,
		cancel:   cancel,
		rolling:  initialRolling(cfg.RollingBatch),
		settled:  make(chan struct{}),
		scaleReq: make(chan struct{}, 1),
	}
}

// initialRolling is the dispatch mode before any worker has reported its own:
// explicit backends dispatch as rolling batches, auto waits for the worker.
func initialRolling(mode string) string {
	if mode == "" {
		return "disable"
	}
	return mode
}

// rollingMode reports whether requests go to workers as they arrive.
func (m *Model) rollingMode() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rolling != "disable" && m.rolling != "auto"
}

// setRolling records the mode a worker reported in its initialization reply.
func (m *Model) setRolling(mode string) {
	if mode == "" {
		return
	}
	m.mu.Lock()
	m.rolling = mode
	m.mu.Unlock()
}

// status is the model's health as /ping and describe report it.
func (m *Model) status() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch m.state {
	case stateLoading:
		return api.StatusLoading
	case stateFailed:
		return api.StatusFailed
	}
	for _, g := range m.groups {
		if g.live() < g.minWorkers() {
			return api.StatusUnhealthy
		}
	}
	return api.StatusHealthy
}

// workerReady notes a worker that loaded: it ends a first load and resets the
// failure count.
func (m *Model) workerReady(rolling string) {
	m.setRolling(rolling)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.failures = 0
	if m.state == stateLoading && m.minimumLiveLocked() {
		m.state = stateReady
		m.settleLocked()
	}
}

// minimumLiveLocked reports whether every group has its minimum of live workers.
func (m *Model) minimumLiveLocked() bool {
	for _, g := range m.groups {
		if g.live() < g.minWorkers() {
			return false
		}
	}
	return true
}

func (m *Model) settleLocked() {
	select {
	case <-m.settled:
	default:
		close(m.settled)
	}
}

// workerFailed counts a worker that failed to load or died, and reports
// whether the model is now FAILED.
func (m *Model) workerFailed(err error, stderr []string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state == stateRemoved {
		return true
	}
	m.failures++
	m.lastErr = describeFailure(err, stderr)
	if m.failures < m.reg.retryThreshold() && !isMemoryError(err) {
		return false
	}
	m.failLocked()
	return true
}

// failLocked marks the model FAILED: its workers stop and what waits in its
// queue is answered; a fresh queue takes requests again once the model is
// scaled or registered anew.
func (m *Model) failLocked() {
	m.state = stateFailed
	m.settleLocked()
	for _, g := range m.groups {
		for _, w := range g.workers {
			w.stop()
		}
	}
	old := m.queue
	m.queue = batching.NewQueue(old.Cap())
	old.Close(fmt.Errorf("%w: model %s", api.ErrModelFailed, m.name))
}

// currentQueue returns the model's queue.
func (m *Model) currentQueue() *batching.Queue {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.queue
}

// fillLocked starts every missing permanent worker.
func (m *Model) fillLocked() {
	for _, g := range m.groups {
		for g.permanent() < g.min {
			m.startLocked(g, false)
		}
	}
	if m.state == stateLoading && m.totalMinLocked() == 0 {
		m.state = stateReady
		m.settleLocked()
	}
}

// describeFailure is the error text of a describe record: the error, then
// the last lines the worker wrote to stderr (the Python traceback).
func describeFailure(err error, stderr []string) string {
	msg := err.Error()
	if len(stderr) == 0 {
		return msg
	}
	const keep = 15
	if len(stderr) > keep {
		stderr = stderr[len(stderr)-keep:]
	}
	return msg + "\n" + strings.Join(stderr, "\n")
}

// failed reports whether the model is FAILED, and why.
func (m *Model) failed() (bool, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state == stateFailed, m.lastErr
}

// waitSettled blocks until the first load ends or ctx is done.
func (m *Model) waitSettled(ctx context.Context) error {
	select {
	case <-m.settled:
	case <-ctx.Done():
		return ctx.Err()
	}
	if bad, why := m.failed(); bad {
		return fmt.Errorf("%w: model %s failed to load: %s", api.ErrModelFailed, m.name, firstLine(why))
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// submit queues a job for this model.
func (m *Model) submit(j *batching.Job) error {
	m.mu.Lock()
	state, q := m.state, m.queue
	m.mu.Unlock()
	switch state {
	case stateFailed:
		return fmt.Errorf("%w: model %s is FAILED; scale or re-register it", api.ErrModelFailed, m.name)
	case stateRemoved:
		return fmt.Errorf("%w: %s", api.ErrModelNotFound, m.name)
	case stateLoading:
		return fmt.Errorf("%w: model %s is loading", api.ErrNotReady, m.name)
	}
	j.SetDeadline(j.Created().Add(m.cfg.PredictTimeout))
	if err := q.Push(j); err != nil {
		return fmt.Errorf("model %s: %w", m.name, err)
	}
	m.reg.metrics.queued(m.name)
	m.poke()
	return nil
}

// poke asks the scaler to look at the queue.
func (m *Model) poke() {
	select {
	case m.scaleReq <- struct{}{}:
	default:
	}
}

func (m *Model) totalMinLocked() int {
	n := 0
	for _, g := range m.groups {
		n += g.minWorkers()
	}
	return n
}

// record builds the describe record.
func (m *Model) record() api.ModelRecord {
	rec := api.ModelRecord{
		ModelName:           m.name,
		ModelURL:            m.url,
		BatchSize:           m.cfg.BatchSize,
		MaxBatchDelayMillis: int(m.cfg.MaxBatchDelay / time.Millisecond),
		MaxIdleSeconds:      int(m.cfg.MaxIdleTime / time.Second),
		QueueSize:           m.currentQueue().Cap(),
		RequestInQueue:      m.currentQueue().Len(),
		Status:              m.status(),
		LoadedAtStartup:     m.startup,
		WorkerGroups:        []api.WorkerGroup{},
	}
	m.mu.Lock()
	rec.RollingBatch = m.rolling
	if m.state == stateFailed {
		rec.LastError = m.lastErr
	}
	groups := append([]*group(nil), m.groups...)
	m.mu.Unlock()
	figures := m.reg.figures()
	for _, g := range groups {
		rec.WorkerGroups = append(rec.WorkerGroups, g.record(figures))
	}
	return rec
}
