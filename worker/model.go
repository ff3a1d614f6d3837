package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/properties"
)

// Model ties one registered model's configuration, queue and worker groups.
type Model struct {
	reg     *Registry
	name    string
	url     string
	cfg     *properties.Model
	startup bool
	needs   memoryNeeds // one worker's memory, by DJL's rules

	ctx    context.Context // canceled when the model is removed
	cancel context.CancelFunc
	wg     sync.WaitGroup // worker and scaler goroutines

	mu        sync.Mutex
	queue     *batching.Queue
	state     modelState             // where the model is in its life (lifecycle.go): set by prepare, then changed only by fireLocked
	failures  int                    // consecutive worker failures
	lastErr   string                 // last failure, with the stderr tail
	deps      atomic.Pointer[string] // folder of the model's pip requirements, once installed (set by pip's goroutine, read by workers' specs)
	rolling   string                 // dispatch mode the workers report: "disable" or a rolling-batch backend
	groups    []*group
	workerSeq int
	changed   chan struct{} // closed and replaced whenever state or worker counts change
	scaleReq  chan struct{}

	// gen is what the handler declared it can honour (guarded by mu); nil
	// when no worker declared anything.
	gen *api.Generation
	// declared is the tensors the handler declared (guarded by mu); nil
	// when no worker declared any. cfgTensors are serving.properties'.
	declared   *tensors
	cfgTensors tensors

	adapters *adapterSet // its LoRA adapters (option.enable_lora); their own lock

	// Residency, guarded by mu (see model_residency.go).
	loadBegan   time.Time   // when the load under way began: a worker started while the model had none; zero when none runs
	readyAt     time.Time   // when the model's last load ended
	lastUnload  *api.Unload // when and why its workers last went away while it stayed registered
	peakHostMiB int64       // the most host memory one of its workers was measured to hold
	peakGPUMiB  int64       // the most GPU memory one of its workers was measured to hold

	lastUsed atomic.Int64  // unix nanoseconds of its last request, or of a worker of it going idle; 0 for never
	taken    atomic.Uint64 // jobs its workers took from the current queue (see busyLocked)
}

func newModel(reg *Registry, name, url string, cfg *properties.Model, startup bool) *Model {
	ctx, cancel := context.WithCancel(reg.ctx)
	return &Model{
		reg: reg, name: name, url: url, cfg: cfg, startup: startup,
		queue:    batching.NewQueue(cfg.JobQueueSize),
		ctx:      ctx,
		cancel:   cancel,
		rolling:  initialRolling(cfg.RollingBatch),
		changed:  make(chan struct{}),
		scaleReq: make(chan struct{}, 1),
		adapters: newAdapterSet(),
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

// status is the model's health as /ping and describe report it: Healthy
// or Unhealthy once it has loaded, else PENDING or FAILED.
func (m *Model) status() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if word := m.state.word(); word != api.StatusReady {
		return word
	}
	if !m.minimumLiveLocked() {
		return api.StatusUnhealthy
	}
	return api.StatusHealthy
}

// listStatus is the model's state as GET /models reports it: READY,
// PENDING or FAILED.
func (m *Model) listStatus() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.word()
}

// workerReady notes a worker of g that loaded: its device is up, the
// model is ready once every group has its minimum (evMinimumLive), and the
// worker resets the failure count and ends a load (evWorkerUp). A worker
// that comes up once the model is gone changes nothing.
func (m *Model) workerReady(g *group, rolling string) {
	m.setRolling(rolling)
	m.mu.Lock()
	g.down = ""
	if m.minimumLiveLocked() {
		m.fireLocked(evMinimumLive, cause{})
	}
	up := m.fireLocked(evWorkerUp, cause{})
	if up {
		m.changedLocked()
	}
	m.mu.Unlock()
	if up {
		m.reg.res.notify()
	}
}

// deviceDown notes that g's GPU is down, and reports whether the worker
// must not wait for it: the model is gone, or every group's device is down
// while it loads, which fails it (507). The groups still up may now have
// their minimum.
func (m *Model) deviceDown(g *group, err error) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	g.down = err.Error()
	defer m.changedLocked()
	switch {
	case m.allDownLocked():
		m.fireLocked(evAllDevicesDown, cause{err: err})
	case m.minimumLiveLocked():
		m.fireLocked(evMinimumLive, cause{})
	}
	return m.state.gone()
}

