package batching

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchyard/switchyard/message"
)

// batchAt is a batch as a worker received it, and when.
type batchAt struct {
	ids []string
	at  time.Duration // since the start of the bubble
}

// worker calls Next once in its own goroutine; wait returns what it got.
type worker struct {
	done  chan struct{}
	got   batchAt
	err   error
	start time.Time
}

func startWorker(ctx context.Context, q *Queue, limit int, delay time.Duration) *worker {
	w := &worker{done: make(chan struct{}), start: time.Now()}
	go func() {
		defer close(w.done)
		jobs, err := q.Next(ctx, limit, delay)
		w.got, w.err = batchAt{ids: ids(jobs), at: time.Since(w.start)}, err
	}()
	return w
}

func (w *worker) wait() (batchAt, error) {
	<-w.done
	return w.got, w.err
}

func (w *worker) finished() bool {
	select {
	case <-w.done:
		return true
	default:
		return false
	}
}

// pushAt pushes jobs named by ids, waiting gap before each.
func pushAt(t *testing.T, q *Queue, gap time.Duration, names ...string) []*Job {
	t.Helper()
	var jobs []*Job
	for _, id := range names {
		time.Sleep(gap)
		j := NewJob(id, message.Input{}, time.Now(), time.Time{})
		if err := q.Push(j); err != nil {
			t.Fatalf("push %s: %v", id, err)
		}
		jobs = append(jobs, j)
	}
	return jobs
}

func TestQueueNextTiming(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name    string
		limit   int
		delay   time.Duration
		before  []string      // queued before Next is called
		idle    time.Duration // wait after calling Next before the rest arrive
		gap     time.Duration // between later arrivals
		after   []string
		want    []string
		wantAt  time.Duration
		wantLen int
	}{
		{
			name: "queued job joined by arrivals within the delay", limit: 4, delay: 100 * ms,
			before: []string{"a"}, gap: 10 * ms, after: []string{"b", "c", "d"},
			want: []string{"a", "b", "c", "d"}, wantAt: 30 * ms,
		},
		{
			name: "batch leaves at the delay though not full", limit: 4, delay: 100 * ms,
			before: []string{"a", "b"},
			want:   []string{"a", "b"}, wantAt: 100 * ms,
		},
		{
			name: "late arrivals wait for the next batch", limit: 4, delay: 100 * ms,
			before: []string{"a"}, gap: 60 * ms, after: []string{"b", "c"},
			want: []string{"a", "b"}, wantAt: 100 * ms, wantLen: 1,
		},
		{
			name: "full batch leaves at once", limit: 4, delay: time.Hour,
			before: []string{"a", "b", "c", "d", "e"},
			want:   []string{"a", "b", "c", "d"}, wantAt: 0, wantLen: 1,
		},
		{
			name: "delay counts from the first job taken, not from the call", limit: 4, delay: 100 * ms,
			idle: 50 * ms, after: []string{"a"},
			want: []string{"a"}, wantAt: 150 * ms,
		},
		{
			name: "zero delay takes what is there", limit: 8, delay: 0,
			before: []string{"a", "b", "c"}, gap: ms, after: []string{"d"},
			want: []string{"a", "b", "c"}, wantAt: 0, wantLen: 1,
		},
		{
			name: "zero delay waits for at least one", limit: 8, delay: 0,
			idle: 70 * ms, after: []string{"a"},
			want: []string{"a"}, wantAt: 70 * ms,
		},
		{
			name: "negative delay acts as zero", limit: 8, delay: -time.Second,
			before: []string{"a"},
			want:   []string{"a"}, wantAt: 0,
		},
		{
			name: "limit below one takes one", limit: 0, delay: time.Hour,
			before: []string{"a", "b"},
			want:   []string{"a"}, wantAt: 0, wantLen: 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := NewQueue(10)
				defer q.Close(nil)
				pushAt(t, q, 0, tt.before...)
				w := startWorker(t.Context(), q, tt.limit, tt.delay)
				time.Sleep(tt.idle)
				pushAt(t, q, tt.gap, tt.after...)
				got, err := w.wait()
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(got.ids, tt.want) || got.at != tt.wantAt {
					t.Errorf("got %v at %v, want %v at %v", got.ids, got.at, tt.want, tt.wantAt)
				}
				synctest.Wait()
				if q.Len() != tt.wantLen {
					t.Errorf("Len = %d, want %d", q.Len(), tt.wantLen)
				}
			})
		})
	}
}

