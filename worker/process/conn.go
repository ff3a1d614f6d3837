package process

import (
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/worker/wire"
)

// TrackingKey is the property that ties a rolling-batch request and its
// reply frames together.
const TrackingKey = "request_tracking_id"

// call is one request waiting for its reply. Its fields are guarded by the
// process's mu; resp, stream and err are final once settled is set.
type call struct {
	// deadline is when the first frame must be in: for a tracked request
	// set once, as the call is made; for an untracked one when it reaches
	// the head of the line.
	deadline  time.Time
	resp      *wire.Response
	stream    *message.Stream
	err       error
	settled   bool
	abandoned bool        // nobody waits for the result any more
	finished  bool        // the reply is complete
	written   bool        // the request's frame is on the wire
	answered  bool        // the answer (answer or reply) has been taken
	stopWatch func() bool // stops the watch on the caller's context
	stopTimer func() bool // stops a tracked request's predict timeout
	onEnd     func()      // Track's done callback
	// answer is Track's callback: the reply's first frame, or the error
	// that kept it from one, exactly once (see takeAnswer).
	answer func(*message.Response, error)
	// reply is an untracked call's: the first frame, on the reading
	// goroutine, so that Dispatch answers its requests without a hand-off,
	// or the error that kept it from one, exactly once (see takeAnswer).
	reply func(*wire.Response, *message.Stream, error)
	ended func(error) // Dispatch's done callback
}

// newCall returns a tracked call whose reply is due within the predict
// timeout: the one place a tracked request's deadline is set.
func (p *Process) newCall() *call {
	return &call{deadline: time.Now().Add(p.spec.PredictTimeout)}
}

// settle records the first frame (or err) of c's reply; p.mu is held.
func (c *call) settle(resp *wire.Response, err error) {
	if c.settled {
		return
	}
	c.settled, c.resp, c.err = true, resp, err
	if resp != nil && resp.Streaming && !c.abandoned {
		c.stream = message.NewStream()
	}
	if c.stopTimer != nil {
		c.stopTimer()
	}
}

// takeAnswer returns the call that gives a settled request its answer,
// the first time it is asked; nil otherwise. p.mu is held; call the result
// once it is released.
func (c *call) takeAnswer() func() {
	if c.answered || !c.settled || (c.answer == nil && c.reply == nil) {
		return nil
	}
	c.answered = true
	answer, reply, resp, st, err := c.answer, c.reply, c.resp, c.stream, c.err
	switch {
	case reply != nil && err != nil:
		return func() { reply(nil, nil, err) }
	case reply != nil:
		return func() { reply(resp, st, nil) }
	case err != nil:
		return func() { answer(nil, err) }
	}
	return func() { answer(resp.ToBatching(st), nil) }
}

// finish ends c with err (nil for a clean end) and returns the callbacks
// to run once p.mu, which is held, is released: the request's answer, if
// it had none yet, then its end.
func (c *call) finish(err error) (answer, onEnd func()) {
	if c.finished {
		return nil, nil
	}
	c.settle(nil, err)
	c.finished = true
	if c.stream != nil {
		c.stream.Close(err)
	}
	if c.stopWatch != nil {
		c.stopWatch()
	}
	onEnd = c.onEnd
	if ended := c.ended; ended != nil {
		onEnd = func() { ended(err) }
	}
	return c.takeAnswer(), onEnd
}

// callAll calls the callbacks that finish returned.
func callAll(fns ...func()) {
	for _, fn := range fns {
		if fn != nil {
			fn()
		}
	}
}

// readLoop is the one goroutine that reads the connection and routes every
// frame to its request.
func (p *Process) readLoop() {
	defer close(p.readerDone)
	for {
		resp, err := p.rd.ReadResponse()
		if err == nil {
			err = p.route(resp)
		}
		if err != nil {
			p.connLost(err)
			return
		}
	}
}

func (p *Process) route(resp *wire.Response) error {
	if id, ok := resp.Prop(TrackingKey); ok {
		return p.routeTracked(id, resp)
	}
	return p.routeUntracked(resp)
}

// routeUntracked gives an untracked reply to the call at the head of the
// line: the worker answers in the order the frames came.
func (p *Process) routeUntracked(resp *wire.Response) error {
	p.mu.Lock()
	var c *call
	var answer func()
	if len(p.pending) > 0 {
		c = p.pending[0]
		c.settle(resp, nil)
		answer = c.takeAnswer()
	}
	dead := p.dead != nil
	p.mu.Unlock()
	if c == nil && !dead {
		p.log.Warn("worker sent a reply nobody asked for", zap.Int("code", resp.Code))
	}
	callAll(answer)
	var end error
	if resp.Streaming {
		var err error
		if end, err = p.pump(c); err != nil {
			return err
		}
	}
	if c != nil {
		p.finishPending(c, end)
	}
	return nil
}

// pump moves the chunks of an untracked stream into c's stream (or drops
// them when c is nil) and returns the error the stream ended with.
func (p *Process) pump(c *call) (end, err error) {
	for {
		data, more, err := p.rd.ReadChunk()
		if err != nil {
			return nil, err
		}
		if !more {
			return p.streamEnd(data), nil
		}
		if c != nil && c.stream != nil {
			c.stream.Push(data)
		}
	}
}