// allDownLocked reports whether every group's GPU is down.
func (m *Model) allDownLocked() bool {
	for _, g := range m.groups {
		if g.down == "" {
			return false
		}
	}
	return len(m.groups) > 0
}

// minimumLiveLocked reports whether every group has its minimum of live
// workers. Groups whose GPU is down are passed over, unless all are.
func (m *Model) minimumLiveLocked() bool {
	if m.allDownLocked() {
		return false
	}
	for _, g := range m.groups {
		if g.down == "" && g.live() < g.minWorkers() {
			return false
		}
	}
	return true
}

// changedLocked wakes everyone waiting for the model to change; m.mu is held.
func (m *Model) changedLocked() {
	close(m.changed)
	m.changed = make(chan struct{})
}

// waitUntil blocks until cond, called with m.mu held, is true or ctx is done.
func (m *Model) waitUntil(ctx context.Context, cond func() bool) error {
	for {
		m.mu.Lock()
		ok, ch := cond(), m.changed
		m.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// workerFailed counts a worker that failed to load or died, and reports
// whether the worker must not be restarted: the model is now FAILED, or it
// is gone or unloaded. A worker that finds no memory while the model loads
// for a scale or a registration fails the model at once (507), since
// waiting will not make room; one that finds none for a load on demand,
// while no worker serves, answers the requests that wait with that error
// and leaves the model unloaded, to load on a later request.
func (m *Model) workerFailed(err error, stderr []string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	ev := evWorkerFailed
	switch {
	case isMemoryError(err) && m.liveLocked() == 0:
		ev = evNoMemoryAlone
	case isMemoryError(err):
		ev = evNoMemory
	}
	if m.fireLocked(ev, cause{err: err, stderr: stderr}) {
		m.changedLocked()
	}
	return m.state.gone()
}

// swapQueueLocked gives the model a fresh queue and answers what waited in
// the old one with why.
func (m *Model) swapQueueLocked(why error) {
	old := m.queue
	m.queue = batching.NewQueue(old.Cap())
	m.taken.Store(0)
	if m.state.draining() {
		m.queue.Drain(errShuttingDown)
	}
	old.Close(why)
}

// currentQueue returns the model's queue.
func (m *Model) currentQueue() *batching.Queue {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.queue
}

// describeFailure is the error text of a describe record: the error, then
// the worker's stderr from its last Python traceback on, or its last
// failureTailLines lines when it wrote no traceback.
func describeFailure(err error, stderr []string) string {
	msg := err.Error()
	if len(stderr) == 0 {
		return msg
	}
	return msg + "\n" + strings.Join(failureTail(stderr), "\n")
}

// failureTailLines is how much stderr a failure keeps when it holds no
// traceback.
const failureTailLines = 15

// failureTail returns the lines of stderr from the last traceback on.
func failureTail(stderr []string) []string {
	for i := len(stderr) - 1; i >= 0; i-- {
		if strings.HasPrefix(stderr[i], "Traceback (most recent call last)") {
			return stderr[i:]
		}
	}
	return stderr[max(0, len(stderr)-failureTailLines):]
}

// removed reports whether the model was unregistered, replaced or shut down.
func (m *Model) removed() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.in(stRemoved)
}

// startupLoading reports whether the model was loaded at startup and its
// first load has not finished yet.
func (m *Model) startupLoading() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.startup && m.state.firstLoad()
}

// failed reports whether the model is FAILED, and why.
func (m *Model) failed() (bool, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.state.failed(), m.lastErr
}

// waitSettled blocks until the model has loaded or failed, or ctx is done.
func (m *Model) waitSettled(ctx context.Context) error {
	err := m.waitUntil(ctx, func() bool { return !m.state.loading() })
	if err != nil {
		return err
	}
	return m.loadError()
}

// waitMinimum blocks until every group has its minimum of live workers, the
// model has failed or is gone, or ctx is done.
func (m *Model) waitMinimum(ctx context.Context) error {
	err := m.waitUntil(ctx, func() bool {
		return m.state.failed() || m.state.in(stRemoved) || m.state.in(stReady) && m.minimumLiveLocked()
	})
	if err != nil {
		return err
	}
	return m.loadError()
}

