package worker

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/switchyard/switchyard/worker/process"
	"go.uber.org/zap"
)

// Restart backoff: 1 s doubling to 60 s, back to 1 s after a healthy minute.
const (
	backoffMin     = time.Second
	backoffMax     = time.Minute
	healthyRunTime = time.Minute
)

// run is one worker slot of a group. One goroutine (loop) owns it and the
// process it starts, restarts the process when it dies, and stops it.
type run struct {
	m      *Model
	g      *group
	env    slotEnv
	id     int
	ctx    context.Context // canceled to stop the worker after its current batch
	cancel context.CancelFunc
	done   chan struct{}

	mu         sync.Mutex
	temporary  bool // released after max_idle_time without work; not restarted
	state      string
	proc       Runner
	unit       string // the GPU or MIG device UUID the process runs on; "" on the CPU
	began      time.Time
	lastActive time.Time
	quitting   bool
	admitted   bool                    // it holds room: the residency admitted it, until it leaves
	idleOut    bool                    // it left because it had no work (a temporary worker's max_idle_time)
	retune     context.CancelCauseFunc // ends the wait for the next batch, to apply a new kind
	waitCtx    context.Context         // a permanent worker's wait for work, kept between batches
	waitParent context.Context         // the serving context waitCtx hangs off
}

// slotEnv is what a worker slot needs of the registry, handed to it when
// the slot is made, so that the slot's code reaches no further than its
// model.
type slotEnv struct {
	log        *zap.Logger                                          // with the model's and the worker's fields
	admit      func(w *run) error                                   // waits until there is room for w (residency.admit)
	forced     context.Context                                      // done once a forced shutdown cuts off what runs
	stopGrace  time.Duration                                        // a retired process's time between SIGTERM and SIGKILL
	metrics    *metrics                                             //
	series     modelSeries                                          // the model's dispatch metrics
	lockDevice func(ctx context.Context) (unlock func(), err error) // the start lock of the group's device
	place      func() (unit string, err error)                      // memory check and GPU or MIG device, under that lock
	start      func(ctx context.Context, unit string) (Runner, error)
	trackingID func() string
}

// slotEnv returns what a new worker slot id of g needs.
func (r *Registry) slotEnv(g *group, id int) slotEnv {
	m := g.m
	return slotEnv{
		log:        r.log.With(zap.String("model", m.name), zap.Int("worker", id)),
		forced:     r.ctx,
		stopGrace:  r.stopGrace(),
		metrics:    r.metrics,
		admit:      r.res.admit,
		series:     r.metrics.forModel(m.name),
		lockDevice: func(ctx context.Context) (func(), error) { return r.lockDevice(ctx, g) },
		place:      func() (string, error) { return r.placeWorker(g) },
		start: func(ctx context.Context, unit string) (Runner, error) {
			return r.cfg.Start(ctx, r.spec(m, g.device, unit))
		},
		trackingID: r.trackingID,
	}
}

// exit says why serving a process ended.
type exit int

const (
	exitStopped exit = iota // asked to stop, idle, or the queue closed
	exitDied                // the process died on its own
	exitTimeout             // a request timed out and the process was killed
)

func (w *run) setState(s string) {
	w.mu.Lock()
	w.state = s
	w.mu.Unlock()
}

func (w *run) stopping() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.quitting
}

// serving reports whether the worker takes requests and is not stopping.
func (w *run) serving() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.quitting && (w.state == workerReady || w.state == workerBusy)
}

func (w *run) isTemporary() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.temporary
}

// setTemporary changes the worker's kind, and wakes it from its wait for
// work so that the idle limit of its new kind applies at once.
func (w *run) setTemporary(temp bool) {
	w.mu.Lock()
	w.temporary = temp
	retune := w.retune
	w.mu.Unlock()
	if retune != nil {
		retune(errRetune)
	}
}

// stop asks the worker to stop after its current batch.
func (w *run) stop() {
	w.mu.Lock()
	w.quitting = true
	w.mu.Unlock()
	w.cancel()
}

// view is the worker as a scaling plan sees it.
func (w *run) view() workerView {
	w.mu.Lock()
	defer w.mu.Unlock()
	return workerView{w: w, state: w.state, temporary: w.temporary, stopping: w.quitting, unit: w.unit}
}

func (w *run) setProc(p Runner) {
	w.mu.Lock()
	w.proc = p
	w.mu.Unlock()
}

// loop starts the worker's process, serves it, and restarts it with backoff
// until the worker is stopped or the model fails.
func (w *run) loop() {
	defer w.m.wg.Done()
	defer close(w.done)
	defer w.leave()
	var b backoff
	for w.ctx.Err() == nil {
		p, err := w.start()
		if err != nil {
			if w.startFailed(err, &b) {
				return
			}
			continue
		}
		began := time.Now()
		why := w.serve(p)
		w.retire(p)
		if why == exitStopped || w.ctx.Err() != nil {
			w.setIdleOut(why == exitStopped && w.ctx.Err() == nil)
			return
		}
		if w.died(p, why, time.Since(began), &b) {
			return
		}
	}
}