func (p *Process) streamEnd(text []byte) error {
	if len(text) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s: %s", ErrStream, p.name(), text)
}

// routeTracked handles one frame of a tracked request: a whole reply, or a
// streamed frame that carries exactly one chunk.
func (p *Process) routeTracked(id string, resp *wire.Response) error {
	p.mu.Lock()
	c := p.tracked[id]
	var answer func()
	if c != nil {
		c.settle(resp, nil)
		answer = c.takeAnswer()
	}
	p.mu.Unlock()
	if c == nil {
		p.log.Debug("frame for an unknown tracking id", zap.String("id", id))
	}
	callAll(answer)
	if !resp.Streaming {
		p.finishTracked(id, c, nil)
		return nil
	}
	return p.trackedChunk(id, c)
}

// trackedChunk reads the one chunk of a tracked streamed frame.
func (p *Process) trackedChunk(id string, c *call) error {
	data, more, err := p.rd.ReadChunk()
	if err != nil {
		return err
	}
	if !more {
		p.finishTracked(id, c, p.streamEnd(data))
	} else if c != nil && c.stream != nil {
		c.stream.Push(data)
	}
	return nil
}

// finishPending ends the call at the head of the line once its reply is
// complete, and starts the next one's predict timeout.
func (p *Process) finishPending(c *call, err error) {
	p.mu.Lock()
	_, ended := c.finish(err) // its answer was taken with the first frame
	if n := len(p.pending); n > 0 && p.pending[0] == c {
		copy(p.pending, p.pending[1:])
		p.pending[n-1] = nil
		p.pending = p.pending[:n-1]
		if n > 1 {
			p.startHeadLocked()
		}
	}
	p.checkIdle()
	p.mu.Unlock()
	callAll(ended)
}

func (p *Process) finishTracked(id string, c *call, err error) {
	if c == nil {
		return
	}
	p.mu.Lock()
	answer, onEnd := c.finish(err)
	if p.tracked[id] == c {
		delete(p.tracked, id)
	}
	p.checkIdle()
	p.mu.Unlock()
	callAll(answer, onEnd)
}

// markBusy notes that a request is outstanding; p.mu is held.
func (p *Process) markBusy() {
	if p.idleClosed {
		p.idle, p.idleClosed = make(chan struct{}), false
	}
}

// checkIdle wakes WaitIdle when nothing is outstanding; p.mu is held.
func (p *Process) checkIdle() {
	if !p.idleClosed && len(p.pending) == 0 && len(p.tracked) == 0 {
		close(p.idle)
		p.idleClosed = true
	}
}

// connLost fails every outstanding request once the connection is gone. A
// worker that closed its end is given up to exitGrace to exit, so that its
// exit status can be in the error; one that broke the protocol, or did not
// exit, is killed.
func (p *Process) connLost(readErr error) {
	p.mu.Lock()
	stopping := p.stopping
	p.mu.Unlock()
	if !stopping && !connClosed(readErr) {
		p.log.Error("protocol error; killing the worker", zap.Error(readErr))
		p.kill("protocol error: " + readErr.Error())
	}
	p.failAll(p.lossError(stopping, readErr))
}

func (p *Process) lossError(stopping bool, readErr error) error {
	e := &ExitError{Model: p.spec.Model, ID: p.id, PID: p.pid, Detail: "stopped"}
	if stopping {
		return e
	}
	if p.awaitExit(exitGrace) {
		return p.exitErr
	}
	p.kill("connection lost")
	e.Detail = "connection lost: " + readErr.Error()
	return e
}

// connClosed reports whether err is the peer or this side closing the
// connection rather than a malformed frame.
func connClosed(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, net.ErrClosed) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, syscall.EPIPE)
}

// failAll fails every outstanding request with err, and every later one. A
// request whose frame was not written yet fails as not sent, and so do the
// untracked ones behind the head of the line: the worker had not started
// them.
func (p *Process) failAll(err error) {
	p.mu.Lock()
	ends := p.failLocked(err, err)
	for id, c := range p.tracked {
		cerr := err
		if !c.written {
			cerr = notSent(err)
		}
		answer, onEnd := c.finish(cerr)
		ends = append(ends, answer, onEnd)
		delete(p.tracked, id)
	}
	p.checkIdle()
	p.mu.Unlock()
	callAll(ends...)
}

// failLocked marks the process dead, if it is not yet, and ends the
// untracked line: the head with headErr, the calls behind it (and a head
// whose frame was not written) as not sent, with rest. It returns the
// callbacks to run once p.mu, which is held, is released.
func (p *Process) failLocked(headErr, rest error) []func() {
	if p.dead == nil {
		p.dead = headErr
		close(p.deadCh)
	}
	var ends []func()
	for i, c := range p.pending {
		err := headErr
		if i > 0 || !c.written {
			err = notSent(rest)
		}
		answer, ended := c.finish(err)
		ends = append(ends, answer, ended)
	}
	p.pending = nil
	p.checkIdle()
	return ends
}
