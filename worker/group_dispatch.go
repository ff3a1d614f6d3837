package worker

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/worker/process"
)

// serve feeds the process from the model's queue until the worker is asked
// to stop, goes idle (temporary workers), or the process dies.
func (w *run) serve(p Runner) exit {
	ctx, cancel := untilExit(w.ctx, p)
	defer cancel()
	if w.m.rollingMode() {
		return w.serveRolling(ctx, p)
	}
	return w.serveBatches(ctx, p)
}

// untilExit returns a context that ends with parent or when p exits.
func untilExit(parent context.Context, p Runner) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	go func() {
		select {
		case <-p.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// serveBatches is the dynamic-batching loop: take a batch, send it, and
// take the next while the worker runs it. Up to pipelineDepth batches are
// on the worker at once; the reply reader answers them. Before it returns
// it waits until every batch it sent has ended on the worker (a worker
// that died has ended them all), unless a forced shutdown cuts them off.
func (w *run) serveBatches(ctx context.Context, p Runner) exit {
	pl := newPipeline(w)
	rule := w.batchRule(p, pl)
	for pl.waitRoom(ctx) {
		jobs, err := w.next(ctx, rule)
		if err != nil {
			break
		}
		w.send(p, pl, jobs, false)
	}
	pl.close(w.env.forced)
	return w.why(p, pl.err())
}

// batchRule is how the worker's batches are collected: the model's batch
// size and delay, adaptive batching when the model asks for it, and the
// worker's pipeline state; a job that would leave alone and at once is
// sent from the goroutine that submits it (batching.Rule.Direct).
func (w *run) batchRule(p Runner, pl *pipeline) batching.Rule {
	cfg := w.m.cfg
	return batching.Rule{
		Limit: cfg.BatchSize, Delay: cfg.MaxBatchDelay, Adaptive: cfg.AdaptiveBatching,
		Idle: pl.idle, Changed: pl.changed,
		Direct: func(j *batching.Job) bool { return w.send(p, pl, []*batching.Job{j}, true) },
	}
}

// errRetune ends a worker's wait for work when its kind changed, so that
// it waits again under the idle limit of its new kind.
var errRetune = errors.New("worker: kind changed")

// next takes the next batch. A temporary worker gives up after max_idle_time
// without work: its wait began while a batch it holds may still run, so a
// wait that ends while the worker is busy, or less than max_idle_time after
// its last batch ended, starts again.
func (w *run) next(ctx context.Context, r batching.Rule) ([]*batching.Job, error) {
	for {
		wctx, cancel := w.waitContext(ctx)
		jobs, err := w.m.currentQueue().Collect(wctx, r)
		cancel(nil)
		switch {
		case err == nil || ctx.Err() != nil:
			return jobs, err
		case errors.Is(context.Cause(wctx), errRetune):
		case errors.Is(err, context.DeadlineExceeded) && w.activeWithin(w.m.cfg.MaxIdleTime):
		default:
			return jobs, err
		}
	}
}

// activeWithin reports whether the worker is busy or was within d.
func (w *run) activeWithin(d time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state == workerBusy || time.Since(w.lastActive) < d
}

// waitContext returns the context of one wait for work: it ends with ctx,
// when the worker's kind changes, and for a temporary worker max_idle_time
// after its last work. A permanent worker's is made once and kept for its
// later waits, until its kind changes; the cancel function returned for it
// does nothing.
func (w *run) waitContext(ctx context.Context) (context.Context, context.CancelCauseFunc) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.temporary {
		wctx, cancel := context.WithCancelCause(ctx)
		wctx, stop := context.WithDeadline(wctx, w.lastActive.Add(w.m.cfg.MaxIdleTime))
		cancel = both(cancel, stop)
		w.retune, w.waitCtx = cancel, nil
		return wctx, cancel
	}
	if w.waitCtx == nil || w.waitParent != ctx || w.waitCtx.Err() != nil {
		w.waitParent = ctx
		w.waitCtx, w.retune = context.WithCancelCause(ctx)
	}
	return w.waitCtx, func(error) {}
}

// both returns a cancel function that calls cause and then stop.
func both(cause context.CancelCauseFunc, stop context.CancelFunc) context.CancelCauseFunc {
	return func(err error) { cause(err); stop() }
}

// why tells a stop from a death once serving ends.
func (w *run) why(p Runner, perr error) exit {
	if errors.Is(perr, api.ErrPredictTimeout) {
		return exitTimeout
	}
	if processExited(p) && w.ctx.Err() == nil {
		return exitDied
	}
	return exitStopped
}

func processExited(p Runner) bool {
	select {
	case <-p.Done():
		return true
	default:
		return false
	}
}

// send sends one batch (Runner.Dispatch) and answers every job in it from
// the goroutine that reads the worker's replies: a job the worker could
// not be given goes back to the queue. The batch is counted in pl until it
// has ended on the worker (a streamed answer keeps it until the stream
// ends). With onlyIdle (a direct send) it sends only to an idle worker,
// and reports whether it did: the serve loop waits for room before it
// collects, and a direct send comes only while it collects, so the worker
// never holds more than pipelineDepth batches.
func (w *run) send(p Runner, pl *pipeline, jobs []*batching.Job, onlyIdle bool) bool {
	pl.sendMu.Lock()
	defer pl.sendMu.Unlock()
	b, ok := pl.push(jobs, onlyIdle)
	if !ok {
		return false
	}
	w.m.took(len(jobs))
	m := w.m
	w.env.series.dispatched(jobs, time.Now())
	ins := make([]*message.Input, len(jobs))
	for i, j := range jobs {
		ins[i] = &j.Input
	}
	// A stop lets the batch finish; only a forced shutdown cuts it. Errors
	// come to the answers and to pl.
	_ = p.Dispatch(w.env.forced, ins, func(i int, resp *message.Response, err error) {
		if err != nil {
			m.retryOrFail(jobs[i], err)
			return
		}
		if m.cfg.EnableLoRA {
			m.noteAdapterEvents(resp.Props)
		}
		jobs[i].Finish(resp)
	}, b.ended)
	return true
}

func (w *run) busy() {
	w.mu.Lock()
	w.state, w.lastActive = workerBusy, time.Now()
	w.mu.Unlock()
}

func (w *run) idle() {
	w.mu.Lock()
	w.state, w.lastActive = workerReady, time.Now()
	w.mu.Unlock()
	w.m.idled()
}

// serveRolling is the rolling-batch loop: requests go to the worker as they
// arrive, up to max_rolling_batch_size in flight, each tagged with its own
// tracking id and answered from the goroutine that reads the worker's
// replies. Before it returns it waits until every request it sent has
// ended on the worker (a worker that died has ended them all), unless a
// forced shutdown cuts them off.
func (w *run) serveRolling(ctx context.Context, p Runner) exit {
	m := w.m
	slots := make(chan struct{}, max(1, m.cfg.MaxRollingBatchSize))
	defer fill(w.env.forced, slots)
	var inFlight atomic.Int32
	for {
		if !acquire(ctx, slots) {
			return w.why(p, nil)
		}
		jobs, err := w.next(ctx, batching.Rule{Limit: 1 + cap(slots) - len(slots)})
		if err != nil {
			<-slots
			return w.why(p, nil)
		}
		for range len(jobs) - 1 {
			slots <- struct{}{} // next never takes more than are free
		}
		w.env.series.dispatched(jobs, time.Now())
		w.busy()
		m.took(len(jobs))
		inFlight.Add(int32(len(jobs)))
		for _, j := range jobs {
			w.track(p, j, func() { <-slots; w.touch(inFlight.Add(-1)) })
		}
	}
}

// acquire takes one slot, or reports false when ctx ends first.
func acquire(ctx context.Context, slots chan struct{}) bool {
	select {
	case slots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// fill takes every slot, waiting for those in use to be given back, or
// until ctx ends: a forced shutdown, which kills the worker next and so
// ends them.
func fill(ctx context.Context, slots chan struct{}) {
	for range cap(slots) {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return
		}
	}
}

// track sends one job as a tracked request; it is answered, and done runs
// once the request has ended on the worker, from the worker's reply reader.
func (w *run) track(p Runner, j *batching.Job, done func()) {
	m := w.m
	p.Track(j.Context(), w.env.trackingID(), &j.Input, func(resp *message.Response, err error) {
		if err != nil {
			m.retryOrFail(j, err)
			return
		}
		if m.cfg.EnableLoRA {
			m.noteAdapterEvents(resp.Props)
		}
		j.Finish(resp)
	}, done)
}

// touch records activity; with no request in flight the worker is idle.
func (w *run) touch(inFlight int32) {
	w.mu.Lock()
	w.lastActive = time.Now()
	idle := inFlight == 0 && w.state == workerBusy
	if idle {
		w.state = workerReady
	}
	w.mu.Unlock()
	if idle {
		w.m.idled()
	}
}

// retryOrFail answers a job whose dispatch failed. A job that never reached
// its worker (the worker died first) goes back to the queue for another
// worker, within its deadline; any other error is its answer.
func (m *Model) retryOrFail(j *batching.Job, err error) {
	if errors.Is(err, process.ErrNotSent) && m.currentQueue().Requeue(j) == nil {
		return
	}
	j.Fail(m.cutOff(err))
}
