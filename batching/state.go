package batching

import (
	"errors"
	"time"
)

// Stats counts what has happened to the jobs of one queue since it was made.
type Stats struct {
	// Pushed counts jobs accepted into the queue.
	Pushed uint64
	// Rejected counts jobs refused because the queue was full.
	Rejected uint64
	// Dropped counts jobs answered with ErrClientGone because their client
	// left before they were dispatched.
	Dropped uint64
	// Expired counts jobs answered with ErrExpired because their deadline
	// passed while they waited.
	Expired uint64
	// Dispatched counts jobs handed to a worker.
	Dispatched uint64
}

// entry is one job in the state's list. The list is intrusive so that a job
// whose client leaves can be unlinked in O(1) from anywhere in the queue.
type entry struct {
	job        *Job
	prev, next *entry
	taken      bool // in the batch being filled
	out        bool // no longer in the list
}

// state is the pure core of a queue: no goroutines, no channels, no clock.
// The list holds the batch being filled (a prefix of taken entries, oldest
// first) followed by the queued entries in arrival order; cursor is the first
// queued entry. Every time is passed in by the caller.
type state struct {
	head, tail *entry
	cursor     *entry
	queued     int // entries after the taken prefix
	taken      int // entries in the taken prefix
	capacity   int
	closed     bool
	closeErr   error
	stats      Stats
}

func newState(capacity int) state {
	return state{capacity: max(capacity, 1)}
}

// push appends j. A closed queue, a gone client and a full queue refuse it;
// before judging fullness, dead jobs at the front of the queued part are
// cleared away so that an expired backlog does not block new work.
func (s *state) push(j *Job, now time.Time) (*entry, error) {
	switch {
	case s.closed:
		return nil, s.closeErr
	case j.Gone():
		s.stats.Dropped++
		return nil, ErrClientGone
	}
	s.purgeFront(now)
	if s.queued >= s.capacity {
		s.stats.Rejected++
		return nil, ErrQueueFull
	}
	e := &entry{job: j}
	s.link(e)
	s.stats.Pushed++
	return e, nil
}

func (s *state) link(e *entry) {
	e.prev = s.tail
	if s.tail != nil {
		s.tail.next = e
	} else {
		s.head = e
	}
	s.tail = e
	if s.cursor == nil {
		s.cursor = e
	}
	s.queued++
}

// purgeFront removes dead jobs from the front of the queued part.
func (s *state) purgeFront(now time.Time) {
	for s.cursor != nil {
		if !s.settleDead(s.cursor, now) {
			return
		}
	}
}

// take moves queued jobs into the batch being filled until it holds limit
// jobs or the queue is empty, removing dead jobs on the way. It returns the
// size of the batch being filled.
func (s *state) take(now time.Time, limit int) int {
	for s.taken < limit && s.cursor != nil {
		e := s.cursor
		if s.settleDead(e, now) {
			continue
		}
		e.taken = true
		s.cursor = e.next
		s.queued--
		s.taken++
	}
	return s.taken
}

// handOut removes the batch being filled from the list and returns its live
// jobs, oldest first. Jobs that died while the batch was filling are removed
// and answered instead.
func (s *state) handOut(now time.Time) []*Job {
	jobs := make([]*Job, 0, s.taken)
	for s.taken > 0 {
		e := s.head
		if s.settleDead(e, now) {
			continue
		}
		s.remove(e)
		jobs = append(jobs, e.job)
	}
	s.stats.Dispatched += uint64(len(jobs))
	return jobs
}

// requeue gives the batch being filled back to the queue, in front and in
// its order, for the next collector to take.
func (s *state) requeue() {
	for e := s.head; e != nil && e.taken; e = e.next {
		e.taken = false
	}
	s.cursor = s.head
	s.queued += s.taken
	s.taken = 0
}

// settleDead removes e and answers it when it must not be dispatched: its
// job is already answered, its client has gone, or its deadline has passed
// at now. It reports whether e was removed.
func (s *state) settleDead(e *entry, now time.Time) bool {
	switch {
	case e.job.Answered():
		s.remove(e)
	case e.job.Gone():
		s.cancel(e, e.job.Cause())
	case e.job.Expired(now):
		s.remove(e)
		if e.job.Fail(ErrExpired) {
			s.stats.Expired++
		}
	default:
		return false
	}
	return true
}

// cancel removes e, if it is still in the list, and answers it with cause;
// a job this answers because its client left counts as dropped.
func (s *state) cancel(e *entry, cause error) {
	if e.out {
		return
	}
	s.remove(e)
	if e.job.Fail(cause) && errors.Is(cause, ErrClientGone) {
		s.stats.Dropped++
	}
}

// remove unlinks e; its job no longer names a queue.
func (s *state) remove(e *entry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		s.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		s.tail = e.prev
	}
	if s.cursor == e {
		s.cursor = e.next
	}
	s.count(e, -1)
	e.prev, e.next, e.out = nil, nil, true
	e.job.entry = nil
	e.job.queue.Store(nil)
}

func (s *state) count(e *entry, d int) {
	if e.taken {
		s.taken += d
	} else {
		s.queued += d
	}
}

// close stops the state taking jobs and answers every job it holds, queued
// or in the batch being filled, with err. It returns how many jobs it
// answered; a second close answers none.
func (s *state) close(err error) int {
	if s.closed {
		return 0
	}
	s.closed, s.closeErr = true, err
	n := 0
	for s.head != nil {
		e := s.head
		s.remove(e)
		if e.job.Fail(err) {
			n++
		}
	}
	return n
}

// expireDue answers every held job whose deadline has passed at now with
// ErrExpired and returns the earliest deadline of the jobs that remain
// (zero when none has one).
func (s *state) expireDue(now time.Time) time.Time {
	var next time.Time
	for e := s.head; e != nil; {
		after := e.next
		if d, ok := e.job.Deadline(); ok {
			if !s.settleDead(e, now) && (next.IsZero() || d.Before(next)) {
				next = d
			}
		}
		e = after
	}
	return next
}

// setCapacity changes the bound. Jobs already queued stay; a smaller bound
// only refuses new jobs until the queue is below it.
func (s *state) setCapacity(n int) { s.capacity = max(n, 1) }
