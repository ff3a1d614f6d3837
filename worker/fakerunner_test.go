package worker

// The in-memory fake worker process the registry's lifecycle tests run on.
// It keeps Runner's contract as package process keeps it (every request
// answered exactly once; batches pipelined: Dispatch returns at once and
// the worker plays the batches in the order they came, each one's predict
// timeout counted from when it reaches the head of the line; a dead worker
// fails what it runs and the batches behind it as not sent, and refuses
// the rest as not sent; the predict timeout kills a worker that runs an
// untracked batch and only cancels a tracked request), with no I/O at all,
// so that the tests run under testing/synctest in virtual time.

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/worker/process"
)

// fakeRunner is one fake worker process.
type fakeRunner struct {
	world    *fakeWorld
	stopTime time.Duration // how long Stop takes before the worker exits
	onExit   func()        // called as it exits
	spec     process.Spec
	pid      int
	started  time.Time
	init     []message.Prop
	exited   chan struct{}
	ops      sync.WaitGroup // requests being played

	mu       sync.Mutex
	err      *process.ExitError
	lastDone chan struct{} // closed when the last batch dispatched has ended: the next one's turn
	tracked  map[string]bool
	served   int       // requests answered with a reply
	last     time.Time // when the last of them was answered
	maxLine  int       // the most untracked batches the worker held at once
	line     int       // untracked batches it holds now
	batches  []fakeBatch
}

// fakeBatch is one untracked batch a worker was given.
type fakeBatch struct {
	size   int
	direct bool // sent from inside Registry.Submit: the submitting goroutine, no hand-off
}

func newFakeRunner(spec process.Spec, pid int, rolling string) *fakeRunner {
	if rolling == "" {
		rolling = "disable"
		for _, p := range spec.InitProps {
			if p.Key == "rolling_batch" && p.Value != "auto" {
				rolling = p.Value
			}
		}
	}
	r := &fakeRunner{spec: spec, pid: pid, started: time.Now(), exited: make(chan struct{}),
		tracked: map[string]bool{}, init: []message.Prop{{Key: "rolling_batch", Value: rolling}}}
	for _, p := range spec.InitProps { // option.declare_<key>=<value>: what a handler declares, as the probe model does
		if key, ok := strings.CutPrefix(p.Key, "declare_"); ok {
			r.init = append(r.init, message.Prop{Key: key, Value: p.Value})
		}
	}
	return r
}

func (r *fakeRunner) name() string {
	return fmt.Sprintf("worker %d (pid %d) of model %s", r.pid, r.pid, r.spec.Model)
}

// exit ends the process with status; the first end is kept.
func (r *fakeRunner) exit(status, detail string) {
	r.mu.Lock()
	first := r.err == nil
	if first {
		r.err = &process.ExitError{Model: r.spec.Model, ID: r.pid, PID: r.pid, Status: status, Detail: detail}
		close(r.exited)
	}
	r.mu.Unlock()
	if first && r.world != nil {
		r.world.exited(r)
	}
	if first && r.onExit != nil {
		r.onExit()
	}
}

// crash kills the worker from outside, as SIGKILL would.
func (r *fakeRunner) crash() { r.exit("signal: killed", "") }

// Err says why the process exited; nil while it runs.
func (r *fakeRunner) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err == nil {
		return nil
	}
	return r.err
}

func (r *fakeRunner) Done() <-chan struct{}     { return r.exited }
func (r *fakeRunner) PID() int                  { return r.pid }
func (r *fakeRunner) Socket() string            { return "/fake/" + process.SocketPrefix + strconv.Itoa(r.pid) }
func (r *fakeRunner) Started() time.Time        { return r.started }
func (r *fakeRunner) InitProps() []message.Prop { return r.init }
func (r *fakeRunner) StderrTail() []string      { return []string{"fake: worker " + strconv.Itoa(r.pid)} }

// count notes n requests answered now.
func (r *fakeRunner) count(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.served, r.last = r.served+n, time.Now()
}

// servedCount returns how many requests the worker answered.
func (r *fakeRunner) servedCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.served
}

// lastServed returns when the worker last answered a request.
func (r *fakeRunner) lastServed() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.last
}

func (r *fakeRunner) predictTimeoutError() error { return r.timeoutError("did not answer") }

func (r *fakeRunner) timeoutError(what string) error {
	return fmt.Errorf("%w: %s %s within %v", api.ErrPredictTimeout, r.name(), what, r.spec.PredictTimeout)
}

