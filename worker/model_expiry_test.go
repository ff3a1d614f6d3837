package worker

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchyard/switchyard/batching"
)

// TestExpiry plays each order of a job's deadline and a worker's claim on a
// fake clock.
func TestExpiry(t *testing.T) {
	tests := []struct {
		name       string
		claimAfter time.Duration // < 0: never claimed
		forget     bool
		wantSent   bool
		wantErr    error // the job's answer; nil means not answered by expiry
	}{
		{"claimed before the deadline", 500 * time.Millisecond, false, true, nil},
		{"expires in the queue", -1, false, false, batching.ErrExpired},
		{"claimed after it expired", 2 * time.Second, false, false, batching.ErrExpired},
		{"refused by the queue", -1, true, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var e expiry
				j := batching.NewJob(context.Background(), "j", batching.Input{}, time.Now(), time.Now().Add(time.Second))
				e.watch(j)
				if tt.forget {
					e.forget(j)
				}
				sent := false
				if tt.claimAfter >= 0 {
					time.Sleep(tt.claimAfter)
					sent = e.claim(j)
				}
				time.Sleep(3 * time.Second)
				synctest.Wait()
				if sent != tt.wantSent {
					t.Errorf("claim = %v, want %v", sent, tt.wantSent)
				}
				checkExpired(t, j, tt.wantErr)
				if n := e.count(); (n == 1) != (tt.wantErr != nil) {
					t.Errorf("count = %d", n)
				}
			})
		})
	}
}

func checkExpired(t *testing.T, j *batching.Job, want error) {
	t.Helper()
	if want == nil {
		if j.Answered() {
			_, err := j.Result()
			t.Errorf("answered with %v, want no answer from expiry", err)
		}
		return
	}
	if _, err := j.Result(); !errors.Is(err, want) {
		t.Errorf("answer = %v, want %v", err, want)
	}
}

// TestExpiryStopAll checks that a closed queue's jobs are not expired again.
func TestExpiryStopAll(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var e expiry
		j := batching.NewJob(context.Background(), "j", batching.Input{}, time.Now(), time.Now().Add(time.Second))
		e.watch(j)
		e.stopAll()
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if j.Answered() || e.count() != 0 {
			t.Error("a stopped deadline expired the job")
		}
	})
}

// TestExpiryNoDeadline checks that a job without a deadline is always sent.
func TestExpiryNoDeadline(t *testing.T) {
	var e expiry
	j := batching.NewJob(context.Background(), "j", batching.Input{}, time.Now(), time.Time{})
	e.watch(j)
	if !e.claim(j) || len(e.timers) != 0 {
		t.Error("a job without a deadline was watched")
	}
	if got := e.claimAll([]*batching.Job{j, j}); len(got) != 2 {
		t.Errorf("claimAll = %d jobs, want 2", len(got))
	}
}
