package process

import (
	"context"
	"fmt"
	"net"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/worker/wire"
)

// Track sends a rolling-batch request tagged request_tracking_id=id, which
// may be in flight together with other tracked requests (protocol.md §4),
// and calls answer exactly once: with the reply as soon as its first frame
// arrives (the whole reply, or a response whose Stream carries the chunks
// that follow), or with the error that kept it from one. Like Dispatch's
// answers, it runs on the goroutine that reads the worker's connection
// when the reply comes, so the client hears without a hand-off; an error
// may come on the caller's goroutine before Track returns, or on a timer's.
// An error that wraps ErrNotSent means the request never reached the
// worker, which had died.
//
// done, when not nil, runs exactly once, after answer, when the request has
// ended on the worker: after its last frame, when the worker dies, or
// before Track returns when the request was never sent. Both callbacks
// must be quick and must not wait for this Process.
//
// When ctx is done before the reply is complete (the client left), Track
// sends the worker a cancel request for id (protocol.md §5) and answers
// with, or closes the stream with, ctx's error; the request stays
// outstanding until the worker ends it or dies. When no frame arrives
// within the spec's PredictTimeout, the request is canceled the same way
// and the error wraps api.ErrPredictTimeout; the worker is not killed,
// since its other requests may be fine.
func (p *Process) Track(ctx context.Context, id string, in *message.Input, answer func(*message.Response, error), done func()) {
	c, frame, err := p.prepareTracked(ctx, id, in, answer, done)
	if err != nil {
		answer(nil, err)
		callAll(done)
		return
	}
	if err := p.write(frame, c.deadline); err != nil {
		return // the worker is dead or dying: failAll answers the call as not sent
	}
	p.sent(ctx, id, c)
}

// prepareTracked encodes the request and registers it under id.
func (p *Process) prepareTracked(ctx context.Context, id string, in *message.Input, answer func(*message.Response, error), done func()) (*call, net.Buffers, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	frame, err := wire.RequestBuffers(withTracking(in, id), p.handlerProp(in))
	if err != nil {
		return nil, nil, p.badRequest(err)
	}
	c, err := p.register(id, answer, done)
	return c, frame, err
}

// withTracking returns a copy of in that carries the tracking id.
func withTracking(in *message.Input, id string) *message.Input {
	props := make([]message.Prop, 0, len(in.Props)+1)
	for _, pr := range in.Props {
		if pr.Key != TrackingKey {
			props = append(props, pr)
		}
	}
	props = append(props, message.Prop{Key: TrackingKey, Value: id})
	return &message.Input{Props: props, Content: in.Content}
}

func (p *Process) register(id string, answer func(*message.Response, error), done func()) (*call, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead != nil {
		return nil, notSent(p.dead)
	}
	if _, ok := p.tracked[id]; ok {
		return nil, fmt.Errorf("%s: %w: %q", p.name(), ErrDuplicateID, id)
	}
	c := p.newCall()
	c.answer, c.onEnd = answer, done
	p.tracked[id] = c
	p.markBusy()
	return c, nil
}

// sent notes that c's frame is on the wire: from now on the worker's death
// fails it as sent, its first frame is awaited until its deadline, and ctx
// ending cancels it. (The watches start after the write, so that a cancel
// never overtakes the request.)
func (p *Process) sent(ctx context.Context, id string, c *call) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c.written = true
	if c.finished {
		return
	}
	if !c.settled {
		c.stopTimer = time.AfterFunc(time.Until(c.deadline), func() {
			p.inBackground(func() { p.cancelIf(id, c, p.trackTimeout(id), true) })
		}).Stop
	}
	c.stopWatch = context.AfterFunc(ctx, func() {
		p.inBackground(func() { p.cancelTracked(id, c, ctx.Err()) })
	})
}

// inBackground runs fn, which may write to the connection, counted in p.bg
// so that Stop waits for it; it does nothing once the connection is dead
// (Stop waits for the count only after that).
func (p *Process) inBackground(fn func()) {
	p.mu.Lock()
	if p.dead != nil {
		p.mu.Unlock()
		return
	}
	p.bg.Add(1)
	p.mu.Unlock()
	defer p.bg.Done()
	fn()
}

// cancelTracked ends the caller's side of a tracked request with err and
// asks the worker to stop it; the entry stays until the worker's end frame.
func (p *Process) cancelTracked(id string, c *call, err error) { p.cancelIf(id, c, err, false) }

// cancelIf is cancelTracked; with onlyWaiting set it does nothing once the
// first frame of the reply is in.
func (p *Process) cancelIf(id string, c *call, err error, onlyWaiting bool) {
	p.mu.Lock()
	if c.abandoned || c.finished || p.dead != nil || (onlyWaiting && c.settled) {
		p.mu.Unlock()
		return
	}
	c.abandoned = true
	c.settle(nil, err)
	if c.stream != nil {
		c.stream.Close(err)
	}
	answer := c.takeAnswer()
	p.mu.Unlock()
	callAll(answer)
	p.sendCancel(id)
}

func (p *Process) sendCancel(id string) {
	in := &message.Input{Props: []message.Prop{{Key: TrackingKey, Value: id}, {Key: "cancel", Value: "true"}}}
	frame, err := wire.AppendRequest(nil, in)
	if err == nil {
		err = p.write(net.Buffers{frame}, time.Now().Add(p.spec.PredictTimeout))
	}
	if err != nil {
		p.log.Debug("cancel not sent", zap.String("id", id), zap.Error(err))
	}
}

func (p *Process) trackTimeout(id string) error {
	return fmt.Errorf("%w: %s sent nothing for request %q within %v", api.ErrPredictTimeout, p.name(), id, p.spec.PredictTimeout)
}
