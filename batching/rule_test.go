package batching

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchyard/switchyard/message"
)

// workerState is a pipelining worker as Rule sees it: busy while it has
// batches in flight; changed hears of every change.
type workerState struct {
	busy    atomic.Bool
	changed chan struct{}
}

func newWorkerState(busy bool) *workerState {
	s := &workerState{changed: make(chan struct{}, 1)}
	s.busy.Store(busy)
	return s
}

func (s *workerState) idle() bool { return !s.busy.Load() }

func (s *workerState) set(busy bool) {
	s.busy.Store(busy)
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

func (s *workerState) rule(limit int, delay time.Duration, adaptive bool) Rule {
	return Rule{Limit: limit, Delay: delay, Idle: s.idle, Changed: s.changed, Adaptive: adaptive}
}

// collectIn calls Collect once in its own goroutine.
func collectIn(ctx context.Context, q *Queue, r Rule) *worker {
	w := &worker{done: make(chan struct{}), start: time.Now()}
	go func() {
		defer close(w.done)
		jobs, err := q.Collect(ctx, r)
		w.got, w.err = batchAt{ids: ids(jobs), at: time.Since(w.start)}, err
	}()
	return w
}

// TestCollectAdaptive checks adaptive batching: a lone job that finds the
// worker idle leaves at once; while the worker is busy the batch fills, and
// leaves when it is full, when the worker goes idle, or at the delay.
func TestCollectAdaptive(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name     string
		busy     bool
		adaptive bool
		idleAt   time.Duration // the worker goes idle then (0: never)
		jobs     int           // pushed 10ms apart
		want     int
		wantAt   time.Duration
	}{
		{name: "idle worker: a lone job leaves at once", adaptive: true, jobs: 1, want: 1, wantAt: 0},
		{name: "not adaptive: a lone job waits out the delay", jobs: 1, want: 1, wantAt: 100 * ms},
		{name: "busy worker: the batch fills until the worker is idle", busy: true, adaptive: true, idleAt: 25 * ms, jobs: 8, want: 3, wantAt: 25 * ms},
		{name: "busy worker: a full batch leaves at once", busy: true, adaptive: true, jobs: 8, want: 4, wantAt: 30 * ms},
		{name: "busy worker: the delay still bounds the wait", busy: true, adaptive: true, jobs: 2, want: 2, wantAt: 100 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := NewQueue(100)
				defer q.Close(nil)
				s := newWorkerState(tt.busy)
				w := collectIn(t.Context(), q, s.rule(4, 100*ms, tt.adaptive))
				if tt.idleAt > 0 {
					time.AfterFunc(tt.idleAt, func() { s.set(false) })
				}
				go func() {
					for i := range tt.jobs {
						if i > 0 {
							time.Sleep(10 * ms)
						}
						_ = q.Push(NewJob(fmt.Sprint(i), message.Input{}, time.Now(), time.Time{}))
					}
				}()
				got, err := w.wait()
				if err != nil || len(got.ids) != tt.want || got.at != tt.wantAt {
					t.Errorf("got %v, %v at %v; want %d jobs at %v", got.ids, err, got.at, tt.want, tt.wantAt)
				}
				time.Sleep(time.Second) // the pushes end
			})
		})
	}
}

// TestCollectYields checks that a collector whose worker is busy gives its
// turn, and the batch it was filling, to one whose worker is idle, and that
// the batch keeps counting its delay from its first job.
func TestCollectYields(t *testing.T) {
	const ms = time.Millisecond
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(100)
		defer q.Close(nil)
		busy, idle := newWorkerState(true), newWorkerState(true)
		holder := collectIn(t.Context(), q, busy.rule(4, 100*ms, false))
		synctest.Wait()
		waiter := collectIn(t.Context(), q, idle.rule(4, 100*ms, false))
		pushAt(t, q, 0, "a")
		time.Sleep(40 * ms)
		idle.set(false) // the waiter's worker is done with its batch
		got, err := waiter.wait()
		if err != nil || !slices.Equal(got.ids, []string{"a"}) || got.at != 100*ms {
			t.Errorf("the idle worker got %v, %v at %v; want [a] at 100ms, the delay of the batch's first job", got.ids, err, got.at)
		}
		if holder.finished() {
			t.Fatal("the busy collector left with a batch")
		}
		pushAt(t, q, 0, "b", "c", "d", "e")
		if got, err := holder.wait(); err != nil || !slices.Equal(got.ids, []string{"b", "c", "d", "e"}) {
			t.Errorf("the busy collector got %v, %v; want the next full batch", got.ids, err)
		}
	})
}

