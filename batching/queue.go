package batching

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Queue is one model's bounded job queue, shared by all of the model's
// workers. Producers Push; workers pull batches with Next. It is safe for
// concurrent use.
//
// A job is watched from Push until it leaves the queue: when its client goes
// away, the job is removed at once, wherever it sits, and answered with
// ErrClientGone. The watch is a context.AfterFunc that is stopped when the job
// leaves, so a queue holds no goroutine per job. A job whose context can
// never be done (context.Background) is not watched.
//
// A job with a deadline is answered with ErrExpired when the deadline
// passes while it waits, by one timer per queue armed for the earliest
// deadline, so a client hears so at once even while every worker is busy.
type Queue struct {
	mu  sync.Mutex
	st  state
	now func() time.Time

	token chan struct{} // holds a value while a worker fills a batch
	wake  chan struct{} // a job arrived; read only by the token holder
	done  chan struct{} // closed by Close

	// draining is set by Drain (guarded by mu): Push refuses new jobs with
	// it, and Next returns it once nothing is left to hand out.
	draining error

	// One timer answers expired jobs at their deadline, armed for the
	// earliest deadline among the held jobs (guarded by mu).
	expiry   *time.Timer
	armedFor time.Time
}

// Option changes a queue that NewQueue builds.
type Option func(*Queue)

// WithClock sets the clock the queue reads to judge job deadlines; it should
// be the clock that set them. The default is time.Now. The batch delay is
// measured with timers, not with this clock.
func WithClock(now func() time.Time) Option {
	return func(q *Queue) { q.now = now }
}

// NewQueue returns an empty, open queue that holds at most capacity jobs
// waiting for a worker. A capacity below 1 counts as 1.
func NewQueue(capacity int, opts ...Option) *Queue {
	q := &Queue{
		st:    newState(capacity),
		now:   time.Now,
		token: make(chan struct{}, 1),
		wake:  make(chan struct{}, 1),
		done:  make(chan struct{}),
	}
	for _, o := range opts {
		o(q)
	}
	return q
}

// Push queues j, which must not be nil. It never blocks: a full queue
// returns ErrQueueFull at once, a closed or draining one the error it was
// closed or drained with (which wraps ErrClosed), and a job whose client has already gone
// ErrClientGone. A job that Push refuses is not answered; the caller answers
// it with the error.
func (q *Queue) Push(j *Job) error { return q.push(j, false) }

// Requeue queues j like Push, also while the queue drains: it gives back a
// job that was handed out but never reached a worker (the worker died), so
// that another worker may still serve it.
func (q *Queue) Requeue(j *Job) error { return q.push(j, true) }

func (q *Queue) push(j *Job, requeue bool) error {
	q.mu.Lock()
	if q.draining != nil && !requeue && !q.st.closed {
		q.mu.Unlock()
		return q.draining
	}
	e, err := q.st.push(j, q.now())
	if err == nil && j.Context().Done() != nil {
		e.stop = context.AfterFunc(j.Context(), func() { q.clientGone(e) })
	}
	if d, ok := j.Deadline(); ok && err == nil {
		q.armLocked(d)
	}
	q.mu.Unlock()
	if err == nil {
		q.signal()
	}
	return err
}

func (q *Queue) clientGone(e *entry) {
	q.mu.Lock()
	q.st.clientGone(e)
	q.mu.Unlock()
}

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Next returns the next batch for a worker: between 1 and limit jobs, oldest
// first. It takes what is already queued, then waits for more until delay has
// passed since it took the first job; a full batch leaves at once, and a
// delay of 0 or less takes what is there and goes. Only one caller at a time
// fills a batch; other callers wait, in turn, until it leaves.
//
// Next blocks until it has at least one job, ctx is done (it returns
// ctx.Err() and puts the jobs it had taken back at the front of the queue),
// or the queue is closed (it returns the close error, which wraps ErrClosed).
// A limit below 1 counts as 1.
func (q *Queue) Next(ctx context.Context, limit int, delay time.Duration) ([]*Job, error) {
	if err := q.acquire(ctx); err != nil {
		return nil, err
	}
	defer q.release()
	return q.collect(ctx, max(limit, 1), delay)
}