// TestQueueHeld counts the batch being filled, which Len leaves out.
func TestQueueHeld(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(10)
		defer q.Close(nil)
		pushAt(t, q, 0, "a", "b")
		w := startWorker(t.Context(), q, 4, time.Second)
		synctest.Wait()
		if q.Len() != 0 || q.Held() != 2 {
			t.Errorf("while a batch fills: Len %d, Held %d; want 0 and 2", q.Len(), q.Held())
		}
		pushAt(t, q, 0, "c", "d", "e")
		if _, err := w.wait(); err != nil {
			t.Fatal(err)
		}
		if q.Len() != 1 || q.Held() != 1 {
			t.Errorf("after the batch left: Len %d, Held %d; want 1 and 1", q.Len(), q.Held())
		}
	})
}

// TestQueueOneCollector has two idle workers and eight jobs arriving 10ms
// apart. One worker fills a batch of four while the other waits its turn, so
// the jobs leave as two full batches instead of two half-full ones that each
// wait out the delay.
func TestQueueOneCollector(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(100)
		defer q.Close(nil)
		a := startWorker(t.Context(), q, 4, 100*time.Millisecond)
		b := startWorker(t.Context(), q, 4, 100*time.Millisecond)
		synctest.Wait()
		pushAt(t, q, 10*time.Millisecond, "1", "2", "3", "4", "5", "6", "7", "8")
		gotA, errA := a.wait()
		gotB, errB := b.wait()
		if err := errors.Join(errA, errB); err != nil {
			t.Fatal(err)
		}
		got := []batchAt{gotA, gotB}
		slices.SortFunc(got, func(x, y batchAt) int { return int(x.at - y.at) })
		want := []batchAt{
			{ids: []string{"1", "2", "3", "4"}, at: 40 * time.Millisecond},
			{ids: []string{"5", "6", "7", "8"}, at: 80 * time.Millisecond},
		}
		for i := range want {
			if !slices.Equal(got[i].ids, want[i].ids) || got[i].at != want[i].at {
				t.Errorf("batch %d = %v at %v, want %v at %v", i, got[i].ids, got[i].at, want[i].ids, want[i].at)
			}
		}
	})
}

// TestQueueWaitersTakeTurns checks that while one worker collects, the others
// take nothing, and that each takes the next batch when the one before leaves.
func TestQueueWaitersTakeTurns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(100)
		defer q.Close(nil)
		ws := make([]*worker, 3)
		for i := range ws {
			ws[i] = startWorker(t.Context(), q, 2, time.Hour)
			synctest.Wait()
		}
		pushAt(t, q, 0, "a")
		synctest.Wait()
		for i, w := range ws {
			if w.finished() {
				t.Fatalf("worker %d left with one job of two and an hour of delay left", i)
			}
		}
		pushAt(t, q, 0, "b", "c", "d", "e", "f")
		var all []string
		for i, w := range ws {
			got, err := w.wait()
			if err != nil || len(got.ids) != 2 {
				t.Fatalf("worker %d got %v, %v; want a full batch", i, got.ids, err)
			}
			all = append(all, got.ids...)
		}
		slices.Sort(all)
		if want := []string{"a", "b", "c", "d", "e", "f"}; !slices.Equal(all, want) {
			t.Errorf("jobs handed out = %v, want each of %v once", all, want)
		}
	})
}

func TestQueueNextContextDone(t *testing.T) {
	tests := []struct {
		name    string
		queued  []string
		delay   time.Duration
		wantLen int // after Next gives up
	}{
		{name: "collector with a partial batch puts it back", queued: []string{"a", "b"}, delay: time.Hour, wantLen: 2},
		{name: "collector with nothing", delay: time.Hour},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := NewQueue(10)
				defer q.Close(nil)
				pushAt(t, q, 0, tt.queued...)
				ctx, cancel := context.WithTimeout(t.Context(), time.Second)
				defer cancel()
				got, err := startWorker(ctx, q, 4, tt.delay).wait()
				if !errors.Is(err, context.DeadlineExceeded) || len(got.ids) != 0 || got.at != time.Second {
					t.Fatalf("Next = %v, %v at %v; want the context's error at 1s", got.ids, err, got.at)
				}
				if q.Len() != tt.wantLen {
					t.Errorf("Len = %d, want %d", q.Len(), tt.wantLen)
				}
				if tt.wantLen == 0 {
					return
				}
				again, err := startWorker(t.Context(), q, 4, 0).wait()
				if err != nil || !slices.Equal(again.ids, tt.queued) {
					t.Errorf("next worker got %v, %v; want %v in order", again.ids, err, tt.queued)
				}
			})
		})
	}
}

func TestQueueWaiterContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(10)
		defer q.Close(nil)
		collector := startWorker(t.Context(), q, 4, time.Hour)
		synctest.Wait()
		ctx, cancel := context.WithCancel(t.Context())
		waiter := startWorker(ctx, q, 4, time.Hour)
		synctest.Wait()
		cancel()
		if _, err := waiter.wait(); !errors.Is(err, context.Canceled) {
			t.Errorf("waiting Next = %v, want context.Canceled", err)
		}
		pushAt(t, q, 0, "a", "b", "c", "d")
		if got, err := collector.wait(); err != nil || len(got.ids) != 4 {
			t.Errorf("collector got %v, %v; want four jobs", got.ids, err)
		}
	})
}

func TestQueueCanceledBeforeNext(t *testing.T) {
	q := NewQueue(10)
	defer q.Close(nil)
	pushAt(t, q, 0, "a")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := q.Next(ctx, 1, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("Next = %v, want context.Canceled", err)
	}
	if q.Len() != 1 {
		t.Errorf("Len = %d, want the job still queued", q.Len())
	}
}

func TestQueueClose(t *testing.T) {
	errUnregistered := errors.New("model unregistered")
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(10)
		collector := startWorker(t.Context(), q, 4, time.Hour)
		synctest.Wait()
		waiter := startWorker(t.Context(), q, 4, time.Hour)
		jobs := pushAt(t, q, 0, "a", "b")
		synctest.Wait()
		if n := q.Close(errUnregistered); n != 2 {
			t.Errorf("Close answered %d jobs, want 2 (both in the batch being filled)", n)
		}
		for name, w := range map[string]*worker{"collector": collector, "waiter": waiter} {
			if _, err := w.wait(); !errors.Is(err, ErrClosed) || !errors.Is(err, errUnregistered) {
				t.Errorf("%s's Next = %v, want ErrClosed wrapping the reason", name, err)
			}
		}
		for _, j := range jobs {
			if _, err := j.Result(); !errors.Is(err, ErrClosed) || !errors.Is(err, errUnregistered) {
				t.Errorf("job %s answer = %v, want ErrClosed wrapping the reason", j.ID, err)
			}
		}
		j := NewJob("late", message.Input{}, time.Now(), time.Time{})
		if err := q.Push(j); !errors.Is(err, ErrClosed) {
			t.Errorf("Push after Close = %v, want ErrClosed", err)
		}
		if _, err := q.Next(t.Context(), 1, 0); !errors.Is(err, ErrClosed) {
			t.Errorf("Next after Close = %v, want ErrClosed", err)
		}
		if n := q.Close(nil); n != 0 {
			t.Errorf("second Close answered %d jobs, want 0", n)
		}
	})
}

// TestQueueDrain checks that a draining queue refuses new jobs but hands
// out what it holds, the batch being filled at once instead of after its
// delay, takes a requeued job back, and then ends every Next.
func TestQueueDrain(t *testing.T) {
	stopping := errors.New("server shutting down")
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(10)
		collector := startWorker(t.Context(), q, 4, time.Hour)
		synctest.Wait()
		pushAt(t, q, 0, "a", "b")
		synctest.Wait()
		q.Drain(stopping)
		first, err := collector.wait()
		if err != nil || !slices.Equal(first.ids, []string{"a", "b"}) || first.at != 0 {
			t.Errorf("collector got %v at %v (%v), want [a b] at once", first.ids, first.at, err)
		}
		late := NewJob("late", message.Input{}, time.Now(), time.Time{})
		if err := q.Push(late); !errors.Is(err, ErrClosed) || !errors.Is(err, stopping) {
			t.Errorf("Push while draining = %v, want ErrClosed wrapping the reason", err)
		}
		back := NewJob("back", message.Input{}, time.Now(), time.Time{})
		if err := q.Requeue(back); err != nil {
			t.Fatalf("Requeue while draining = %v", err)
		}
		if jobs, err := q.Next(t.Context(), 4, time.Hour); err != nil || !slices.Equal(ids(jobs), []string{"back"}) {
			t.Errorf("Next after the requeue = %v (%v), want the requeued job", ids(jobs), err)
		}
		if _, err := q.Next(t.Context(), 4, time.Hour); !errors.Is(err, ErrClosed) || !errors.Is(err, stopping) {
			t.Errorf("Next on a drained queue = %v, want ErrClosed wrapping the reason", err)
		}
		q.Drain(nil) // a second drain changes nothing
		if n := q.Close(nil); n != 0 {
			t.Errorf("Close after the drain answered %d jobs, want 0", n)
		}
	})
}

