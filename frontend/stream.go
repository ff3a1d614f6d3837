package frontend

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/message"
)

// streamBody is a worker's streamed answer. A dialect's Reply starts it
// with a framer (Start) or reads it whole (Next). Once started it feeds
// the stream to fasthttp as a chunked body, through the framer. fasthttp
// writes each Read as one chunk and flushes it, so the headers leave with
// the first chunk. fasthttp calls Close when the body is
// done or the client is gone (a write failed); Close cancels the job, which
// makes the worker stop a tracked request, and counts the request. Reads
// wait under ctx, a child of the server's base context, so that a forced
// shutdown ends a stream whose worker has gone quiet; the peer watch
// cancels ctx and the job as soon as the client hangs up.
// A stream that breaks with an error ends the way its framer says: with a
// last line or event naming the error, or, for opaque streams, by failing
// the Read, which makes fasthttp drop the connection without the closing
// chunk, so the client sees a truncated body rather than a complete one.
type streamBody struct {
	srv     *Server
	hctx    *fasthttp.RequestCtx // the request's, while its handler runs
	ctx     context.Context
	stop    context.CancelCauseFunc // ends ctx
	stream  *message.Stream
	job     *batching.Job // canceled at Close
	framer  dialect.Framer
	tap     finishTap
	watch   *peerWatch
	model   string
	code    int
	start   time.Time
	id      string
	started bool

	rest   []byte
	ended  bool // the framer has written its end
	err    error
	closed bool
}

// Start takes the first chunk through f before any header goes out, then
// sets the status; it returns the reason when the stream fails first.
func (b *streamBody) Start(f dialect.Framer) error {
	rctx, rcancel := context.WithCancelCause(b.srv.base)
	b.ctx, b.stop, b.framer = rctx, rcancel, f
	job := b.job
	b.watch = watchPeer(b.hctx.Conn(), func(cause error) { rcancel(cause); job.Cancel(cause) })
	if err := b.prime(); err != nil {
		b.watch.stop()
		rcancel(err)
		return err
	}
	b.hctx.SetStatusCode(b.code)
	b.started = true
	return nil
}

// Next returns the stream's next chunk, for a Reply that reads it whole;
// it waits under the job's context.
func (b *streamBody) Next() ([]byte, error) {
	chunk, err := b.stream.Next(b.job.Context())
	if err == nil {
		b.tap.feed(chunk)
	}
	return chunk, err
}

// abandon drops a started stream that will not be sent.
func (b *streamBody) abandon(err error) {
	b.watch.stop()
	b.job.Cancel(err)
	b.stop(err)
}

// prime takes the first chunk before any header goes out; it returns the
// reason when the stream fails first.
func (b *streamBody) prime() error {
	chunk, err := b.stream.Next(b.ctx)
	if err != nil && !errors.Is(err, io.EOF) {
		return b.cause(err)
	}
	b.frame(chunk, err)
	return nil
}

// cause is why a wait under ctx ended: ctx's cause when it is done (the
// client left, the server is stopping), else err.
func (b *streamBody) cause(err error) error {
	if b.ctx.Err() != nil {
		return context.Cause(b.ctx)
	}
	return err
}

// frame passes a chunk, or the clean end (err is io.EOF), to the framer.
func (b *streamBody) frame(chunk []byte, err error) {
	if err != nil {
		b.rest, b.ended = b.framer.End(), true
		return
	}
	b.tap.feed(chunk)
	b.rest = b.framer.Chunk(chunk)
}

func (b *streamBody) Read(p []byte) (int, error) {
	for len(b.rest) == 0 {
		if b.ended {
			return 0, io.EOF
		}
		chunk, err := b.stream.Next(b.ctx)
		if err != nil && !errors.Is(err, io.EOF) {
			if ferr := b.broken(err); ferr != nil {
				return 0, ferr
			}
			continue
		}
		b.frame(chunk, err)
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

// broken handles a stream that ended with err: when the worker broke it
// and the framer can say so, its last words become the rest of the body;
// otherwise (the client left, the server stops, an opaque stream) the
// returned error cuts the body off.
func (b *streamBody) broken(err error) error {
	b.err = b.cause(err)
	if b.ctx.Err() == nil {
		if tail, ok := b.framer.Fail(b.srv.classify(b.err)); ok {
			b.rest, b.ended = tail, true
			return nil
		}
	}
	return fmt.Errorf("frontend: stream broken: %w", b.err)
}

func (b *streamBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	b.watch.stop()
	cause := context.Cause(b.ctx)
	b.job.Cancel(cause)
	b.stop(nil)
	code := b.code
	if errors.Is(cause, batching.ErrClientGone) {
		code = statusClientClosed
	}
	b.srv.met.observe(b.model, code, time.Since(b.start))
	b.srv.met.ended(b.model)
	b.srv.met.finished(b.model, b.tap.reason)
	if b.err != nil && code != statusClientClosed {
		b.srv.log.Warn("streamed answer broken off", zap.String("request_id", b.id), zap.Error(b.err))
	}
	return nil
}
