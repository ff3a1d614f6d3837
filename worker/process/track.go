package process

import (
	"context"
	"fmt"
	"net"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/worker/wire"
)

// Track sends a rolling-batch request tagged request_tracking_id=id, which
// may be in flight together with other tracked requests (protocol.md §4),
// and returns its reply as soon as the first frame arrives: the whole reply,
// or a response whose Stream carries the chunks that follow.
//
// done, when not nil, runs exactly once when the request has ended on the
// worker: after its last frame, when the worker dies, or before Track
// returns when the request was never sent. It runs on the goroutine that
// reads the worker's connection, so it must be quick and must not wait for
// this Process.
//
// When ctx is done before the reply is complete (the client left), Track
// sends the worker a cancel request for id (protocol.md §5) and returns, or
// closes the stream with, ctx's error; the request counts in inFlight until
// the worker ends it or dies. When no frame arrives within the spec's
// PredictTimeout, the request is canceled the same way and the error wraps
// api.ErrPredictTimeout; the worker is not killed, since its other requests
// may be fine.
func (p *Process) Track(ctx context.Context, id string, in *batching.Input, done func()) (*batching.Response, error) {
	c, frame, err := p.prepareTracked(ctx, id, in, done)
	if err != nil {
		callAll(done)
		return nil, err
	}
	deadline := time.Now().Add(p.spec.PredictTimeout)
	if err := p.write(frame, deadline); err != nil {
		return nil, err
	}
	p.watch(ctx, id, c) // after the write, so that a cancel never overtakes it
	p.awaitTracked(id, c, deadline)
	if c.err != nil {
		return nil, c.err
	}
	return c.resp.ToBatching(c.stream), nil
}

// awaitTracked waits for the first frame of c's reply, or for its
// cancellation, canceling it at the deadline.
func (p *Process) awaitTracked(id string, c *call, deadline time.Time) {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-c.done:
	case <-timer.C:
		p.cancelIf(id, c, p.trackTimeout(id), true)
	}
	<-c.done
}

// prepareTracked encodes the request and registers it under id.
func (p *Process) prepareTracked(ctx context.Context, id string, in *batching.Input, done func()) (*call, net.Buffers, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	frame, err := wire.RequestBuffers(withTracking(in, id), p.handlerProp(in))
	if err != nil {
		return nil, nil, p.badRequest(err)
	}
	c, err := p.register(id, done)
	return c, frame, err
}

// withTracking returns a copy of in that carries the tracking id.
func withTracking(in *batching.Input, id string) *batching.Input {
	props := make([]batching.Prop, 0, len(in.Props)+1)
	for _, pr := range in.Props {
		if pr.Key != TrackingKey {
			props = append(props, pr)
		}
	}
	props = append(props, batching.Prop{Key: TrackingKey, Value: id})
	return &batching.Input{Props: props, Content: in.Content}
}

func (p *Process) register(id string, done func()) (*call, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead != nil {
		return nil, notSent(p.dead)
	}
	if _, ok := p.tracked[id]; ok {
		return nil, fmt.Errorf("%s: %w: %q", p.name(), ErrDuplicateID, id)
	}
	c := newCall()
	c.onEnd = done
	p.tracked[id] = c
	p.markBusy()
	return c, nil
}

// watch cancels the tracked request when ctx is done before it finishes.
func (p *Process) watch(ctx context.Context, id string, c *call) {
	stop := context.AfterFunc(ctx, func() {
		if p.enterBackground() {
			defer p.bg.Done()
			p.cancelTracked(id, c, ctx.Err())
		}
	})
	p.mu.Lock()
	if c.finished {
		stop()
	} else {
		c.stopWatch = stop
	}
	p.mu.Unlock()
}

// enterBackground counts a background writer in, unless the connection is
// dead (Stop waits for the count only after that).
func (p *Process) enterBackground() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.dead != nil {
		return false
	}
	p.bg.Add(1)
	return true
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
	p.mu.Unlock()
	p.sendCancel(id)
}

func (p *Process) sendCancel(id string) {
	in := &batching.Input{Props: []batching.Prop{{Key: TrackingKey, Value: id}, {Key: "cancel", Value: "true"}}}
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
