package batching

import (
	"slices"
	"sync"
	"time"
)

// ScaleUp reports whether a model should get one more temporary worker now,
// with queued jobs waiting, alive workers running and at most maxWorkers
// allowed. It says yes while alive < maxWorkers and either the queue holds more than
// 2 × batchSize jobs or no worker is alive while a job waits. A batchSize
// below 1 counts as 1.
//
// Call it after a Push: with nothing queued and no worker alive it says no,
// so a model whose last temporary worker was released for idleness is not
// restarted until a request comes.
func ScaleUp(queued, batchSize, alive, maxWorkers int) bool {
	if alive >= maxWorkers {
		return false
	}
	if alive <= 0 {
		return queued > 0
	}
	return queued > 2*max(batchSize, 1)
}

// IdleTracker records when each temporary worker last finished its work and
// says which ones have had nothing to do for long enough to be released.
// Workers it was not told about with Add are ignored, so callers may report
// every worker, permanent ones included. It is safe for concurrent use.
type IdleTracker struct {
	mu      sync.Mutex
	workers map[string]idleState
}

type idleState struct {
	busy  bool
	since time.Time // when it last became idle
}

// NewIdleTracker returns a tracker that tracks no worker.
func NewIdleTracker() *IdleTracker {
	return &IdleTracker{workers: make(map[string]idleState)}
}

// Add starts tracking the temporary worker id, idle since now.
func (t *IdleTracker) Add(id string, now time.Time) {
	t.mu.Lock()
	t.workers[id] = idleState{since: now}
	t.mu.Unlock()
}

// Remove stops tracking the worker id.
func (t *IdleTracker) Remove(id string) {
	t.mu.Lock()
	delete(t.workers, id)
	t.mu.Unlock()
}

// Busy records that the worker id took work. A busy worker is never idle,
// however long its work runs.
func (t *IdleTracker) Busy(id string) {
	t.update(id, func(w *idleState) { w.busy = true })
}

// Idle records that the worker id finished its work at now.
func (t *IdleTracker) Idle(id string, now time.Time) {
	t.update(id, func(w *idleState) { w.busy, w.since = false, now })
}

func (t *IdleTracker) update(id string, f func(*idleState)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w, ok := t.workers[id]
	if !ok {
		return
	}
	f(&w)
	t.workers[id] = w
}

// Stale returns, sorted, the tracked workers that at now have been idle for
// maxIdle or longer.
func (t *IdleTracker) Stale(now time.Time, maxIdle time.Duration) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var ids []string
	for id, w := range t.workers {
		if !w.busy && now.Sub(w.since) >= maxIdle {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}
