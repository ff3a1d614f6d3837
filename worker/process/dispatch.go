package process

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/worker/wire"
)

// batchResult is one request's share of a batch reply: a response, or the
// error for that request alone.
type batchResult struct {
	Resp *message.Response
	Err  error
}

// Dispatch sends ins to the worker, as one request or, for several, as one
// dynamic batch, and returns as soon as the frame is written: it does not
// wait for the reply. Untracked requests are pipelined: the caller may
// dispatch the next batch while the worker runs this one (it bounds how
// many); the worker takes them one after another and answers in order.
//
// answer is called once for each request: with its response as soon as the
// reply's first frame is in (on the goroutine that reads the connection, so
// the caller's client hears without a hand-off), or with the error that kept
// it from one. done, when not nil, runs exactly once, after every answer,
// when the batch has ended on the worker: its reply is complete (a streamed
// reply keeps it going until its end), or the worker died; its error is
// nil for a clean end, the stream's error, or why the batch failed. Both
// callbacks must be quick and must not wait for this Process.
//
// The worker runs the batch at the head of the line; when the first frame
// of its reply does not come within the spec's PredictTimeout, counted from
// the moment it reached the head, the worker is killed (its state is
// unknown), the batch fails with an error wrapping api.ErrPredictTimeout,
// and the batches behind it fail as not sent (ErrNotSent): the worker had
// not started them. So do the batches behind one that was running when the
// worker died.
//
// Dispatch returns an error when the batch was not sent: it could not be
// encoded (the error wraps api.ErrBadRequest), ctx was done, or the worker
// is dead or its connection broke (ErrNotSent). The answers and done have
// had the error too, or will have it shortly.
func (p *Process) Dispatch(ctx context.Context, ins []*message.Input, answer func(i int, resp *message.Response, err error), done func(error)) error {
	frame, err := p.encode(ins)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		answerAll(len(ins), answer, err)
		if done != nil {
			done(err)
		}
		return err
	}
	n := len(ins)
	return p.send(frame, func(resp *wire.Response, st *message.Stream, err error) {
		if err != nil {
			answerAll(n, answer, err)
			return
		}
		p.deliver(resp, st, n, answer)
	}, done)
}

func answerAll(n int, answer func(int, *message.Response, error), err error) {
	for i := range n {
		answer(i, nil, err)
	}
}

// encode builds the frame Dispatch sends, in pieces that reference large
// bodies instead of copying them.
func (p *Process) encode(ins []*message.Input) (net.Buffers, error) {
	var frame net.Buffers
	var err error
	switch len(ins) {
	case 0:
		return nil, fmt.Errorf("%s: %w: empty batch", p.name(), wire.ErrBadBatch)
	case 1:
		frame, err = wire.RequestBuffers(ins[0], p.handlerProp(ins[0]))
	default:
		frame, err = wire.BatchBuffers(ins, p.handlerProp(nil))
	}
	if err != nil {
		return nil, p.badRequest(err)
	}
	return frame, nil
}

// deliver answers the n requests of a Dispatch from the reply's first frame.
func (p *Process) deliver(resp *wire.Response, st *message.Stream, n int, answer func(int, *message.Response, error)) {
	if n == 1 {
		answer(0, resp.ToBatching(st), nil)
		return
	}
	results, err := p.split(resp, st, n)
	for i := range n {
		if err != nil {
			answer(i, nil, err)
		} else {
			answer(i, results[i].Resp, results[i].Err)
		}
	}
}

// split turns a batch reply into one result per request.
func (p *Process) split(resp *wire.Response, st *message.Stream, n int) ([]batchResult, error) {
	if st != nil {
		st.Close(wire.ErrBadBatch)
	}
	parts, err := wire.SplitBatch(resp, n)
	if parts == nil {
		return nil, fmt.Errorf("%s: %w", p.name(), err)
	}
	return p.batchResults(parts), nil
}

func (p *Process) batchResults(parts []*message.Response) []batchResult {
	out := make([]batchResult, len(parts))
	for i, r := range parts {
		out[i].Resp = r
		if r == nil {
			out[i].Err = fmt.Errorf("%s: request %d of %d: %w", p.name(), i, len(parts), wire.ErrMissingItem)
		}
	}
	return out
}

func (p *Process) badRequest(err error) error {
	return fmt.Errorf("%s: %w: %w", p.name(), api.ErrBadRequest, err)
}