// Stop ends the worker and waits until every request it held has failed.
func (r *fakeRunner) Stop(context.Context) error {
	if r.stopTime > 0 {
		time.Sleep(r.stopTime)
	}
	r.exit("signal: terminated", "stopped")
	r.ops.Wait()
	return nil
}

// begin counts a request in, unless the worker is dead.
func (r *fakeRunner) begin() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.err != nil {
		return fmt.Errorf("%w: %w", process.ErrNotSent, r.err)
	}
	r.ops.Add(1)
	return nil
}

// end counts a request out.
func (r *fakeRunner) end() { r.ops.Done() }

// maxHeld returns the most untracked batches the worker held at once.
// given returns the untracked batches the worker was given, in order.
func (r *fakeRunner) given() []fakeBatch {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.batches)
}

// calledFrom reports whether the function named with suffix fn is on the
// calling goroutine's stack.
func calledFrom(fn string) bool {
	pc := make([]uintptr, 64)
	frames := runtime.CallersFrames(pc[:runtime.Callers(2, pc)])
	for {
		f, more := frames.Next()
		if strings.HasSuffix(f.Function, fn) {
			return true
		}
		if !more {
			return false
		}
	}
}

func (r *fakeRunner) maxHeld() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.maxLine
}

// fakeAct is what a request asks the fake worker to do, from its
// properties: action=sleep (seconds=N), hang (never answer), crash (exit
// with status 3 holding it), fail (answer with code=N); tokens=a,b,c
// streams them, one per second.
type fakeAct struct {
	action string
	took   time.Duration
	code   int
	tokens []string
}

func actOf(ins []*message.Input) fakeAct {
	var a fakeAct
	for _, in := range ins {
		p := props(in)
		if p["action"] == "" && p["tokens"] == "" {
			continue
		}
		a.action = p["action"]
		if s, err := strconv.ParseFloat(p["seconds"], 64); err == nil {
			a.took = time.Duration(s * float64(time.Second))
		}
		a.code, _ = strconv.Atoi(p["code"])
		if p["tokens"] != "" {
			a.tokens = strings.Split(p["tokens"], ",")
		}
		return a
	}
	return a
}

func props(in *message.Input) map[string]string {
	m := map[string]string{}
	for _, p := range in.Props {
		m[p.Key] = p.Value
	}
	return m
}

// reply is the fake's answer to one request: its body back, with the
// worker's pid as x-pid.
func (r *fakeRunner) reply(in *message.Input, a fakeAct) *message.Response {
	resp := &message.Response{Code: 200, Message: "OK", Props: []message.Prop{{Key: "x-pid", Value: strconv.Itoa(r.pid)}}}
	if a.action == "fail" {
		resp.Code, resp.Message = a.code, fmt.Sprintf("fake: failed with %d", a.code)
	}
	if len(in.Content) > 0 {
		resp.Body = in.Content[0].Value
	}
	return resp
}

// Dispatch takes one untracked request or batch into the worker's line
// and returns; a goroutine plays it when its turn comes. As with a real
// worker, once a batch is sent only its reply or the worker's death ends
// it: ctx is looked at before.
func (r *fakeRunner) Dispatch(ctx context.Context, ins []*message.Input, answer func(int, *message.Response, error), done func(error)) error {
	err := ctx.Err()
	var turn <-chan struct{}
	var ended chan struct{}
	if err == nil {
		turn, ended, err = r.enqueue()
	}
	if err != nil {
		for i := range ins {
			answer(i, nil, err)
		}
		done(err)
		return err
	}
	r.mu.Lock()
	r.batches = append(r.batches, fakeBatch{size: len(ins), direct: calledFrom(".(*Registry).Submit")})
	r.mu.Unlock()
	go func() {
		defer r.end()
		defer close(ended)
		err := r.playBatch(turn, ins)
		if err == nil {
			r.world.noteAnswers(ins)
		}
		for i, in := range ins {
			if err != nil {
				answer(i, nil, err)
			} else {
				answer(i, r.reply(in, actOf(ins)), nil)
			}
		}
		if err == nil {
			r.count(len(ins))
		}
		r.leaveLine()
		done(err)
	}()
	return nil
}