// TestQueueDrainEmpty checks that draining an empty queue ends the waits of
// the collector and of the workers waiting for their turn.
func TestQueueDrainEmpty(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(10)
		collector := startWorker(t.Context(), q, 4, time.Hour)
		synctest.Wait()
		waiter := startWorker(t.Context(), q, 4, time.Hour)
		synctest.Wait()
		q.Drain(nil)
		for name, w := range map[string]*worker{"collector": collector, "waiter": waiter} {
			if got, err := w.wait(); !errors.Is(err, ErrClosed) || len(got.ids) != 0 {
				t.Errorf("%s's Next = %v, %v; want ErrClosed", name, got.ids, err)
			}
		}
	})
}

func TestCloseError(t *testing.T) {
	reason := errors.New("shutting down")
	wrapped := fmt.Errorf("registry: %w", ErrClosed)
	tests := []struct {
		name string
		in   error
		want []error
	}{
		{name: "nil", in: nil, want: []error{ErrClosed}},
		{name: "a reason", in: reason, want: []error{ErrClosed, reason}},
		{name: "already wraps ErrClosed", in: wrapped, want: []error{ErrClosed, wrapped}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := closeError(tt.in)
			for _, w := range tt.want {
				if !errors.Is(got, w) {
					t.Errorf("closeError(%v) = %v, does not wrap %v", tt.in, got, w)
				}
			}
		})
	}
}

func TestQueuePush(t *testing.T) {
	q := NewQueue(2)
	defer q.Close(nil)
	pushAt(t, q, 0, "a", "b")
	full := NewJob("c", message.Input{}, time.Now(), time.Time{})
	if err := q.Push(full); !errors.Is(err, ErrQueueFull) {
		t.Fatalf("Push to a full queue = %v, want ErrQueueFull", err)
	}
	gone := NewJob("d", message.Input{}, time.Now(), time.Time{})
	gone.Cancel(ErrClientGone)
	if err := q.Push(gone); !errors.Is(err, ErrClientGone) {
		t.Fatalf("Push of a gone client's job = %v, want ErrClientGone", err)
	}
	q.SetCapacity(3)
	if err := q.Push(full); err != nil || q.Len() != 3 || q.Cap() != 3 {
		t.Fatalf("Push after growing = %v with Len %d, Cap %d; want nil, 3, 3", err, q.Len(), q.Cap())
	}
	want := Stats{Pushed: 3, Rejected: 1, Dropped: 1}
	if got := q.Stats(); got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
}

// TestQueueClientLeaves checks that a job whose client leaves is answered
// at once wherever it sits, and never reaches a worker.
func TestQueueClientLeaves(t *testing.T) {
	tests := []struct {
		name     string
		collects bool // a worker is filling a batch when the client leaves
	}{
		{name: "while queued"},
		{name: "while in the batch being filled", collects: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				q := NewQueue(10)
				defer q.Close(nil)
				j := NewJob("leaver", message.Input{}, time.Now(), time.Time{})
				if err := q.Push(j); err != nil {
					t.Fatal(err)
				}
				var w *worker
				if tt.collects {
					w = startWorker(t.Context(), q, 2, 100*time.Millisecond)
				}
				time.Sleep(50 * time.Millisecond)
				j.Cancel(ErrClientGone)
				synctest.Wait()
				if _, err := j.Wait(t.Context()); !errors.Is(err, ErrClientGone) {
					t.Errorf("job answer = %v, want ErrClientGone", err)
				}
				if q.Len() != 0 || q.Stats().Dropped != 1 {
					t.Errorf("Len %d, Dropped %d; want 0, 1", q.Len(), q.Stats().Dropped)
				}
				if w == nil {
					return
				}
				time.Sleep(100 * time.Millisecond) // well past the first job's delay
				pushAt(t, q, 0, "next")
				got, err := w.wait()
				if err != nil || !slices.Equal(got.ids, []string{"next"}) || got.at != 250*time.Millisecond {
					t.Errorf("worker got %v, %v at %v; want [next] a full delay after it came, at 250ms", got.ids, err, got.at)
				}
			})
		})
	}
}

