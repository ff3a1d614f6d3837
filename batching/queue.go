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
// A job canceled while it waits (Job.Cancel: its client went away) is
// removed at once, wherever it sits, and answered with the cancel's cause;
// the queue keeps no watch or goroutine per job.
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

	// The collector's side (guarded by mu): when the batch being filled
	// got its first job; how many collectors whose worker is idle wait for
	// the token; and the rule of the collector that waits with an empty
	// batch and lets Push send a job for it (Rule.Direct), while holding.
	fillStart   time.Time
	idleWaiting int
	holder      Rule
	holding     bool
	claimed     bool // a Push is sending a job through holder.Direct
}

// Rule says how Collect fills a worker's batch.
type Rule struct {
	// Limit is the most jobs in the batch; below 1 counts as 1.
	Limit int
	// Delay is how long the batch waits for more jobs after its first was
	// taken (DJL's max_batch_delay); 0 or less takes what is there.
	Delay time.Duration
	// Idle, when not nil, reports whether the collecting worker has nothing
	// in flight: a worker that pipelines batches collects the next while it
	// runs one. nil means the worker is idle whenever it collects.
	Idle func() bool
	// Changed, when not nil, receives a value when Idle's answer may have
	// changed.
	Changed <-chan struct{}
	// Adaptive makes the batch leave as soon as the worker is idle, instead
	// of waiting out Delay: a lone job that finds the worker idle leaves at
	// once, and under load a batch fills while the worker is busy.
	Adaptive bool
	// Direct, when not nil, sends one job to the worker at once, on the
	// goroutine that pushes it, and reports whether it did. Push calls it
	// instead of queueing a job that would leave alone and at once anyway:
	// the queue is empty, this collector waits with an empty batch, the
	// worker is idle, and the batch size is 1 or batching is adaptive. It
	// is the collector's own batch, so only one batch is still being
	// filled at a time.
	Direct func(*Job) bool
}

func (r *Rule) idle() bool { return r.Idle == nil || r.Idle() }

// busy reports whether the worker has batches in flight.
func (r *Rule) busy() bool { return !r.idle() }

// leavesAlone reports whether a lone job would leave at once for an idle
// worker.
func (r *Rule) leavesAlone() bool { return r.Limit <= 1 || r.Adaptive }

// errYield ends a busy collector's turn so that an idle worker's collector,
// which waits for the token, fills the batch instead.
var errYield = errors.New("batching: yield to an idle worker")

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
// closed or drained with (which wraps ErrClosed), and a job whose client
// has already gone ErrClientGone. A job that Push refuses is not answered;
// the caller answers it with the error. A job that would leave alone and
// at once anyway is sent to the waiting collector's worker from this
// goroutine (Rule.Direct).
func (q *Queue) Push(j *Job) error {
	send, err := q.Accept(j)
	if send != nil {
		return send()
	}
	return err
}

// Accept is Push for a caller that holds a lock a worker's send must not
// run under. When j would go to a worker directly (Rule.Direct), Accept
// only claims the waiting collector for it and returns send, which the
// caller must call once it has released its locks: send gives j to the
// worker, or queues it when the worker is no longer idle, and returns
// Push's error. Until send has run, Held counts j and no other job goes
// directly. Otherwise send is nil and err is Push's.
func (q *Queue) Accept(j *Job) (send func() error, err error) {
	q.mu.Lock()
	if q.draining != nil && !q.st.closed {
		q.mu.Unlock()
		return nil, q.draining
	}
	if direct := q.claimLocked(j); direct != nil {
		q.mu.Unlock()
		return func() error { return q.sendDirect(j, direct) }, nil
	}
	err = q.enqueueLocked(j)
	q.mu.Unlock()
	return nil, err
}

// Requeue queues j like Push, also while the queue drains, and never
// directly: it gives back a job that was handed out but never reached a
// worker (the worker died), so that another worker may still serve it.
func (q *Queue) Requeue(j *Job) error {
	q.mu.Lock()
	err := q.enqueueLocked(j)
	q.mu.Unlock()
	return err
}

// enqueueLocked puts j in the queue and wakes the collector; q.mu is held.
func (q *Queue) enqueueLocked(j *Job) error {
	e, err := q.st.push(j, q.now())
	if err != nil {
		return err
	}
	j.entry = e
	j.queue.Store(q)
	if d, ok := j.Deadline(); ok {
		q.armLocked(d)
	}
	q.signal()
	return nil
}

// claimLocked returns the waiting collector's Rule.Direct, and claims it,
// when j would leave alone and at once anyway: the queue is empty, the
// collector waits with an empty batch, its worker is idle, and its batch
// size is 1 or it batches adaptively. Otherwise it returns nil. q.mu is
// held.
func (q *Queue) claimLocked(j *Job) func(*Job) bool {
	r := &q.holder
	if !q.holding || q.claimed || q.st.closed || q.st.queued > 0 || q.st.taken > 0 ||
		!r.leavesAlone() || !r.idle() || j.Gone() || j.Expired(q.now()) {
		return nil
	}
	q.claimed = true
	return r.Direct
}

// sendDirect sends j through a claimed Rule.Direct, or queues it when the
// worker took other work meanwhile, and gives the claim back.
func (q *Queue) sendDirect(j *Job, direct func(*Job) bool) error {
	sent := direct(j)
	q.mu.Lock()
	defer q.mu.Unlock()
	q.claimed = false
	if !sent {
		return q.enqueueLocked(j) // accepted before any drain began: it is served
	}
	q.st.stats.Pushed++
	q.st.stats.Dispatched++
	return nil
}

