package worker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
)

// Unregister removes a model: queued requests are answered with 503, its
// workers finish their current batch and stop. It returns once they have
// stopped or ctx is done.
func (r *Registry) Unregister(ctx context.Context, name string) error {
	r.mu.Lock()
	m := r.models[name]
	if m == nil {
		r.mu.Unlock()
		return fmt.Errorf("%w: %s", api.ErrModelNotFound, name)
	}
	delete(r.models, name)
	r.mu.Unlock()
	r.dropped.add(name, "it was unregistered at "+recordTime(time.Now()).Format(time.RFC3339))
	m.remove(ctx, "unregistered")
	r.metrics.forget(name)
	r.loads.forget(name)
	r.log.Info("model unregistered", zap.String("model", name))
	return nil
}

// remove closes the model's queue, stops its workers and waits for them.
func (m *Model) remove(ctx context.Context, why string) {
	m.detach(why)
	m.wait(ctx)
}

// detach marks the model removed (evRemove), answers its queue with 503
// and asks its workers to stop after their current batch.
func (m *Model) detach(why string) {
	m.mu.Lock()
	m.fireLocked(evRemove, cause{})
	m.changedLocked()
	q := m.queue
	m.mu.Unlock()
	m.reg.budget.release(m)
	q.Close(fmt.Errorf("model %s %s", m.name, why))
	m.cancel()
}