// send registers one untracked frame at the end of the line and writes it.
// reply gets the first frame of its reply, or the error that kept it from
// one, exactly once; end, when not nil, runs once the reply is complete.
// It returns an error wrapping ErrNotSent when the worker is dead or the
// write failed; reply and end get it too.
// Registration and write happen under wmu, so the line's order is the
// order of the frames on the wire, which is the order of the replies.
func (p *Process) send(frame net.Buffers, reply func(*wire.Response, *message.Stream, error), end func(error)) error {
	p.wmu.Lock()
	c, err := p.enqueue(reply, end)
	if err != nil {
		p.wmu.Unlock()
		reply(nil, nil, err)
		if end != nil {
			end(err)
		}
		return err
	}
	err = p.writeLocked(frame, time.Time{})
	if err == nil {
		p.mu.Lock()
		c.written = true
		p.mu.Unlock()
	}
	p.wmu.Unlock()
	if err != nil {
		p.writeFailed(err) // the worker's death fails c as not sent
		return notSent(p.dead)
	}
	return nil
}

// enqueue adds an untracked call at the end of the line; wmu is held.
func (p *Process) enqueue(reply func(*wire.Response, *message.Stream, error), end func(error)) (*call, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead != nil {
		return nil, notSent(p.dead)
	}
	c := &call{reply: reply, ended: end}
	p.pending = append(p.pending, c)
	if len(p.pending) == 1 {
		p.startHeadLocked()
	}
	p.markBusy()
	return c, nil
}

// notSent marks err as the reason a request never reached the worker.
func notSent(err error) error { return fmt.Errorf("%w: %w", ErrNotSent, err) }

// startHeadLocked starts the predict timeout of the call at the head of the
// line, which the worker runs now; p.mu is held. One timer serves the
// whole line: armed once, it checks the head when it fires and re-arms for
// the head's deadline, so the calls of a busy worker cost it nothing.
func (p *Process) startHeadLocked() {
	head := p.pending[0]
	head.deadline = time.Now().Add(p.spec.PredictTimeout)
	if p.headArmed {
		return
	}
	p.headArmed = true
	if p.headTimer == nil {
		p.headTimer = time.AfterFunc(p.spec.PredictTimeout, func() { p.inBackground(p.checkHead) })
		return
	}
	p.headTimer.Reset(time.Until(head.deadline))
}

// checkHead runs when the head timer fires: it kills the worker when the
// head of the line has had no first frame by its deadline, and re-arms the
// timer otherwise.
func (p *Process) checkHead() {
	p.mu.Lock()
	p.headArmed = false
	if p.dead != nil || len(p.pending) == 0 || p.pending[0].settled {
		p.mu.Unlock() // an empty line, or a head that streams: the next head arms the timer
		return
	}
	head := p.pending[0]
	if wait := time.Until(head.deadline); wait > 0 {
		p.headArmed = true
		p.headTimer.Reset(wait)
		p.mu.Unlock()
		return
	}
	ends := p.failLocked(p.predictTimeout(), &ExitError{Model: p.spec.Model, ID: p.id, PID: p.pid, Detail: "killed: predict timeout"})
	p.mu.Unlock()
	callAll(ends...)
	p.log.Error("no answer within the predict timeout; killing the worker", zap.Duration("timeout", p.spec.PredictTimeout))
	p.kill("predict timeout")
}

func (p *Process) predictTimeout() error {
	return fmt.Errorf("%w: %s did not answer within %v", api.ErrPredictTimeout, p.name(), p.spec.PredictTimeout)
}

// write sends one frame, given in pieces (one writev), with its deadline.
// A failed write leaves the stream of frames broken, so it kills the
// worker; the error is then the worker's death.
func (p *Process) write(frame net.Buffers, deadline time.Time) error {
	p.wmu.Lock()
	err := p.writeLocked(frame, deadline)
	p.wmu.Unlock()
	if err == nil {
		return nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		p.kill("predict timeout while sending")
		return p.predictTimeout()
	}
	p.writeFailed(err)
	return notSent(p.dead)
}

// writeLocked writes frame with the write deadline set to deadline (zero:
// none; the connection's deadline is only changed when it differs); wmu
// is held.
func (p *Process) writeLocked(frame net.Buffers, deadline time.Time) error {
	if !deadline.Equal(p.wdeadline) {
		if err := p.conn.SetWriteDeadline(deadline); err != nil {
			return err
		}
		p.wdeadline = deadline
	}
	_, err := frame.WriteTo(p.conn)
	return err
}

// writeFailed kills the worker after a write failed and waits until its
// requests have been failed.
func (p *Process) writeFailed(err error) {
	p.kill("write failed: " + err.Error())
	<-p.deadCh
}
