package process

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/message"
)

func rollingHarness(t *testing.T) *harness {
	h := newHarness(t)
	h.spec.InitProps = []message.Prop{{Key: "rolling_batch", Value: "vllm"}}
	return h
}

// TestTrackInterleaved sends three tracked requests whose frames the fake
// worker interleaves round robin; every stream must get its own tokens.
func TestTrackInterleaved(t *testing.T) {
	p := rollingHarness(t).start(t)
	tokens := map[string][]string{
		"a": {"a1", "a2", "a3"},
		"b": {"b1"},
		"c": {"c1", "c2"},
	}
	type result struct {
		id     string
		chunks []string
		err    error
	}
	results := make(chan result, len(tokens))
	for id, toks := range tokens {
		go func() {
			in := input("", "group", "g", "size", fmt.Sprint(len(tokens)), "tokens", strings.Join(toks, ","))
			done := newDoneProbe()
			resp, err := track(p, context.Background(), id, in, done.fn)
			if err != nil {
				results <- result{id: id, err: err}
				return
			}
			chunks, err := readAll(t, resp.Stream)
			done.check(t)
			results <- result{id, chunks, err}
		}()
	}
	for range tokens {
		r := <-results
		if r.err != nil || !reflect.DeepEqual(r.chunks, tokens[r.id]) {
			t.Errorf("request %s: %q, %v; want %q", r.id, r.chunks, r.err, tokens[r.id])
		}
	}
	if err := p.WaitIdle(context.Background()); err != nil || p.inFlight() != 0 {
		t.Errorf("after the streams: WaitIdle %v, inFlight %d", err, p.inFlight())
	}
}

func TestTrackWholeReply(t *testing.T) {
	p := rollingHarness(t).start(t)
	done := newDoneProbe()
	resp, err := track(p, context.Background(), "w", input("whole"), done.fn)
	if err != nil {
		t.Fatal(err)
	}
	done.check(t)
	if resp.Stream != nil || string(resp.Body) != "whole" || propOf(resp, TrackingKey) != "w" {
		t.Errorf("reply %+v, want the body back with its tracking id", resp)
	}
	if p.inFlight() != 0 {
		t.Errorf("inFlight %d after a whole reply", p.inFlight())
	}
}