// TestPushDirect checks Rule.Direct: a job that would leave alone and at
// once goes straight to the waiting collector's worker, on the pushing
// goroutine; one that would wait is queued; a refused one is queued.
func TestPushDirect(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name       string
		limit      int
		adaptive   bool
		busy       bool
		refuse     bool
		queued     []string // before the collector starts waiting
		wantDirect bool
	}{
		{name: "batch size 1", limit: 1, wantDirect: true},
		{name: "batch size 1, busy worker", limit: 1, busy: true},
		{name: "adaptive, idle worker", limit: 4, adaptive: true, wantDirect: true},
		{name: "adaptive, busy worker", limit: 4, adaptive: true, busy: true},
		{name: "batch size 4 waits for company", limit: 4},
		{name: "the worker refuses", limit: 1, refuse: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := NewQueue(10)
				defer q.Close(nil)
				var sent []string
				r := newWorkerState(tt.busy).rule(tt.limit, 50*ms, tt.adaptive)
				r.Direct = func(j *Job) bool {
					if tt.refuse {
						return false
					}
					sent = append(sent, j.ID)
					j.Finish(&message.Response{Code: 200})
					return true
				}
				w := collectIn(t.Context(), q, r)
				synctest.Wait()
				pushAt(t, q, 0, "x")
				synctest.Wait()
				if got := len(sent) == 1; got != tt.wantDirect {
					t.Fatalf("sent directly: %v, want %v", sent, tt.wantDirect)
				}
				if tt.wantDirect {
					if s := q.Stats(); s.Pushed != 1 || s.Dispatched != 1 || q.Len() != 0 || w.finished() {
						t.Errorf("after a direct send: stats %+v, Len %d, collector finished %v", s, q.Len(), w.finished())
					}
					return
				}
				got, err := w.wait()
				if err != nil || !slices.Equal(got.ids, []string{"x"}) {
					t.Errorf("the collector got %v, %v; want [x] through the queue", got.ids, err)
				}
			})
		})
	}
}

// TestPushDirectOnlyWhenEmpty checks that a job behind queued ones is
// queued, so that jobs leave in order.
func TestPushDirectOnlyWhenEmpty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(10)
		defer q.Close(nil)
		pushAt(t, q, 0, "a")
		direct := 0
		r := Rule{Limit: 1, Direct: func(*Job) bool { direct++; return true }}
		got, err := collectIn(t.Context(), q, r).wait()
		if err != nil || !slices.Equal(got.ids, []string{"a"}) || direct != 0 {
			t.Errorf("got %v, %v with %d direct sends; want [a] from the queue", got.ids, err, direct)
		}
	})
}

// TestAcceptClaims checks Accept's two steps: a job that would go directly
// only claims the collector, which Held counts and no other job can take
// (a second job is queued), and goes to the worker when send runs; a job
// whose direct send is refused by then is queued behind.
func TestAcceptClaims(t *testing.T) {
	for _, refuse := range []bool{false, true} {
		t.Run(fmt.Sprintf("refuse=%v", refuse), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := NewQueue(10)
				defer q.Close(nil)
				var sent []string
				r := newWorkerState(false).rule(1, 0, false)
				r.Direct = func(j *Job) bool {
					if refuse {
						return false
					}
					sent = append(sent, j.ID)
					j.Finish(&message.Response{Code: 200})
					return true
				}
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				w := collectIn(ctx, q, r)
				synctest.Wait()
				first := NewJob("first", message.Input{}, time.Now(), time.Time{})
				send, err := q.Accept(first)
				if send == nil || err != nil {
					t.Fatalf("Accept: send %v, %v; want a claim", send != nil, err)
				}
				if n := q.Held(); n != 1 {
					t.Errorf("Held with a claim = %d, want 1", n)
				}
				second := NewJob("second", message.Input{}, time.Now(), time.Time{})
				if send2, err := q.Accept(second); send2 != nil || err != nil {
					t.Fatalf("a second Accept during the claim: send %v, %v; want it queued", send2 != nil, err)
				}
				got, err := w.wait()
				if err != nil || !slices.Equal(got.ids, []string{"second"}) {
					t.Fatalf("the collector got %v, %v; want [second] from the queue", got.ids, err)
				}
				if err := send(); err != nil {
					t.Fatal(err)
				}
				if refuse {
					if sent != nil || q.Held() != 1 || q.Len() != 1 {
						t.Errorf("a refused direct send: sent %v, Held %d, Len %d; want it queued", sent, q.Held(), q.Len())
					}
					return
				}
				if !slices.Equal(sent, []string{"first"}) || q.Held() != 0 || !first.Answered() {
					t.Errorf("after send: sent %v, Held %d; want [first] sent directly", sent, q.Held())
				}
			})
		})
	}
}