// startFailed handles a failed start and reports whether the loop ends. A
// temporary worker that finds no memory just goes: that is no fault of the
// model. Nor is a GPU that is down: a permanent worker waits for it with
// backoff, and its group does not count toward the model's health meanwhile.
func (w *run) startFailed(err error, b *backoff) bool {
	if w.ctx.Err() != nil || w.isTemporary() && isMemoryError(err) {
		return true
	}
	if isDeviceDown(err) {
		if w.m.deviceDown(w.g, err) {
			return true
		}
		d := b.next()
		w.env.log.Warn("gpu down; worker waits", zap.Error(err), zap.Duration("backoff", d))
		w.pause(d)
		return false
	}
	if w.m.workerFailed(err, tailOf(err)) || w.isTemporary() {
		return true
	}
	d := b.next()
	w.env.log.Warn("worker failed to start", zap.Error(err), zap.Duration("backoff", d))
	w.pause(d)
	return false
}

// died handles a process that ended on its own (or was killed at its
// predict timeout) after ran, and reports whether the loop ends.
func (w *run) died(p Runner, why exit, ran time.Duration, b *backoff) bool {
	w.env.metrics.restarted(w.m.name)
	if why == exitTimeout {
		return false // its state was unknown; a fresh worker at once
	}
	b.ran(ran)
	if w.m.workerFailed(p.Err(), p.StderrTail()) || w.isTemporary() {
		w.env.log.Warn("worker died", zap.Error(p.Err()))
		return true
	}
	d := b.next()
	w.env.log.Warn("worker died; restarting", zap.Error(p.Err()), zap.Duration("backoff", d))
	w.pause(d)
	return false
}

// backoff is the restart delay of one worker slot: backoffMin, doubling at
// each failure up to backoffMax, and back to backoffMin once a process has
// run healthyRunTime.
type backoff struct{ last time.Duration }

// next returns the delay before the next restart.
func (b *backoff) next() time.Duration {
	if b.last == 0 {
		b.last = backoffMin
	} else {
		b.last = min(2*b.last, backoffMax)
	}
	return b.last
}

// ran notes how long the last process ran.
func (b *backoff) ran(d time.Duration) {
	if d >= healthyRunTime {
		b.last = 0
	}
}

// pause waits out a restart delay, or until the worker is stopped.
func (w *run) pause(d time.Duration) {
	w.setState(workerBackoff)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.ctx.Done():
	}
}

// start starts one process for the worker. First it waits for room (the
// residency may evict idle models for it, or refuse it). Under its device's start lock,
// it checks memory against figures read after the previous worker loaded,
// picks the GPU or MIG device, and waits for the process to load.
func (w *run) start() (Runner, error) {
	w.setState(workerStarting)
	if err := w.env.admit(w); err != nil {
		return nil, err
	}
	unlock, err := w.env.lockDevice(w.ctx)
	if err != nil {
		return nil, err
	}
	defer unlock()
	unit, err := w.env.place()
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.unit = unit
	w.mu.Unlock()
	p, err := w.env.start(w.ctx, unit)
	if err != nil {
		return nil, err
	}
	if err := w.m.replayAdapters(w.ctx, p); err != nil {
		w.env.log.Error("the adapters registered through the API could not be given to the new worker", zap.Error(err))
	}
	w.mu.Lock()
	w.proc, w.state, w.lastActive = p, workerReady, time.Now()
	w.mu.Unlock()
	w.m.setGeneration(generationOf(p.InitProps()))
	w.m.setTensors(declaredTensors(p.InitProps()))
	w.m.workerReady(w.g, initProp(p, "rolling_batch"))
	return p, nil
}

// retire stops a process that is done serving. Once a forced shutdown has
// begun, the process is killed at once instead of given its SIGTERM grace.
func (w *run) retire(p Runner) {
	w.setState(workerStopping)
	ctx, cancel := context.WithTimeout(w.env.forced, w.env.stopGrace+time.Second)
	defer cancel()
	if err := p.Stop(ctx); err != nil {
		w.env.log.Warn("worker stop", zap.Error(err))
	}
	w.setProc(nil)
}

// leave takes the worker out of its group and wakes the scaler, which may
// need to replace it.
func (w *run) leave() {
	m := w.m
	m.mu.Lock()
	w.g.remove(w)
	if m.slotsLocked() == 0 {
		m.lastLeftLocked(w)
	}
	m.changedLocked()
	m.mu.Unlock()
	m.poke()
	m.reg.res.notify()
}

// isAdmitted reports whether the worker holds room.
func (w *run) isAdmitted() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.admitted
}

func (w *run) setAdmitted() {
	w.mu.Lock()
	w.admitted = true
	w.mu.Unlock()
}

// holdsWork reports whether a worker that holds room is loading or busy.
func (w *run) holdsWork() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.admitted && (w.state == workerBusy || w.state == workerStarting)
}

// procInfo returns the pid of the worker's process (0 when it has none)
// and the GPU or MIG device it runs on.
func (w *run) procInfo() (pid int, unit string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.proc != nil {
		pid = w.proc.PID()
	}
	return pid, w.unit
}

func (w *run) setIdleOut(idle bool) {
	w.mu.Lock()
	w.idleOut = idle
	w.mu.Unlock()
}

// wentIdle reports whether the worker left because it had no work.
func (w *run) wentIdle() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.idleOut
}

// tailOf returns the stderr lines a start error carries, if any.
func tailOf(err error) []string {
	var se *process.StartError
	if errors.As(err, &se) {
		return se.Stderr
	}
	return nil
}
