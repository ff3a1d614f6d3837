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
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/worker/wire"
)

// batchResult is one request's share of a batch reply: a response, or the
// error for that request alone.
type batchResult struct {
	Resp *batching.Response
	Err  error
}

// Dispatch sends ins to the worker, as one request or, for several, as one
// dynamic batch, and calls answer once for each request: with its response
// as soon as the reply's first frame is in (on the goroutine that reads the
// connection, so the caller's client hears without a hand-off), or with the
// error that kept it from one. It returns when the first frame is in, or
// with the error that ended the wait. Untracked requests go to the worker
// one at a time: Dispatch waits for the one before it. The wait for the
// reply is bounded by the spec's PredictTimeout; when it passes, the worker
// is killed (its state is unknown) and the error wraps
// api.ErrPredictTimeout. When ctx is done first, Dispatch answers with ctx's
// error and the reply, when it comes, is dropped. A streamed reply keeps
// the worker busy until it ends (see WaitIdle).
func (p *Process) Dispatch(ctx context.Context, ins []*batching.Input, answer func(i int, resp *batching.Response, err error)) error {
	frame, err := p.encode(ins)
	if err == nil {
		var c *call
		c, err = p.roundTripWith(ctx, frame, func(resp *wire.Response, st *batching.Stream) {
			p.deliver(resp, st, len(ins), answer)
		})
		if err == nil && c.err != nil {
			err = c.err
		}
	}
	if err != nil {
		for i := range ins {
			answer(i, nil, err)
		}
	}
	return err
}

// encode builds the frame Dispatch sends, in pieces that reference large
// bodies instead of copying them.
func (p *Process) encode(ins []*batching.Input) (net.Buffers, error) {
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
func (p *Process) deliver(resp *wire.Response, st *batching.Stream, n int, answer func(int, *batching.Response, error)) {
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
func (p *Process) split(resp *wire.Response, st *batching.Stream, n int) ([]batchResult, error) {
	if st != nil {
		st.Close(wire.ErrBadBatch)
	}
	parts, err := wire.SplitBatch(resp, n)
	if parts == nil {
		return nil, fmt.Errorf("%s: %w", p.name(), err)
	}
	return p.batchResults(parts), nil
}

func (p *Process) batchResults(parts []*batching.Response) []batchResult {
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

// roundTripWith sends one untracked frame and waits for the first frame of
// its reply; onReply, when set, gets that frame on the reading goroutine.
func (p *Process) roundTripWith(ctx context.Context, frame net.Buffers, onReply func(*wire.Response, *batching.Stream)) (*call, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := p.acquire(ctx); err != nil {
		return nil, err
	}
	c, err := p.begin(onReply)
	if err != nil {
		return nil, err
	}
	if err := p.write(frame, c.deadline); err != nil {
		p.abandon(c)
		return nil, err
	}
	return c, p.await(ctx, c)
}

// acquire takes the untracked slot.
func (p *Process) acquire(ctx context.Context) error {
	select {
	case p.slot <- struct{}{}:
		return nil
	case <-p.deadCh:
		return notSent(p.dead)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// notSent marks err as the reason a request never reached the worker.
func notSent(err error) error { return fmt.Errorf("%w: %w", ErrNotSent, err) }

// begin registers the untracked request; the slot is held.
func (p *Process) begin(onReply func(*wire.Response, *batching.Stream)) (*call, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead != nil {
		<-p.slot
		return nil, notSent(p.dead)
	}
	c := p.newCall()
	c.onReply = onReply
	p.pending = c
	p.markBusy()
	return c, nil
}

func (p *Process) await(ctx context.Context, c *call) error {
	timer := time.NewTimer(time.Until(c.deadline))
	defer timer.Stop()
	select {
	case <-c.done:
		return c.err
	case <-timer.C:
		if p.abandon(c) {
			p.log.Error("no answer within the predict timeout; killing the worker", zap.Duration("timeout", p.spec.PredictTimeout))
			p.kill("predict timeout")
			return p.predictTimeout()
		}
	case <-ctx.Done():
		if p.abandonWatched(c) {
			return ctx.Err()
		}
	}
	return c.err
}

// abandonWatched abandons c like abandon, and keeps the predict timeout on
// the worker: a worker that never answers would hold the untracked slot.
func (p *Process) abandonWatched(c *call) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.settled {
		return false
	}
	c.abandoned = true
	c.stopTimer = time.AfterFunc(time.Until(c.deadline), func() { p.inBackground(func() { p.expire(c) }) }).Stop
	return true
}

// expire kills the worker when the abandoned request c still has no reply.
func (p *Process) expire(c *call) {
	p.mu.Lock()
	hung := p.pending == c && !c.settled
	p.mu.Unlock()
	if hung {
		p.log.Error("no answer within the predict timeout; killing the worker", zap.Duration("timeout", p.spec.PredictTimeout))
		p.kill("predict timeout")
	}
}

// abandon marks c as having nobody to read its reply, unless the reply is
// already in; it reports whether it did.
func (p *Process) abandon(c *call) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c.settled {
		return false
	}
	c.abandoned = true
	return true
}

func (p *Process) predictTimeout() error {
	return fmt.Errorf("%w: %s did not answer within %v", api.ErrPredictTimeout, p.name(), p.spec.PredictTimeout)
}

// write sends one frame, given in pieces (one writev). A failed write
// leaves the stream of frames broken, so it kills the worker; the error is
// then the worker's death.
func (p *Process) write(frame net.Buffers, deadline time.Time) error {
	p.wmu.Lock()
	err := p.conn.SetWriteDeadline(deadline)
	if err == nil {
		_, err = frame.WriteTo(p.conn)
	}
	p.wmu.Unlock()
	if err == nil {
		return nil
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		p.kill("predict timeout while sending")
		return p.predictTimeout()
	}
	p.kill("write failed: " + err.Error())
	<-p.deadCh
	return notSent(p.dead)
}
