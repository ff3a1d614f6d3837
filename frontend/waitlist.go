package frontend

import (
	"net"
	"sync"
	"time"

	"github.com/switchyard/switchyard/batching"
)

// watchDelay is how long a request waits for its answer before its
// connection is watched for a hang-up. Most answers come much sooner, and
// nothing is watched for them: a request costs the wait list one link and
// one unlink. A request still waiting after the delay (queued behind
// others, or on a slow model) is watched, so that a client that leaves is
// noticed before its request reaches a worker.
const watchDelay = 20 * time.Millisecond

// waitList holds every inference request that waits for its answer, in the
// order they began waiting. One timer, armed only while a request in the
// list is not watched yet, starts the watch of each request that has
// waited watchDelay; a forced shutdown answers every waiting request
// through the list. There is no goroutine or timer per request.
type waitList struct {
	delay time.Duration

	mu         sync.Mutex
	head, tail *waiter
	next       *waiter // the oldest waiter not watched yet
	timer      *time.Timer
	armed      bool  // the timer will fire
	cause      error // set by cancelAll: requests that begin waiting later are answered with it at once
	free       *waiter
}

// waiter is one waiting request.
type waiter struct {
	job        *batching.Job
	conn       net.Conn
	since      time.Time
	prev, next *waiter
	watch      *peerWatch // the connection's watch, once it waited delay
}

// add puts a request that begins waiting, since it arrived at since, on the
// list. After cancelAll it answers the job at once and returns nil.
func (l *waitList) add(job *batching.Job, conn net.Conn, since time.Time) *waiter {
	l.mu.Lock()
	if l.cause != nil {
		cause := l.cause
		l.mu.Unlock()
		job.Cancel(cause)
		return nil
	}
	w := l.free
	if w != nil {
		l.free = w.next
		w.next = nil
	} else {
		w = &waiter{}
	}
	w.job, w.conn, w.since = job, conn, since
	l.link(w)
	if !l.armed {
		l.arm(l.delay)
	}
	l.mu.Unlock()
	return w
}

// link appends w; l.mu is held.
func (l *waitList) link(w *waiter) {
	w.prev = l.tail
	if l.tail != nil {
		l.tail.next = w
	} else {
		l.head = w
	}
	l.tail = w
	if l.next == nil {
		l.next = w
	}
}

// arm makes the timer fire after d; l.mu is held.
func (l *waitList) arm(d time.Duration) {
	l.armed = true
	if l.timer == nil {
		l.timer = time.AfterFunc(d, l.scan)
		return
	}
	l.timer.Reset(d)
}

// remove takes w off the list once its request has its answer, and ends
// its connection's watch, if it had one. A nil w is a no-op.
func (l *waitList) remove(w *waiter) {
	if w == nil {
		return
	}
	l.mu.Lock()
	if l.next == w {
		l.next = w.next
	}
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		l.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		l.tail = w.prev
	}
	watch := w.watch
	*w = waiter{next: l.free}
	l.free = w
	l.mu.Unlock()
	watch.stop()
}

// scan watches the connection of every request that has waited the delay,
// and arms the timer for the next one.
func (l *waitList) scan() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = false
	now := time.Now()
	w := l.next
	for ; w != nil && now.Sub(w.since) >= l.delay; w = w.next {
		job := w.job
		w.watch = watchPeer(w.conn, func(cause error) { job.Cancel(cause) })
	}
	l.next = w
	if w != nil {
		l.arm(l.delay - now.Sub(w.since))
	}
}

// cancelAll answers every waiting request with cause, and every request
// that begins waiting later (a forced shutdown).
func (l *waitList) cancelAll(cause error) {
	l.mu.Lock()
	l.cause = cause
	var jobs []*batching.Job
	for w := l.head; w != nil; w = w.next {
		jobs = append(jobs, w.job)
	}
	l.mu.Unlock()
	for _, j := range jobs {
		j.Cancel(cause)
	}
}

// stop stops the timer; the list must be empty.
func (l *waitList) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.timer != nil {
		l.timer.Stop()
		l.armed = false
	}
}