func TestQueueExpired(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(10)
		defer q.Close(nil)
		now := time.Now()
		old := NewJob("old", message.Input{}, now, now.Add(50*time.Millisecond))
		fresh := NewJob("fresh", message.Input{}, now, now.Add(time.Hour))
		for _, j := range []*Job{old, fresh} {
			if err := q.Push(j); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(50 * time.Millisecond)
		got, err := startWorker(t.Context(), q, 4, 0).wait()
		if err != nil || !slices.Equal(got.ids, []string{"fresh"}) {
			t.Errorf("worker got %v, %v; want [fresh]", got.ids, err)
		}
		if _, err := old.Result(); !errors.Is(err, ErrExpired) {
			t.Errorf("expired job answer = %v, want ErrExpired", err)
		}
		if s := q.Stats(); s.Expired != 1 || s.Dispatched != 1 {
			t.Errorf("Stats = %+v, want one expired, one dispatched", s)
		}
	})
}

func TestQueueWithClock(t *testing.T) {
	var mu sync.Mutex
	now := t0
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	q := NewQueue(10, WithClock(clock))
	defer q.Close(nil)
	j := NewJob("a", message.Input{}, t0, t0.Add(time.Second))
	if err := q.Push(j); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	pushAt(t, q, 0, "b")
	got, err := q.Next(context.Background(), 2, 0)
	if err != nil || !slices.Equal(ids(got), []string{"b"}) {
		t.Errorf("Next = %v, %v; want [b] (a expired by the queue's clock)", ids(got), err)
	}
}

// TestQueueForgetsJobs checks that a job that left the queue (handed out
// or answered at Close) no longer names it: a later Cancel answers the job
// if it can and leaves the queue alone.
func TestQueueForgetsJobs(t *testing.T) {
	q := NewQueue(100)
	var all []*Job
	for i := range 50 {
		j := NewJob(fmt.Sprint(i), message.Input{}, time.Now(), time.Time{})
		if err := q.Push(j); err != nil {
			t.Fatal(err)
		}
		all = append(all, j)
	}
	jobs, err := q.Next(context.Background(), 30, 0)
	if err != nil || len(jobs) != 30 {
		t.Fatalf("Next = %d jobs, %v; want 30", len(jobs), err)
	}
	if n := q.Close(nil); n != 20 {
		t.Errorf("Close answered %d, want 20", n)
	}
	for i, j := range all {
		if j.queue.Load() != nil || j.entry != nil {
			t.Fatalf("job %d still names the queue", i)
		}
		j.Cancel(ErrClientGone)
		_, err := j.Result()
		if want := map[bool]error{true: ErrClientGone, false: ErrClosed}[i < 30]; !errors.Is(err, want) {
			t.Errorf("job %d answered %v, want %v", i, err, want)
		}
	}
	if q.Stats().Dropped != 0 {
		t.Errorf("Dropped = %d, want 0: none was in the queue when it was canceled", q.Stats().Dropped)
	}
}

// TestQueueExpiresAtDeadline checks that a waiting job is answered with
// ErrExpired when its deadline passes, with no worker looking at the queue,
// and that a later deadline behind an earlier one is honoured too.
func TestQueueExpiresAtDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := NewQueue(10)
		start := time.Now()
		late := NewJob("late", message.Input{}, start, start.Add(300*time.Millisecond))
		early := NewJob("early", message.Input{}, start, start.Add(100*time.Millisecond))
		none := NewJob("none", message.Input{}, start, time.Time{})
		for _, j := range []*Job{late, early, none} {
			if err := q.Push(j); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(150 * time.Millisecond)
		synctest.Wait()
		if _, err := early.Result(); !errors.Is(err, ErrExpired) || late.Answered() {
			t.Fatalf("after 150ms: early = %v, late answered = %v", err, late.Answered())
		}
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		if _, err := late.Result(); !errors.Is(err, ErrExpired) {
			t.Fatalf("after 350ms: late = %v", err)
		}
		if none.Answered() || q.Len() != 1 || q.Stats().Expired != 2 {
			t.Fatalf("none answered %v, len %d, stats %+v", none.Answered(), q.Len(), q.Stats())
		}
		q.Close(nil)
	})
}
