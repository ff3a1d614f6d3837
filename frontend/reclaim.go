package frontend

import (
	"runtime/debug"
	"sync"
	"time"
)

// After a request whose body or answer was at least reclaimSize bytes, and
// once reclaimDelay has passed without another such request, the server
// gives the memory those bytes took back to the operating system. Without
// it a front-end that served one large request and then idles keeps that
// memory: an idle Go program allocates too little to start a collection,
// so the garbage waits for the runtime's forced collection (every two
// minutes) and the memory it freed leaves only gradually after that.
const (
	reclaimSize  = 4 << 20
	reclaimDelay = time.Second
)

// reclaimer runs free (debug.FreeOSMemory: a full collection, then every
// free page returned) once the large requests noted with note have been
// quiet for delay. A steady stream of large requests never triggers it:
// their memory is in use.
type reclaimer struct {
	size int

	mu      sync.Mutex
	delay   time.Duration
	free    func()
	timer   *time.Timer
	stopped bool
	running sync.WaitGroup
}

func newReclaimer() *reclaimer {
	return &reclaimer{size: reclaimSize, delay: reclaimDelay, free: debug.FreeOSMemory}
}

// note records a request that held n bytes of body and answer; a large one
// (re)starts the wait before free runs.
func (r *reclaimer) note(n int) {
	if n < r.size {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.stopped:
	case r.timer == nil:
		r.timer = time.AfterFunc(r.delay, r.fire)
	default:
		r.timer.Reset(r.delay)
	}
}

// fire runs free unless the reclaimer was stopped.
func (r *reclaimer) fire() {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return
	}
	r.running.Add(1)
	free := r.free
	r.mu.Unlock()
	defer r.running.Done()
	free()
}

// stop cancels a pending run and waits for one in progress.
func (r *reclaimer) stop() {
	r.mu.Lock()
	r.stopped = true
	if r.timer != nil {
		r.timer.Stop()
	}
	r.mu.Unlock()
	r.running.Wait()
}
