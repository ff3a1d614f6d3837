package worker

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
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
	g         *group
	id        int
	temporary bool
	ctx       context.Context // canceled to stop the worker after its current batch
	cancel    context.CancelFunc
	done      chan struct{}

	mu         sync.Mutex
	state      string
	proc       *Process
	began      time.Time
	lastActive time.Time
	quitting   bool
}

// exit says why serving a process ended.
type exit int

const (
	exitStopped exit = iota // asked to stop, idle, or the queue closed
	exitDied                // the process died on its own
	exitTimeout             // a request timed out and the process was killed
)

func (w *run) getState() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.state
}

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

// stop asks the worker to stop after its current batch.
func (w *run) stop() {
	w.mu.Lock()
	w.quitting = true
	w.mu.Unlock()
	w.cancel()
}

func (w *run) setProc(p *Process) {
	w.mu.Lock()
	w.proc = p
	w.mu.Unlock()
}

func (w *run) log() *zap.Logger {
	return w.g.m.reg.log.With(zap.String("model", w.g.m.name), zap.Int("worker", w.id))
}

// loop starts the worker's process, serves it, and restarts it with backoff
// until the worker is stopped or the model fails.
func (w *run) loop() {
	m := w.g.m
	defer m.wg.Done()
	defer close(w.done)
	defer w.leave()
	backoff := backoffMin
	for w.ctx.Err() == nil {
		p, err := w.start()
		if err != nil {
			if w.ctx.Err() != nil || m.workerFailed(err, tailOf(err)) || w.temporary {
				return
			}
			w.log().Warn("worker failed to start", zap.Error(err), zap.Duration("backoff", backoff))
			backoff = w.pause(backoff)
			continue
		}
		began := time.Now()
		why := w.serve(p)
		w.retire(p)
		if why == exitStopped || w.ctx.Err() != nil {
			return
		}
		m.reg.metrics.restarted(m.name)
		if why == exitTimeout {
			continue // its state was unknown; a fresh worker at once
		}
		if time.Since(began) >= healthyRunTime {
			backoff = backoffMin
		}
		w.log().Warn("worker died", zap.Error(p.Err()), zap.Duration("backoff", backoff))
		if m.workerFailed(p.Err(), p.StderrTail()) || w.temporary {
			return
		}
		backoff = w.pause(backoff)
	}
}

// pause waits out the backoff and returns the next one.
func (w *run) pause(d time.Duration) time.Duration {
	w.setState(workerBackoff)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-w.ctx.Done():
	}
	return min(2*d, backoffMax)
}

// start checks memory and starts one process for the worker.
func (w *run) start() (*Process, error) {
	w.setState(workerStarting)
	reg := w.g.m.reg
	if err := reg.checkMemory(w.g); err != nil {
		return nil, err
	}
	unlock, err := reg.lockDevice(w.ctx, w.g.device)
	if err != nil {
		return nil, err
	}
	defer unlock()
	p, err := Start(w.ctx, reg.spec(w.g.m, w.g.device.DeviceID))
	if err != nil {
		return nil, err
	}
	w.setProc(p)
	w.mu.Lock()
	w.state, w.lastActive = workerReady, time.Now()
	w.mu.Unlock()
	w.g.m.workerReady(initProp(p, "rolling_batch"))
	return p, nil
}

// retire stops a process that is done serving.
func (w *run) retire(p *Process) {
	w.setState(workerStopping)
	ctx, cancel := context.WithTimeout(context.Background(), w.g.m.reg.stopGrace()+time.Second)
	defer cancel()
	if err := p.Stop(ctx); err != nil {
		w.log().Warn("worker stop", zap.Error(err))
	}
	w.setProc(nil)
}

// leave takes the worker out of its group and wakes the scaler, which may
// need to replace it.
func (w *run) leave() {
	m := w.g.m
	m.mu.Lock()
	w.g.remove(w)
	m.mu.Unlock()
	m.poke()
}

// tailOf returns the stderr lines a start error carries, if any.
func tailOf(err error) []string {
	var se *StartError
	if errors.As(err, &se) {
		return se.Stderr
	}
	return nil
}

// isMemoryError reports whether err means no device had room: a model in that
// state fails at once instead of retrying.
func isMemoryError(err error) bool {
	return errors.Is(err, api.ErrInsufficientMemory)
}
