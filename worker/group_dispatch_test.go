package worker

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/properties"
)

// idleRun returns a worker slot of a model without processes, whose queue
// the test fills by hand.
func idleRun(temporary bool, maxIdle time.Duration) *run {
	m := &Model{cfg: &properties.Model{MaxIdleTime: maxIdle}, queue: batching.NewQueue(4), changed: make(chan struct{})}
	return &run{m: m, g: &group{m: m}, temporary: temporary, lastActive: time.Now()}
}

type nextResult struct {
	jobs []*batching.Job
	err  error
	at   time.Duration // since the wait began
}

// waitNext runs w.next in the background and returns its result channel.
func waitNext(w *run) <-chan nextResult {
	out := make(chan nextResult, 1)
	began := time.Now()
	go func() {
		jobs, err := w.next(context.Background(), batching.Rule{Limit: 1})
		out <- nextResult{jobs, err, time.Since(began)}
	}()
	return out
}

// TestNextIdle checks on a fake clock when a worker gives up waiting for
// work: a temporary one after max_idle_time, a permanent one never, and a
// worker whose kind changes during the wait by its new kind's rule.
func TestNextIdle(t *testing.T) {
	tests := []struct {
		name      string
		temporary bool
		retag     *bool         // the kind set after one second, if any
		wantIdle  time.Duration // 0: does not give up within a minute
	}{
		{"temporary", true, nil, 2 * time.Second},
		{"permanent", false, nil, 0},
		{"made temporary", false, ptr(true), 2 * time.Second},
		{"made permanent", true, ptr(false), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				w := idleRun(tt.temporary, 2*time.Second)
				res := waitNext(w)
				if tt.retag != nil {
					time.Sleep(time.Second)
					synctest.Wait()
					w.setTemporary(*tt.retag)
				}
				time.Sleep(time.Minute)
				synctest.Wait()
				checkNext(t, w, res, tt.wantIdle)
			})
		})
	}
}

func checkNext(t *testing.T, w *run, res <-chan nextResult, wantIdle time.Duration) {
	t.Helper()
	if wantIdle > 0 {
		r := <-res
		if !errors.Is(r.err, context.DeadlineExceeded) || r.at != wantIdle {
			t.Errorf("next = %v after %v, want the idle limit after %v", r.err, r.at, wantIdle)
		}
		return
	}
	select {
	case r := <-res:
		t.Fatalf("next returned %v without work", r.err)
	default:
	}
	j := batching.NewJob("work", message.Input{}, time.Now(), time.Time{})
	if err := w.g.m.queue.Push(j); err != nil {
		t.Fatal(err)
	}
	if r := <-res; r.err != nil || len(r.jobs) != 1 || r.jobs[0] != j {
		t.Errorf("next = %v, %v; want the job", r.jobs, r.err)
	}
}
