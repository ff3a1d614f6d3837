package worker

// The world of the in-memory fake worker processes the registry's
// lifecycle tests run on (fakerunner_test.go): how each model's workers
// load, and every start and worker, for the tests to look at.

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/worker/process"
)

// fakeLoadTime is how long a fake worker takes to load when its script
// does not say.
const fakeLoadTime = 100 * time.Millisecond

// fakeScript says how the fake workers of one model load. The zero value
// loads in fakeLoadTime and serves.
type fakeScript struct {
	loadTime time.Duration // how long a start takes; 0 means fakeLoadTime, negative no time at all
	fail     int           // the next fail starts fail as a Python traceback at import would; -1: all
	oom      bool          // starts fail with 507 (CUDA out of memory)
	hang     bool          // starts never finish: they wait out the load timeout
	single   bool          // a start fails while another worker of the model lives
	rolling  string        // the rolling_batch mode workers report; "" means the configured one
	lose     int           // the next lose requests are lost: the worker dies before they reach it
	onLoad   func()        // called as a worker finishes loading
	onExit   func()        // called as a worker exits
	stopTime time.Duration // how long a worker takes to exit once stopped
}

// fakeStart is one call of the start function.
type fakeStart struct {
	spec process.Spec
	pid  int
	at   time.Time
	err  error // nil when the worker loaded
}

// fakeWorld holds the fake worker processes of one registry.
type fakeWorld struct {
	mu      sync.Mutex
	pid     int
	scripts map[string]*fakeScript
	starts  []fakeStart
	runners []*fakeRunner

	// What the residency tests watch, as it happens.
	holding    map[string]int   // per model, starts under way and workers alive
	peakLoaded int              // the most models that held workers at once
	overlaps   []string         // starts of a model that began while it held a worker already
	seq        *atomic.Int64    // a clock of events the tests share; nil when no test reads one
	answered   map[string]int64 // per job body, seq just before its answer
}

func newFakeWorld() *fakeWorld {
	return &fakeWorld{pid: 1 << 22, scripts: map[string]*fakeScript{}, holding: map[string]int{}, answered: map[string]int64{}}
}

// holdLocked notes that model holds d more starts or workers, and the
// most models holding any at once.
func (w *fakeWorld) holdLocked(model string, d int) {
	if d > 0 && w.holding[model] > 0 {
		w.overlaps = append(w.overlaps, model)
	}
	w.holding[model] += d
	n := 0
	for _, h := range w.holding {
		if h > 0 {
			n++
		}
	}
	w.peakLoaded = max(w.peakLoaded, n)
}

// exited notes that r exited.
func (w *fakeWorld) exited(r *fakeRunner) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.holdLocked(r.spec.Model, -1)
}

// noteAnswers records, for each body of ins, the seq just before its
// answer.
func (w *fakeWorld) noteAnswers(ins []*message.Input) {
	if w.seq == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, in := range ins {
		if len(in.Content) > 0 {
			w.answered[string(in.Content[0].Value)] = w.seq.Add(1)
		}
	}
}

// watch returns the most models that held workers at once, and the
// models that started while they held one.
func (w *fakeWorld) watch() (peak int, overlaps []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.peakLoaded, slices.Clone(w.overlaps)
}

func (w *fakeWorld) scriptLocked(model string) *fakeScript {
	s := w.scripts[model]
	if s == nil {
		s = &fakeScript{}
		w.scripts[model] = s
	}
	return s
}

// set changes model's script under the world's lock.
func (w *fakeWorld) set(model string, change func(*fakeScript)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	change(w.scriptLocked(model))
}

// start is the registry's StartFunc.
func (w *fakeWorld) start(ctx context.Context, spec process.Spec) (Runner, error) {
	if spec.LoadTimeout <= 0 {
		spec.LoadTimeout = process.DefaultLoadTimeout
	}
	if spec.PredictTimeout <= 0 {
		spec.PredictTimeout = process.DefaultPredictTimeout
	}
	w.mu.Lock()
	w.pid++
	pid, s := w.pid, *w.scriptLocked(spec.Model)
	w.starts = append(w.starts, fakeStart{spec: spec, pid: pid, at: time.Now()})
	n := len(w.starts) - 1
	w.holdLocked(spec.Model, 1)
	w.mu.Unlock()
	r, err := w.load(ctx, spec, pid, s)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.starts[n].err = err
	if err != nil {
		w.holdLocked(spec.Model, -1)
		return nil, err
	}
	w.runners = append(w.runners, r)
	return r, nil
}