// ExpireHeld answers with ErrExpired a job the queue handed out that its
// worker has not started (it waits behind the batch the worker runs), once
// its deadline has passed, and counts it as expired as if it had expired
// in the queue. It reports whether this gave the job its answer.
func (q *Queue) ExpireHeld(j *Job) bool {
	if !j.Fail(ErrExpired) {
		return false
	}
	q.mu.Lock()
	q.st.stats.Expired++
	q.mu.Unlock()
	return true
}

// cancel takes j out of the queue, if it is still here, and answers it
// with cause (Job.Cancel).
func (q *Queue) cancel(j *Job, cause error) {
	q.mu.Lock()
	if e := j.entry; e != nil && j.queue.Load() == q {
		q.st.cancel(e, cause)
	}
	q.mu.Unlock()
}

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Next returns the next batch for a worker: Collect with a Rule of limit
// and delay.
func (q *Queue) Next(ctx context.Context, limit int, delay time.Duration) ([]*Job, error) {
	return q.Collect(ctx, Rule{Limit: limit, Delay: delay})
}

// Collect returns the next batch for a worker: between 1 and r.Limit jobs,
// oldest first. It takes what is already queued, then waits for more until
// r.Delay has passed since the batch got its first job; a full batch leaves
// at once, and a delay of 0 or less takes what is there and goes. With
// r.Adaptive, the batch also leaves as soon as the worker is idle. Only one
// caller at a time fills a batch; other callers wait, in turn, until it
// leaves. A collector whose worker is busy (r.Idle says no) gives its turn,
// and the batch it was filling, to one whose worker is idle, when one waits.
//
// Collect blocks until it has at least one job, ctx is done (it returns
// ctx.Err() and puts the jobs it had taken back at the front of the queue),
// or the queue is closed (it returns the close error, which wraps ErrClosed).
func (q *Queue) Collect(ctx context.Context, r Rule) ([]*Job, error) {
	r.Limit = max(r.Limit, 1)
	for {
		if err := q.acquire(ctx, &r); err != nil {
			return nil, err
		}
		jobs, err := q.collect(ctx, &r)
		q.release()
		if err != errYield {
			return jobs, err
		}
	}
}

// acquire waits for the collector token. While it waits with its worker
// idle it is counted, so that a busy holder yields to it.
func (q *Queue) acquire(ctx context.Context, r *Rule) error {
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
	default:
	}
	counted := false
	defer func() {
		if counted {
			q.mu.Lock()
			q.idleWaiting--
			q.mu.Unlock()
		}
	}()
	for {
		var changed <-chan struct{}
		switch {
		case counted:
		case r.Idle != nil && r.Idle():
			q.mu.Lock()
			q.idleWaiting++
			q.mu.Unlock()
			counted = true
			q.signal() // a busy holder looks again
		default:
			changed = r.Changed
		}
		select {
		case q.token <- struct{}{}:
			return nil
		case <-changed:
		case <-q.done:
			return q.closeErr()
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (q *Queue) release() { <-q.token }

// collect fills one batch; the caller holds the collector token.
func (q *Queue) collect(ctx context.Context, r *Rule) ([]*Job, error) {
	var t batchTimer
	defer t.stop()
	defer q.unhold()
	for {
		jobs, pending, since, err := q.step(r, t.fired)
		if jobs != nil || err != nil {
			return jobs, err
		}
		t.track(pending > 0, r.Delay, since)
		var changed <-chan struct{}
		if pending > 0 && r.Adaptive {
			changed = r.Changed // the worker going idle sends the batch
		}
		select {
		case <-q.wake:
		case <-changed:
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
// how many jobs the batch holds and since when. A busy collector yields
// (errYield) when an idle one waits; the batch it filled goes back in
// front, still counting its delay from its first job.
func (q *Queue) step(r *Rule, fired bool) ([]*Job, int, time.Time, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.holding = false
	if q.st.closed {
		return nil, 0, time.Time{}, q.st.closeErr
	}
	if q.idleWaiting > 0 && r.busy() {
		q.st.requeue()
		return nil, 0, time.Time{}, errYield
	}
	due := fired || r.Delay <= 0 || q.draining != nil || (r.Adaptive && r.idle())
	now := q.now()
	for {
		n := q.st.take(now, r.Limit)
		switch {
		case n == 0:
			q.fillStart = time.Time{}
		case q.fillStart.IsZero():
			q.fillStart = time.Now()
		}
		if n == 0 && q.draining != nil {
			return nil, 0, time.Time{}, q.draining
		}
		if n == 0 || (n < r.Limit && !due) {
			if n == 0 && r.Direct != nil {
				q.holder, q.holding = *r, true
			}
			return nil, n, q.fillStart, nil
		}
		if jobs := q.st.handOut(now); len(jobs) > 0 {
			q.fillStart = time.Time{}
			return jobs, 0, time.Time{}, nil
		}
	}
}

// unhold takes the collector's Direct back when it stops collecting.
func (q *Queue) unhold() {
	q.mu.Lock()
	q.holding, q.holder = false, Rule{}
	q.mu.Unlock()
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
	q.fillStart = time.Time{}
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

// Held returns how many jobs the queue holds: those waiting, those in a
// batch being filled and one claimed for a direct send (Accept) that has
// not been sent yet. A queue whose Held is 0 has no job that a worker
// has not yet been handed.
func (q *Queue) Held() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := q.st.queued + q.st.taken
	if q.claimed {
		n++ // a job on its way to a worker directly (Accept)
	}
	return n
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

// track starts the timer when the batch has jobs and none runs, for what
// is left of delay since the batch got its first job, and resets it when
// the batch has none (its jobs were dropped), so the delay counts again
// from the next first job.
func (b *batchTimer) track(pending bool, delay time.Duration, since time.Time) {
	switch {
	case !pending:
		b.stop()
	case b.t == nil && delay > 0:
		b.t = time.NewTimer(delay - time.Since(since))
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
