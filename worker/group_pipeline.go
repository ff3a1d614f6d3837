package worker

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
)

// pipelineDepth is how many batches a worker holds at once: the one it runs
// and the next, already in its socket, so that it starts on the next as
// soon as it has answered one, while the front-end fills the batch after.
// The worker takes them one after another (its runtime reads the next
// frame when it has written a reply), so the answers keep their order.
// It must be at least 2: a direct send (batching.Rule.Direct) adds a batch
// to an idle worker while the serve loop, which waited for room before it
// began to collect, may still send the batch it collects.
const pipelineDepth = 2

// pipeline counts the batches a worker slot has on its process, for its
// serve loop (room for one more, all ended) and for batch collection (is
// the worker idle). Batches leave it from the process's reply reader.
//
// It also keeps the queue's deadlines for the batch that waits behind the
// one the worker runs: the worker has not started it, so a job whose
// deadline passes there is answered 503 (batching.ErrExpired) at its
// deadline, as it would have been in the queue; the worker's answer, when
// it comes, is dropped. The slot sends one batch at a time (sendMu), so the
// order of its sends is the order in which the worker takes them.
type pipeline struct {
	w       *run
	n       atomic.Int32  // batches in flight
	changed chan struct{} // a value after n went down

	sendMu sync.Mutex // one send at a time: the line's order is the worker's

	mu       sync.Mutex   // guards what follows, and orders the slot's busy and idle marks
	line     []*sentBatch // the batches on the worker, in the order sent: line[0] runs
	closed   bool         // the slot no longer sends
	timedOut error        // the first batch that ended at the predict timeout
	expiry   *time.Timer  // the deadline of a job that waits behind line[0]
	armed    bool         // expiry will fire
}

// sentBatch is one batch on the worker.
type sentBatch struct {
	jobs  []*batching.Job
	ended func(error) // Runner.Dispatch's done for it
}

func newPipeline(w *run) *pipeline {
	return &pipeline{w: w, changed: make(chan struct{}, 1)}
}

// idle reports whether no batch is in flight.
func (pl *pipeline) idle() bool { return pl.n.Load() == 0 }

// push counts a batch that is about to be sent, unless onlyIdle is set
// (a direct send) and the worker is not idle or the slot no longer sends.
// sendMu is held.
func (pl *pipeline) push(jobs []*batching.Job, onlyIdle bool) (*sentBatch, bool) {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	if onlyIdle && (pl.closed || pl.n.Load() != 0) {
		return nil, false
	}
	b := &sentBatch{jobs: jobs}
	b.ended = func(err error) { pl.end(b, err) }
	pl.line = append(pl.line, b)
	pl.n.Add(1)
	pl.w.busy()
	if len(pl.line) > 1 {
		pl.armLocked(earliestDeadline(jobs))
	}
	return b, true
}

// end takes b out once it has ended on the worker; err is what it ended
// with. The batch behind it, if any, starts now: its deadlines no longer
// apply.
func (pl *pipeline) end(b *sentBatch, err error) {
	pl.mu.Lock()
	if errors.Is(err, api.ErrPredictTimeout) && pl.timedOut == nil {
		pl.timedOut = err
	}
	if i := slices.Index(pl.line, b); i >= 0 {
		pl.line = slices.Delete(pl.line, i, i+1)
	}
	if len(pl.line) < 2 && pl.armed {
		pl.expiry.Stop()
		pl.armed = false
	}
	if pl.n.Add(-1) == 0 {
		pl.w.idle()
	} else {
		pl.w.busy() // its last activity, for the idle limit
	}
	pl.mu.Unlock()
	select {
	case pl.changed <- struct{}{}:
	default:
	}
}

// armLocked makes the expiry timer fire by at; pl.mu is held.
func (pl *pipeline) armLocked(at time.Time) {
	if at.IsZero() || pl.armed {
		return
	}
	pl.armed = true
	if pl.expiry == nil {
		pl.expiry = time.AfterFunc(time.Until(at), pl.expire)
		return
	}
	pl.expiry.Reset(time.Until(at))
}

// expire answers the jobs waiting behind the running batch whose deadline
// has passed, and re-arms for the next.
func (pl *pipeline) expire() {
	pl.mu.Lock()
	pl.armed = false
	now := time.Now()
	var due []*batching.Job
	var next time.Time
	for _, b := range pl.line[min(1, len(pl.line)):] {
		for _, j := range b.jobs {
			d, ok := j.Deadline()
			switch {
			case !ok || j.Answered():
			case !now.Before(d):
				due = append(due, j)
			case next.IsZero() || d.Before(next):
				next = d
			}
		}
	}
	pl.armLocked(next)
	pl.mu.Unlock()
	q := pl.w.m.currentQueue()
	for _, j := range due {
		q.ExpireHeld(j)
	}
}

// earliestDeadline returns the earliest deadline of jobs; zero when none
// has one.
func earliestDeadline(jobs []*batching.Job) time.Time {
	var at time.Time
	for _, j := range jobs {
		if d, ok := j.Deadline(); ok && (at.IsZero() || d.Before(at)) {
			at = d
		}
	}
	return at
}

// waitRoom waits until the worker can take one more batch; it reports
// false when ctx ends first.
func (pl *pipeline) waitRoom(ctx context.Context) bool {
	for pl.n.Load() >= pipelineDepth {
		select {
		case <-pl.changed:
		case <-ctx.Done():
			return false
		}
	}
	return ctx.Err() == nil
}

// close stops direct sends and waits until every batch has ended on the
// worker, or ctx (a forced shutdown, which kills the worker next) ends.
func (pl *pipeline) close(ctx context.Context) {
	pl.mu.Lock()
	pl.closed = true
	pl.mu.Unlock()
	for pl.n.Load() > 0 {
		select {
		case <-pl.changed:
		case <-ctx.Done():
			return
		}
	}
	pl.mu.Lock()
	if pl.armed {
		pl.expiry.Stop()
		pl.armed = false
	}
	pl.mu.Unlock()
}

// err is the predict timeout a batch ended with, if one did: the worker was
// killed for it.
func (pl *pipeline) err() error {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.timedOut
}