// acquire waits for the collector token.
func (q *Queue) acquire(ctx context.Context) error {
	select {
	case <-q.done:
		return q.closeErr()
	case <-ctx.Done():
		return ctx.Err()
	default:
	}
	select {
	case q.token <- struct{}{}:
		return nil
	case <-q.done:
		return q.closeErr()
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (q *Queue) release() { <-q.token }

// collect fills one batch; the caller holds the collector token.
func (q *Queue) collect(ctx context.Context, limit int, delay time.Duration) ([]*Job, error) {
	var t batchTimer
	defer t.stop()
	for {
		jobs, pending, err := q.step(limit, delay <= 0 || t.fired)
		if jobs != nil || err != nil {
			return jobs, err
		}
		t.track(pending > 0, delay)
		select {
		case <-q.wake:
		case <-t.c():
			t.fired = true
		case <-ctx.Done():
			q.requeue()
			return nil, ctx.Err()
		case <-q.done:
		}
	}
}

// step takes what is queued into the batch being filled and hands the batch
// out when it is full, or when it is due and not empty. Otherwise it returns
// how many jobs the batch holds.
func (q *Queue) step(limit int, due bool) ([]*Job, int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.st.closed {
		return nil, 0, q.st.closeErr
	}
	due = due || q.draining != nil // nothing more will come: a batch leaves as it is
	now := q.now()
	for {
		n := q.st.take(now, limit)
		if n == 0 && q.draining != nil {
			return nil, 0, q.draining
		}
		if n == 0 || (n < limit && !due) {
			return nil, n, nil
		}
		if jobs := q.st.handOut(now); len(jobs) > 0 {
			return jobs, 0, nil
		}
	}
}

// armLocked makes the expiry timer fire by deadline d.
func (q *Queue) armLocked(d time.Time) {
	if !q.armedFor.IsZero() && !d.Before(q.armedFor) {
		return
	}
	q.armedFor = d
	wait := d.Sub(q.now())
	if q.expiry == nil {
		q.expiry = time.AfterFunc(wait, q.expire)
		return
	}
	q.expiry.Reset(wait)
}

// expire answers the jobs whose deadline has passed and re-arms the timer
// for the next one.
func (q *Queue) expire() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.armedFor = time.Time{}
	if q.st.closed {
		return
	}
	if next := q.st.expireDue(q.now()); !next.IsZero() {
		q.armLocked(next)
	}
}

func (q *Queue) requeue() {
	q.mu.Lock()
	q.st.requeue()
	q.mu.Unlock()
}

func (q *Queue) closeErr() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.st.closeErr
}

// Len returns how many jobs wait in the queue, not counting those in a batch
// being filled.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.st.queued
}

// Held returns how many jobs the queue holds: those waiting and those in
// a batch being filled. A queue whose Held is 0 has no job that a worker
// has not yet been handed.
func (q *Queue) Held() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.st.queued + q.st.taken
}

// Cap returns the queue's bound.
func (q *Queue) Cap() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.st.capacity
}

// SetCapacity changes the queue's bound; a value below 1 counts as 1.
// Shrinking never drops queued jobs: it only refuses new ones until the queue
// is below the new bound.
func (q *Queue) SetCapacity(n int) {
	q.mu.Lock()
	q.st.setCapacity(n)
	q.mu.Unlock()
}

// Stats returns the queue's counters.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.st.stats
}

// Drain stops the queue taking new jobs but lets the workers have what it
// holds: Push refuses jobs with an error that wraps ErrClosed and err (a
// nil err means ErrClosed alone), Next hands out the jobs still queued at
// once, without waiting out the batch delay, and returns that error once
// none is left. Requeue still takes jobs back. Jobs keep their deadlines
// and are still dropped when their client leaves. Close ends a drain early.
// Draining a closed or draining queue does nothing.
func (q *Queue) Drain(err error) {
	q.mu.Lock()
	if q.st.closed || q.draining != nil {
		q.mu.Unlock()
		return
	}
	q.draining = closeError(err)
	q.mu.Unlock()
	q.signal()
}

// Close stops the queue: Push refuses new jobs, every queued job (and every
// job in a batch being filled) is answered with an error that wraps ErrClosed
// and err, and every waiting Next returns that error. A nil err closes with
// ErrClosed alone. Close returns how many jobs it answered; closing a closed
// queue does nothing and returns 0.
func (q *Queue) Close(err error) int {
	err = closeError(err)
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.st.closed {
		return 0
	}
	n := q.st.close(err)
	close(q.done)
	if q.expiry != nil {
		q.expiry.Stop()
	}
	return n
}

func closeError(err error) error {
	switch {
	case err == nil:
		return ErrClosed
	case errors.Is(err, ErrClosed):
		return err
	default:
		return fmt.Errorf("%w: %w", ErrClosed, err)
	}
}

// batchTimer measures the batch delay from the moment the batch being
// filled got its first job.
type batchTimer struct {
	t     *time.Timer
	fired bool
}

// track starts the timer when the batch has jobs and none runs, and resets
// it when the batch has none (its jobs were dropped), so the delay counts
// again from the next first job.
func (b *batchTimer) track(pending bool, delay time.Duration) {
	switch {
	case !pending:
		b.stop()
	case b.t == nil && delay > 0:
		b.t = time.NewTimer(delay)
	}
}

func (b *batchTimer) c() <-chan time.Time {
	if b.t == nil {
		return nil
	}
	return b.t.C
}

func (b *batchTimer) stop() {
	if b.t != nil {
		b.t.Stop()
		b.t = nil
	}
	b.fired = false
}