// TestTrackCancelStream cancels a tracked request whose stream is open: the
// stream ends with the context's error and the slot frees when the worker
// sends its end frame for the cancel.
func TestTrackCancelStream(t *testing.T) {
	p := rollingHarness(t).start(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := newDoneProbe()
	resp, err := track(p, ctx, "s", input("", "hold", "first"), done.fn)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := resp.Stream.Next(context.Background()); err != nil || string(c) != "first" {
		t.Fatalf("first chunk %q, %v", c, err)
	}
	if p.inFlight() != 1 || done.calls() != 0 {
		t.Errorf("inFlight %d, done called %d times; want 1 and 0", p.inFlight(), done.calls())
	}
	cancel()
	if _, err := resp.Stream.Next(context.Background()); !errors.Is(err, context.Canceled) {
		t.Errorf("stream after cancel: %v, want context.Canceled", err)
	}
	done.check(t)
	if err := p.WaitIdle(context.Background()); err != nil || p.inFlight() != 0 {
		t.Errorf("after the end frame: WaitIdle %v, inFlight %d", err, p.inFlight())
	}
}

// TestTrackCancelBeforeReply cancels a tracked request that has no frame
// yet: Track returns the context's error at once.
func TestTrackCancelBeforeReply(t *testing.T) {
	h := rollingHarness(t)
	p := h.start(t)
	ctx, cancel := context.WithCancel(context.Background())
	held := h.watch.expect("fake: holding q")
	go func() { <-held; cancel() }()
	done := newDoneProbe()
	if _, err := track(p, ctx, "q", input("", "hold", "silent"), done.fn); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	done.check(t)
	if err := p.WaitIdle(context.Background()); err != nil || p.inFlight() != 0 {
		t.Errorf("after the end frame: WaitIdle %v, inFlight %d", err, p.inFlight())
	}
}

func TestTrackTimeout(t *testing.T) {
	h := rollingHarness(t)
	h.spec.PredictTimeout = 300 * time.Millisecond
	p := h.start(t)
	_, err := track(p, context.Background(), "slow", input("", "hold", "silent"), nil)
	checkErr(t, err, []error{api.ErrPredictTimeout}, []string{`request "slow"`, "300ms"})
	if err := p.WaitIdle(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Done():
		t.Error("a tracked timeout killed the worker")
	default:
	}
}

func TestTrackDuplicateID(t *testing.T) {
	h := rollingHarness(t)
	p := h.start(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp, err := track(p, ctx, "d", input("", "hold", "first"), nil)
	if err != nil {
		t.Fatal(err)
	}
	dup := newDoneProbe()
	if _, err := track(p, context.Background(), "d", input(""), dup.fn); !errors.Is(err, ErrDuplicateID) {
		t.Errorf("second request with id d: %v, want ErrDuplicateID", err)
	}
	if dup.calls() != 1 {
		t.Errorf("done of a request never sent ran %d times before Track returned, want 1", dup.calls())
	}
	cancel()
	readAll(t, resp.Stream)
}

// TestTrackWorkerDies checks that open tracked streams and waiting tracked
// requests fail at once when the worker dies.
func TestTrackWorkerDies(t *testing.T) {
	h := rollingHarness(t)
	p := h.start(t)
	openDone, waitingDone := newDoneProbe(), newDoneProbe()
	open, err := track(p, context.Background(), "open", input("", "hold", "first"), openDone.fn)
	if err != nil {
		t.Fatal(err)
	}
	held := h.watch.expect("fake: holding waiting")
	errc := make(chan error, 1)
	go func() {
		_, err := track(p, context.Background(), "waiting", input("", "hold", "silent"), waitingDone.fn)
		errc <- err
	}()
	<-held
	_, _ = p.predict(context.Background(), input("", "action", "exit", "code", "7"))
	want := fmt.Sprintf("worker %d (pid %d) of model echo exited: exit status 7", p.id, p.PID())
	checkErr(t, <-errc, []error{api.ErrWorkerDied}, []string{want})
	_, err = readAll(t, open.Stream)
	checkErr(t, err, []error{api.ErrWorkerDied}, []string{want})
	openDone.check(t)
	waitingDone.check(t)
	if p.inFlight() != 0 {
		t.Errorf("inFlight %d after the death", p.inFlight())
	}
}

// doneProbe counts the calls of a Track done callback.
type doneProbe struct {
	n  atomic.Int32
	ch chan struct{}
}

func newDoneProbe() *doneProbe { return &doneProbe{ch: make(chan struct{})} }

func (d *doneProbe) fn() {
	if d.n.Add(1) == 1 {
		close(d.ch)
	}
}

func (d *doneProbe) calls() int { return int(d.n.Load()) }

// check waits for the first call and checks that there was only one.
func (d *doneProbe) check(t *testing.T) {
	t.Helper()
	<-d.ch
	if n := d.calls(); n != 1 {
		t.Errorf("done ran %d times, want once", n)
	}
}

// callbackLog records the order of a tracked request's callbacks.
type callbackLog struct {
	mu     sync.Mutex
	events []string
	ended  chan struct{}
}

func newCallbackLog() *callbackLog { return &callbackLog{ended: make(chan struct{})} }

func (l *callbackLog) answer(resp *message.Response, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.events = append(l.events, "error")
	} else {
		l.events = append(l.events, "answer")
	}
}

func (l *callbackLog) done() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, "done")
	close(l.ended)
}

// TestTrackCallbacks checks that every tracked request gets exactly one
// answer and then exactly one end, whichever way it ends: a whole reply, a
// stream, a worker that dies holding it, a worker already gone.
func TestTrackCallbacks(t *testing.T) {
	h := rollingHarness(t)
	p := h.start(t)
	whole, stream, dying := newCallbackLog(), newCallbackLog(), newCallbackLog()
	p.Track(context.Background(), "whole", input("w"), whole.answer, whole.done)
	<-whole.ended
	streamed := make(chan *message.Response, 1)
	p.Track(context.Background(), "stream", input("", "group", "s", "size", "1", "tokens", "a,b"), func(resp *message.Response, err error) {
		stream.answer(resp, err)
		streamed <- resp
	}, stream.done)
	if _, err := readAll(t, (<-streamed).Stream); err != nil {
		t.Fatal(err)
	}
	<-stream.ended
	held := h.watch.expect("fake: holding held")
	p.Track(context.Background(), "held", input("", "hold", "silent"), dying.answer, dying.done)
	<-held
	_, _ = p.predict(context.Background(), input("", "action", "exit", "code", "7"))
	<-dying.ended
	late := newCallbackLog()
	p.Track(context.Background(), "late", input("x"), late.answer, late.done)
	for name, tt := range map[string]struct {
		log  *callbackLog
		want []string
	}{
		"whole":  {whole, []string{"answer", "done"}},
		"stream": {stream, []string{"answer", "done"}},
		"dying":  {dying, []string{"error", "done"}},
		"late":   {late, []string{"error", "done"}},
	} {
		tt.log.mu.Lock()
		if !reflect.DeepEqual(tt.log.events, tt.want) {
			t.Errorf("%s: callbacks %v, want %v", name, tt.log.events, tt.want)
		}
		tt.log.mu.Unlock()
	}
}