// loadError says why the model cannot serve, if it cannot.
func (m *Model) loadError() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case m.state.failed():
		return fmt.Errorf("%w: model %s failed to load: %s", api.ErrModelFailed, m.name, firstLine(m.lastErr))
	case m.state.in(stRemoved):
		return fmt.Errorf("%w: %s", api.ErrModelNotFound, m.name)
	}
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// submit queues a job for this model. A job without a deadline gets
// predict_timeout: it is answered with batching.ErrExpired when no worker
// has taken it by then. A model still loading (PENDING) queues the job like
// any other: its first worker takes it once it is up; an unloaded one
// starts loading for it (evRequest). A FAILED or removed model refuses
// it. The job is queued under the model's lock, so
// that an eviction, which looks at the queue under that lock, sees it; a
// job that goes to an idle worker directly (batching.Queue.Accept) is
// claimed under the lock, which the queue counts as held, and sent after
// it: a send is a process call, and its failure path takes the lock.
func (m *Model) submit(j *batching.Job) error {
	if err := m.checkAdapter(j.Input); err != nil {
		return err
	}
	m.mu.Lock()
	state, q := m.state, m.queue
	if state.refuses(evRequest) {
		m.mu.Unlock()
		return m.refusal(state)
	}
	j.SetDeadline(j.Created().Add(m.cfg.PredictTimeout))
	send, err := q.Accept(j)
	if err == nil && m.fireLocked(evRequest, cause{}) {
		m.changedLocked()
	}
	m.mu.Unlock()
	if send != nil {
		err = send()
	}
	if err != nil {
		if errors.Is(err, batching.ErrQueueFull) {
			return fmt.Errorf("%w: model %s has %d requests waiting (job_queue_size)", err, m.name, q.Cap())
		}
		return fmt.Errorf("model %s: %w", m.name, err)
	}
	m.used()
	m.poke()
	return nil
}

// refusal is why a model in state takes no request, or nil.
func (m *Model) refusal(state modelState) error {
	switch {
	case state.failed():
		return fmt.Errorf("%w: model %s is FAILED; scale or re-register it", api.ErrModelFailed, m.name)
	case state.in(stRemoved):
		if m.reg.isClosed() {
			return fmt.Errorf("%w: model %s: server shutting down", batching.ErrClosed, m.name)
		}
		return fmt.Errorf("%w: %s", api.ErrModelNotFound, m.name)
	}
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
func (m *Model) record() api.ModelRecord { return m.recordWith(m.reg.figures()) }

// recordWith builds the describe record with per-process figures read
// already, so that one scrape of many models asks NVML once.
func (m *Model) recordWith(f figures) api.ModelRecord {
	q := m.currentQueue()
	rec := api.ModelRecord{
		ModelName:           m.name,
		ModelURL:            m.url,
		BatchSize:           m.cfg.BatchSize,
		MaxBatchDelayMillis: int(m.cfg.MaxBatchDelay / time.Millisecond),
		MaxIdleSeconds:      int(m.cfg.MaxIdleTime / time.Second),
		QueueSize:           q.Cap(),
		RequestInQueue:      q.Len(),
		Status:              m.status(),
		LoadedAtStartup:     m.startup,
		LastUsed:            m.lastUsedTime(),
		WorkerGroups:        []api.WorkerGroup{},
	}
	m.mu.Lock()
	rec.Loaded, rec.Pinned, rec.LastUnload = m.loadedLocked(), m.pinnedLocked(), copyUnload(m.lastUnload)
	rec.RollingBatch = m.rolling
	if m.gen != nil {
		g := *m.gen
		rec.Generation = &g
	}
	if m.state.failed() || m.state.loading() || m.state.in(stUnloaded) {
		rec.LastError = m.lastErr
	}
	groups := append([]*group(nil), m.groups...)
	m.mu.Unlock()
	for _, g := range groups {
		rec.WorkerGroups = append(rec.WorkerGroups, g.record(f))
	}
	if m.cfg.EnableLoRA {
		rec.Adapters = m.adapters.list()
	}
	if sig := m.signature(); sig.Inputs != nil || sig.Outputs != nil {
		rec.Signature = &sig
	}
	return rec
}

// isMemoryError reports whether err means no device had room.
func isMemoryError(err error) bool {
	return errors.Is(err, api.ErrInsufficientMemory)
}
