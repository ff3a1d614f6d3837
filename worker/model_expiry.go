package worker

import (
	"sync"
	"time"

	"github.com/switchyard/switchyard/batching"
)

// expiry answers a queued job with batching.ErrExpired the moment its
// deadline passes, instead of when a worker next looks at the queue: a
// client whose X-Request-Timeout-Ms has run out hears so at once, even
// while every worker is busy or restarting.
//
// A worker claims each job it takes from the queue. Whichever comes first,
// the claim or the deadline, wins under the mutex: a claimed job is sent and
// never expired here, an expired job is dropped by the worker unsent.
type expiry struct {
	mu      sync.Mutex
	timers  map[*batching.Job]*time.Timer
	expired uint64 // jobs this answered with batching.ErrExpired
}

// watch arms j's deadline. A job without one is not watched.
func (e *expiry) watch(j *batching.Job) {
	deadline, ok := j.Deadline()
	if !ok {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.timers == nil {
		e.timers = map[*batching.Job]*time.Timer{}
	}
	e.timers[j] = time.AfterFunc(time.Until(deadline), func() { e.expire(j) })
}

// expire answers j with batching.ErrExpired unless a worker claimed it.
func (e *expiry) expire(j *batching.Job) {
	e.mu.Lock()
	_, waiting := e.timers[j]
	delete(e.timers, j)
	if waiting && j.Fail(batching.ErrExpired) {
		e.expired++
	}
	e.mu.Unlock()
}

// forget disarms j's deadline: the queue refused it.
func (e *expiry) forget(j *batching.Job) { e.claim(j) }

// claim disarms j's deadline for the worker that took it from the queue. It
// reports whether the worker may send j: false means j has expired.
func (e *expiry) claim(j *batching.Job) bool {
	if _, ok := j.Deadline(); !ok {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	t, waiting := e.timers[j]
	if waiting {
		t.Stop()
		delete(e.timers, j)
	}
	return waiting
}

// claimAll claims jobs and returns those that may be sent, in order.
func (e *expiry) claimAll(jobs []*batching.Job) []*batching.Job {
	out := jobs[:0]
	for _, j := range jobs {
		if e.claim(j) {
			out = append(out, j)
		}
	}
	return out
}

// stopAll disarms every deadline: the queue that held the jobs was closed
// and has answered them.
func (e *expiry) stopAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for j, t := range e.timers {
		t.Stop()
		delete(e.timers, j)
	}
}

// count returns how many jobs expired here.
func (e *expiry) count() uint64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.expired
}
