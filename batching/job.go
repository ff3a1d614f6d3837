package batching

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard/switchyard/message"
)

// Sentinel errors of a job's life in the queue. The front-end maps them to
// HTTP status codes.
var (
	// ErrQueueFull means the model's queue holds job_queue_size jobs already.
	ErrQueueFull = errors.New("batching: queue full")
	// ErrClosed means the queue no longer takes or hands out jobs: the model
	// was unregistered or the server is shutting down.
	ErrClosed = errors.New("batching: queue closed")
	// ErrExpired means the job waited in the queue past its deadline and was
	// answered without being sent to a worker.
	ErrExpired = errors.New("batching: request expired in queue")
	// ErrClientGone means the client went away before the job was dispatched.
	ErrClientGone = errors.New("batching: client gone")
)

// Job is one accepted request on its way through a model's queue to a worker.
// It is answered exactly once: the first Finish, Fail or Cancel wins and
// later ones are ignored.
//
// A job carries no context of its own: its state is a few atomic words, and
// a client that leaves is a call to Cancel, which takes the job out of its
// queue directly. Context makes one, on demand, for the paths that need one
// (a rolling-batch request, which the worker must be told to stop).
type Job struct {
	ID    string
	Input message.Input

	created  time.Time
	deadline time.Time

	answered atomic.Bool
	done     chan struct{}
	resp     *message.Response
	err      error

	cause atomic.Pointer[error] // why the client will not hear; nil while it waits
	queue atomic.Pointer[Queue] // the queue that holds the job, if any
	entry *entry                // its place there; guarded by that queue's mutex

	mu        sync.Mutex // guards ctx and cancelCtx
	ctx       context.Context
	cancelCtx context.CancelCauseFunc
}

// NewJob returns a job created at now. A zero deadline means the job never
// expires in the queue.
func NewJob(id string, in message.Input, now, deadline time.Time) *Job {
	return &Job{ID: id, Input: in, created: now, deadline: deadline, done: make(chan struct{})}
}

// Context returns a context that is done once the job is canceled (Cancel),
// with Cancel's cause. It is made on the first call; a job nobody asks for
// one never has one.
func (j *Job) Context() context.Context {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ctx == nil {
		j.ctx, j.cancelCtx = context.WithCancelCause(context.Background())
		if cause := j.Cause(); cause != nil {
			j.cancelCtx(cause)
		}
	}
	return j.ctx
}

// Cancel ends the job for its client with cause (ErrClientGone when the
// client left, for instance): a job still queued leaves its queue at once,
// and the job is answered with cause unless it has its answer already; a
// context taken with Context ends with cause, which stops a request that
// is being served. Only the first cause counts; a nil cause is
// context.Canceled.
func (j *Job) Cancel(cause error) {
	if cause == nil {
		cause = context.Canceled
	}
	if !j.cause.CompareAndSwap(nil, &cause) {
		return
	}
	if q := j.queue.Load(); q != nil {
		q.cancel(j, cause)
	}
	j.Fail(cause)
	j.mu.Lock()
	stop := j.cancelCtx
	j.mu.Unlock()
	if stop != nil {
		stop(cause)
	}
}

// Cause returns the cause the job was canceled with, or nil.
func (j *Job) Cause() error {
	if c := j.cause.Load(); c != nil {
		return *c
	}
	return nil
}

// Created returns the time the job was accepted.
func (j *Job) Created() time.Time { return j.created }

// Deadline returns the time after which the job must not be dispatched, and
// whether it has one.
func (j *Job) Deadline() (time.Time, bool) { return j.deadline, !j.deadline.IsZero() }

// SetDeadline gives a job without a deadline one. Call it before the job is
// queued; it does nothing once the job has a deadline.
func (j *Job) SetDeadline(t time.Time) {
	if j.deadline.IsZero() {
		j.deadline = t
	}
}

// Expired reports whether the job's deadline has passed at now.
func (j *Job) Expired(now time.Time) bool {
	return !j.deadline.IsZero() && !now.Before(j.deadline)
}

// Gone reports whether the job was canceled: its client has gone away.
func (j *Job) Gone() bool { return j.cause.Load() != nil }

// Finish answers the job with r. It reports whether this call gave the answer.
func (j *Job) Finish(r *message.Response) bool { return j.settle(r, nil) }

// Fail answers the job with err. It reports whether this call gave the answer.
func (j *Job) Fail(err error) bool { return j.settle(nil, err) }

func (j *Job) settle(r *message.Response, err error) bool {
	if !j.answered.CompareAndSwap(false, true) {
		return false
	}
	j.resp, j.err = r, err
	close(j.done)
	return true
}

// Done is closed once the job has its answer.
func (j *Job) Done() <-chan struct{} { return j.done }

// Answered reports whether the job has its answer, or is getting it now
// (Result then waits the moment it takes to be written).
func (j *Job) Answered() bool { return j.answered.Load() }

// Result returns the job's answer; call it after Done is closed.
func (j *Job) Result() (*message.Response, error) {
	<-j.done
	return j.resp, j.err
}

// Wait blocks until the job is answered or ctx is done.
func (j *Job) Wait(ctx context.Context) (*message.Response, error) {
	select {
	case <-j.done:
		return j.resp, j.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