// wait blocks until the model's goroutines are done or ctx ends.
func (m *Model) wait(ctx context.Context) {
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// Scale changes a model's minimum and maximum workers. Counts that would
// exceed the worker caps are refused (400) before anything changes.
// Workers beyond the maximum stop after their current batch; permanent
// workers beyond the minimum become temporary (released after
// max_idle_time without work). A FAILED model is given a fresh start. With
// req.Synchronous it starts the missing workers and returns once every
// group has its minimum of live workers, or the model failed; otherwise it
// returns at once and the model's scaler starts them.
func (r *Registry) Scale(ctx context.Context, name string, req api.ScaleRequest) error {
	if err := checkScale(req); err != nil {
		return err
	}
	m, err := r.lookup(name)
	if err != nil {
		return err
	}
	if err := r.scalePrecheck(m, req); err != nil {
		return err
	}
	if err := m.rescale(req); err != nil {
		return err
	}
	m.poke()
	if !req.Synchronous {
		return nil
	}
	return m.waitMinimum(ctx)
}

// rescale reserves and applies new worker counts, then steps the model
// through the scale (evScale, evScaleSync): a FAILED model is revived, an
// unloaded one loads, an unloading one loads again once its workers have
// gone, and the others fit their workers to the counts; a synchronous
// scale also starts the missing workers. A removed model, or one pinned to
// GPUs NVML cannot use, refuses it.
func (m *Model) rescale(req api.ScaleRequest) error {
	ev := evScale
	if req.Synchronous {
		ev = evScaleSync
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state.refuses(ev) {
		return m.scaleRefusal()
	}
	if err := m.reg.budget.reserve(m, m.maxAfter(req), nil); err != nil {
		return err
	}
	m.setCounts(req)
	m.fireLocked(ev, cause{})
	m.changedLocked()
	return nil
}

// scaleRefusal is why the model refuses a scale: it was removed, or it is
// pinned to GPUs NVML cannot use.
func (m *Model) scaleRefusal() error {
	if m.state.in(stRemoved) {
		return fmt.Errorf("%w: %s", api.ErrModelNotFound, m.name)
	}
	if err := m.reg.gpuRefusal(m.cfg); err != nil {
		return err
	}
	return fmt.Errorf("%w: model %s cannot be scaled now (%s)", api.ErrModelFailed, m.name, m.state)
}

func checkScale(req api.ScaleRequest) error {
	if req.MinWorker != nil && *req.MinWorker < 0 || req.MaxWorker != nil && *req.MaxWorker < 0 {
		return fmt.Errorf("%w: worker counts must not be negative", api.ErrBadRequest)
	}
	if req.MinWorker != nil && req.MaxWorker != nil && *req.MaxWorker < *req.MinWorker {
		return fmt.Errorf("%w: max_worker %d is below min_worker %d", api.ErrBadRequest, *req.MaxWorker, *req.MinWorker)
	}
	return nil
}

// errShuttingDown is why a draining model refuses new requests (503).
var errShuttingDown = errors.New("server shutting down")

// Shutdown stops taking models and requests and serves everything already
// accepted, queued requests included, until ctx is done: each model's queue
// drains (new requests get 503) and its workers stop once it is empty. When
// ctx ends first, what is still queued is answered 503, requests still
// running are cut off with 503 and their workers killed. Socket files are
// removed either way. It returns an error when ctx ended with work left.
func (r *Registry) Shutdown(ctx context.Context) error {
	r.mu.Lock()
	r.closed = true
	ms := make([]*Model, 0, len(r.models))
	for _, m := range r.models {
		ms = append(ms, m)
	}
	r.mu.Unlock()
	for _, m := range ms {
		m.drain()
	}
	var drained sync.WaitGroup
	for _, m := range ms {
		drained.Go(func() { _ = m.waitDrained(ctx) })
	}
	drained.Wait()
	forced := ctx.Err() != nil
	for _, m := range ms {
		m.detach("stopped: server shutting down")
	}
	r.cancel() // cut what is still in flight (after a clean drain, nothing); the workers are killed
	for _, m := range ms {
		m.wait(context.Background())
	}
	r.bg.Wait()
	if forced {
		return fmt.Errorf("worker: shutdown grace period ended with work left: %w", ctx.Err())
	}
	return nil
}

// drain makes the model's queue refuse new requests with errShuttingDown
// and hand out what it holds (evDrain); each worker stops once the queue
// is empty.
func (m *Model) drain() {
	m.mu.Lock()
	m.fireLocked(evDrain, cause{})
	q := m.queue
	m.mu.Unlock()
	q.Drain(errShuttingDown)
	m.poke()
}

// waitDrained blocks until the model's queue is empty and its workers have
// all left, or ctx is done. Once the queue is empty, workers that do not
// serve (still loading, or waiting to restart) are stopped: nothing is left
// for them.
func (m *Model) waitDrained(ctx context.Context) error {
	return m.waitUntil(ctx, func() bool {
		empty, left := m.queue.Len() == 0, 0
		for _, g := range m.groups {
			for _, w := range g.workers {
				if empty && !w.serving() {
					w.stop()
				}
				left++
			}
		}
		return empty && left == 0
	})
}

// isClosed reports whether Shutdown has begun.
func (r *Registry) isClosed() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.closed
}

// errCutOff is the error of a request that was still running on a worker
// when the shutdown grace period ended (503).
var errCutOff = fmt.Errorf("%w: the shutdown grace period ended while the request ran", batching.ErrClosed)

// cutOff turns the error of a request that a forced shutdown ended (its
// wait canceled, or its worker killed) into errCutOff; other errors pass
// unchanged.
func (m *Model) cutOff(err error) error {
	if err != nil && m.reg.ctx.Err() != nil && (errors.Is(err, context.Canceled) || errors.Is(err, api.ErrWorkerDied)) {
		return errCutOff
	}
	return err
}

// maxDropped is how many removed models Describe can still explain.
const maxDropped = 100

// droppedList remembers why the last maxDropped models that went were
// removed (unregistered, or their registration failed), so that a client
// polling an asynchronous registration, or describing a model that was
// loaded a moment ago, learns why it is gone.
type droppedList struct {
	mu    sync.Mutex
	why   map[string]string
	order []string
}

// add notes why name was removed, forgetting the oldest entry when full.
func (d *droppedList) add(name, why string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.why == nil {
		d.why = map[string]string{}
	}
	if _, ok := d.why[name]; !ok {
		d.order = append(d.order, name)
	}
	d.why[name] = why
	if len(d.order) > maxDropped {
		delete(d.why, d.order[0])
		d.order = d.order[1:]
	}
}

// forget drops name's entry: it is registered again.
func (d *droppedList) forget(name string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.why[name]; ok {
		delete(d.why, name)
		d.order = slices.DeleteFunc(d.order, func(n string) bool { return n == name })
	}
}

// reason returns why name was removed, if it was.
func (d *droppedList) reason(name string) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	why, ok := d.why[name]
	return why, ok
}
