package frontend

import (
	"errors"
	"testing"
	"time"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
)

func newWaitJob(id string) *batching.Job {
	return batching.NewJob(id, message.Input{}, time.Now(), time.Time{})
}

// watched reports whether w's connection is watched now.
func (l *waitList) watched(w *waiter) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return w.watch != nil
}

// TestWaitListWatchesLateRequests checks that a request's connection is
// watched only once it has waited the delay, and that a client that hangs
// up after that answers its job with ErrClientGone. "Only once it has
// waited" is checked as a lower bound, which a slow machine cannot break:
// whenever the request is seen watched, at least the delay has passed
// since it began waiting.
func TestWaitListWatchesLateRequests(t *testing.T) {
	const delay = 20 * time.Millisecond
	l := &waitList{delay: delay}
	defer l.stop()
	client, server := tcpPair(t)
	job := newWaitJob("late")
	since := time.Now()
	w := l.add(job, server, since)
	deadline := time.Now().Add(guard)
	for !l.watched(w) {
		if time.Now().After(deadline) {
			t.Fatal("the request was never watched")
		}
		time.Sleep(5 * time.Millisecond)
	}
	if waited := time.Since(since); waited < delay {
		t.Fatalf("the request was watched after waiting %v, before the delay (%v)", waited, delay)
	}
	client.Close()
	select {
	case <-job.Done():
	case <-time.After(guard):
		t.Fatal("a hang-up did not answer the job")
	}
	if _, err := job.Result(); !errors.Is(err, batching.ErrClientGone) {
		t.Errorf("answer %v, want ErrClientGone", err)
	}
	l.remove(w)
}

// TestWaitListRemove checks that removing a watched request ends its watch
// and leaves the connection usable, and that the list empties.
func TestWaitListRemove(t *testing.T) {
	l := &waitList{delay: time.Millisecond}
	defer l.stop()
	client, server := tcpPair(t)
	early := l.add(newWaitJob("early"), server, time.Now().Add(-time.Second))
	fresh := l.add(newWaitJob("fresh"), server, time.Now().Add(time.Hour))
	l.scan()
	if !l.watched(early) || l.watched(fresh) {
		t.Fatalf("after a scan: early watched %v, fresh watched %v; want true, false", l.watched(early), l.watched(fresh))
	}
	l.remove(early)
	l.remove(fresh)
	if _, err := client.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if n, err := server.Read(buf); n != 1 || err != nil {
		t.Fatalf("read after the watch ended: %d %v (deadline left behind?)", n, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.head != nil || l.tail != nil || l.next != nil || l.free == nil {
		t.Error("the list is not empty after every request left, or kept no free waiter")
	}
}

// TestWaitListCancelAll checks that a forced shutdown answers every waiting
// request, and those that begin waiting later at once.
func TestWaitListCancelAll(t *testing.T) {
	l := &waitList{delay: time.Hour}
	defer l.stop()
	a, b := newWaitJob("a"), newWaitJob("b")
	wa, wb := l.add(a, nil, time.Now()), l.add(b, nil, time.Now())
	l.cancelAll(batching.ErrClosed)
	late := newWaitJob("late")
	if w := l.add(late, nil, time.Now()); w != nil {
		t.Error("a request added after cancelAll was put on the list")
	}
	for _, j := range []*batching.Job{a, b, late} {
		if _, err := j.Result(); !errors.Is(err, batching.ErrClosed) {
			t.Errorf("job %s answered %v, want ErrClosed", j.ID, err)
		}
	}
	l.remove(wa)
	l.remove(wb)
	l.remove(nil)
}
