package batching

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
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

// Prop is one request property (an HTTP header, for instance) as the wire
// carries it.
type Prop struct {
	Key   string
	Value string
}

// Item is one named piece of request content ("data" for the body).
type Item struct {
	Key   string
	Value []byte
}

// Input is a request as a worker receives it: properties and named content.
type Input struct {
	Props   []Prop
	Content []Item
}

// Response is a worker's answer to one job. When Stream is not nil the body
// arrives as chunks on it and Body is empty.
type Response struct {
	Code    int
	Message string
	Props   map[string]string
	Body    []byte
	Stream  *Stream
}

// Job is one accepted request on its way through a model's queue to a worker.
// It is answered exactly once: the first Finish or Fail wins and later ones
// are ignored.
type Job struct {
	ID    string
	Input Input

	ctx      context.Context
	created  time.Time
	deadline time.Time

	once sync.Once
	done chan struct{}
	resp *Response
	err  error
}

// NewJob returns a job for a client whose context is ctx, created at now.
// A zero deadline means the job never expires in the queue.
func NewJob(ctx context.Context, id string, in Input, now, deadline time.Time) *Job {
	return &Job{ID: id, Input: in, ctx: ctx, created: now, deadline: deadline, done: make(chan struct{})}
}

// Context returns the client's context: it is done when the client leaves.
func (j *Job) Context() context.Context { return j.ctx }

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

// Gone reports whether the client has gone away.
func (j *Job) Gone() bool { return j.ctx.Err() != nil }

// Finish answers the job with r. It reports whether this call gave the answer.
func (j *Job) Finish(r *Response) bool { return j.settle(r, nil) }

// Fail answers the job with err. It reports whether this call gave the answer.
func (j *Job) Fail(err error) bool { return j.settle(nil, err) }

func (j *Job) settle(r *Response, err error) bool {
	won := false
	j.once.Do(func() {
		j.resp, j.err = r, err
		close(j.done)
		won = true
	})
	return won
}

// Done is closed once the job has its answer.
func (j *Job) Done() <-chan struct{} { return j.done }

// Answered reports whether the job has its answer.
func (j *Job) Answered() bool {
	select {
	case <-j.done:
		return true
	default:
		return false
	}
}

// Result returns the job's answer; call it after Done is closed.
func (j *Job) Result() (*Response, error) {
	<-j.done
	return j.resp, j.err
}

// Wait blocks until the job is answered or ctx is done.
func (j *Job) Wait(ctx context.Context) (*Response, error) {
	select {
	case <-j.done:
		return j.resp, j.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Stream carries a response body that arrives in chunks. Push never blocks,
// so a slow reader cannot stall the worker connection that feeds it.
type Stream struct {
	mu     sync.Mutex
	chunks [][]byte
	closed bool
	err    error
	ready  chan struct{}
}

// NewStream returns an open, empty stream.
func NewStream() *Stream { return &Stream{ready: make(chan struct{}, 1)} }

// Push appends a chunk. Chunks pushed after Close are dropped.
func (s *Stream) Push(chunk []byte) {
	s.mu.Lock()
	if !s.closed {
		s.chunks = append(s.chunks, chunk)
	}
	s.mu.Unlock()
	s.signal()
}

// Close ends the stream; a nil err is a clean end. Only the first Close counts.
func (s *Stream) Close(err error) {
	s.mu.Lock()
	if !s.closed {
		s.closed, s.err = true, err
	}
	s.mu.Unlock()
	s.signal()
}

func (s *Stream) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Next returns the next chunk. After the last chunk it returns io.EOF for a
// clean end, or the error the stream was closed with.
func (s *Stream) Next(ctx context.Context) ([]byte, error) {
	for {
		s.mu.Lock()
		if len(s.chunks) > 0 {
			c := s.chunks[0]
			s.chunks[0] = nil
			s.chunks = s.chunks[1:]
			s.mu.Unlock()
			return c, nil
		}
		closed, err := s.closed, s.err
		s.mu.Unlock()
		if closed {
			if err == nil {
				err = io.EOF
			}
			return nil, err
		}
		select {
		case <-s.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