// enqueue puts a batch at the end of the line: it returns the channel that
// is closed when the batch before it has ended, and the one this batch
// closes when it ends. A worker whose write breaks (its model's world is
// "lost") dies then, and the batch was not sent.
func (r *fakeRunner) enqueue() (turn <-chan struct{}, ended chan struct{}, err error) {
	if r.world.lost(r.spec.Model) {
		r.exit("signal: killed", "write failed: broken pipe")
	}
	if err := r.begin(); err != nil {
		return nil, nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	prev := r.lastDone
	if prev == nil {
		prev = closedChan
	}
	ended = make(chan struct{})
	r.lastDone = ended
	r.line++
	r.maxLine = max(r.maxLine, r.line)
	return prev, ended, nil
}

func (r *fakeRunner) leaveLine() {
	r.mu.Lock()
	r.line--
	r.mu.Unlock()
}

// closedChan is a turn that has come.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// playBatch waits for the batch's turn, then plays it and returns the
// error that answers it, if any. A batch whose turn never came because the
// worker died was not started: it fails as not sent. A crash comes after
// the batch's seconds.
func (r *fakeRunner) playBatch(turn <-chan struct{}, ins []*message.Input) error {
	select {
	case <-turn:
	case <-r.exited:
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("%w: %w", process.ErrNotSent, err)
	}
	a := actOf(ins)
	if a.action == "hang" {
		a.took = -1
	}
	if err := r.play(context.Background(), a.took, true); err != nil || a.action != "crash" {
		return err
	}
	r.exit("exit status 3", "")
	return r.Err()
}

// play lets a request run for took (forever when negative), within the
// predict timeout. At the timeout an untracked request (kill set) kills
// the worker, as package process does; a tracked one only fails.
func (r *fakeRunner) play(ctx context.Context, took time.Duration, kill bool) error {
	limit := time.NewTimer(r.spec.PredictTimeout)
	defer limit.Stop()
	var ran <-chan time.Time
	if took >= 0 {
		t := time.NewTimer(took)
		defer t.Stop()
		ran = t.C
	}
	select {
	case <-ran:
		return nil
	case <-limit.C:
		if kill {
			r.exit("signal: killed", "killed: predict timeout")
			return r.predictTimeoutError()
		}
		return r.timeoutError("sent nothing")
	case <-r.exited:
		return r.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Track plays one tracked request on a goroutine of its own.
func (r *fakeRunner) Track(ctx context.Context, id string, in *message.Input, answer func(*message.Response, error), done func()) {
	if r.world.lost(r.spec.Model) {
		r.exit("signal: killed", "write failed: broken pipe")
	}
	if err := r.register(id); err != nil {
		answer(nil, err)
		done()
		return
	}
	go func() {
		defer r.untrack(id, done)
		r.playTracked(ctx, in, answer)
	}()
}

func (r *fakeRunner) register(id string) error {
	if err := r.begin(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tracked[id] {
		defer r.end()
		return fmt.Errorf("%s: %w: %q", r.name(), process.ErrDuplicateID, id)
	}
	r.tracked[id] = true
	return nil
}

func (r *fakeRunner) untrack(id string, done func()) {
	r.mu.Lock()
	delete(r.tracked, id)
	r.mu.Unlock()
	r.end()
	done()
}

// playTracked answers a tracked request: at once, after its time, or
// streamed token by token.
func (r *fakeRunner) playTracked(ctx context.Context, in *message.Input, answer func(*message.Response, error)) {
	a := actOf([]*message.Input{in})
	switch a.action {
	case "crash":
		r.exit("exit status 3", "")
		answer(nil, r.Err())
		return
	case "hang":
		a.took = -1
	}
	if err := r.play(ctx, a.took, false); err != nil {
		answer(nil, err)
		return
	}
	if a.tokens == nil {
		answer(r.reply(in, a), nil)
		r.count(1)
		return
	}
	r.stream(ctx, a.tokens, answer)
}

// stream answers with a stream that carries one token a second.
func (r *fakeRunner) stream(ctx context.Context, tokens []string, answer func(*message.Response, error)) {
	st := message.NewStream()
	answer(&message.Response{Code: 200, Stream: st, Props: []message.Prop{{Key: "x-pid", Value: strconv.Itoa(r.pid)}}}, nil)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for _, tok := range tokens {
		st.Push([]byte(tok))
		select {
		case <-tick.C:
		case <-r.exited:
			st.Close(r.Err())
			return
		case <-ctx.Done():
			st.Close(ctx.Err())
			return
		}
	}
	st.Close(nil)
	r.count(1)
}

var _ Runner = (*fakeRunner)(nil)