// load plays a start: the load time, then the script's failure, if any.
func (w *fakeWorld) load(ctx context.Context, spec process.Spec, pid int, s fakeScript) (*fakeRunner, error) {
	name := fmt.Sprintf("worker %d (pid %d) of model %s", pid, pid, spec.Model)
	if err := loadWait(ctx, spec, name, s); err != nil {
		return nil, err
	}
	if err := w.loadFailure(spec.Model, name, pid, s); err != nil {
		return nil, err
	}
	if s.onLoad != nil {
		s.onLoad()
	}
	r := newFakeRunner(spec, pid, s.rolling)
	r.world, r.stopTime, r.onExit = w, s.stopTime, s.onExit
	return r, nil
}

// loadWait waits out the load time, within the load timeout and ctx.
func loadWait(ctx context.Context, spec process.Spec, name string, s fakeScript) error {
	d := s.loadTime
	if d == 0 {
		d = fakeLoadTime
	}
	if s.hang {
		d = spec.LoadTimeout + time.Hour
	}
	loaded, limit := time.NewTimer(max(d, 0)), time.NewTimer(spec.LoadTimeout)
	defer loaded.Stop()
	defer limit.Stop()
	select {
	case <-loaded.C:
		return nil
	case <-limit.C:
		return &process.StartError{Err: fmt.Errorf("%w: %s did not start within %v (no readiness line)", process.ErrLoadTimeout, name, spec.LoadTimeout)}
	case <-ctx.Done():
		return &process.StartError{Err: fmt.Errorf("%s: start canceled: %w", name, context.Cause(ctx))}
	}
}

// loadFailure is the error of a start that the script fails, or nil.
func (w *fakeWorld) loadFailure(model, name string, pid int, s fakeScript) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	script := w.scriptLocked(model)
	switch {
	case s.oom:
		return &process.StartError{Err: fmt.Errorf("%w: %w: %s: CUDA out of memory", process.ErrLoad, api.ErrInsufficientMemory, name)}
	case script.fail != 0:
		if script.fail > 0 {
			script.fail--
		}
		return importFailure(model, pid, "RuntimeError: fake: the model does not load")
	case s.single && w.liveLocked(model) > 0:
		return importFailure(model, pid, "RuntimeError: fake: another worker holds the model")
	}
	return nil
}

// importFailure is how a start fails when the handler raises at import.
func importFailure(model string, pid int, last string) error {
	exit := &process.ExitError{Model: model, ID: pid, PID: pid, Status: "exit status 1"}
	return &process.StartError{
		Err:    fmt.Errorf("%w: %w: %s", process.ErrLoad, exit, last),
		Stderr: []string{"INFO loading", "Traceback (most recent call last):", `  File "model.py", line 1, in <module>`, last},
	}
}

func (w *fakeWorld) liveLocked(model string) int {
	n := 0
	for _, r := range w.runners {
		if r.spec.Model == model && r.Err() == nil {
			n++
		}
	}
	return n
}

// lost reports whether the script loses the next request of model.
func (w *fakeWorld) lost(model string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.scriptLocked(model)
	if s.lose == 0 {
		return false
	}
	s.lose--
	return true
}

// live returns the model's fake workers that have not exited, oldest first.
func (w *fakeWorld) live(model string) []*fakeRunner {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*fakeRunner
	for _, r := range w.runners {
		if r.spec.Model == model && r.Err() == nil {
			out = append(out, r)
		}
	}
	return out
}

// exists reports whether pid is a fake worker that has not exited, as
// the kernel would.
func (w *fakeWorld) exists(pid int) bool {
	r := w.runner(pid)
	return r != nil && r.Err() == nil
}

// runner returns the fake worker pid, or nil.
func (w *fakeWorld) runner(pid int) *fakeRunner {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, r := range w.runners {
		if r.pid == pid {
			return r
		}
	}
	return nil
}

// startsOf returns the starts of model's workers (every model's for ""),
// in order.
func (w *fakeWorld) startsOf(model string) []fakeStart {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []fakeStart
	for _, s := range w.starts {
		if model == "" || s.spec.Model == model {
			out = append(out, s)
		}
	}
	return out
}
