package batching

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/switchyard/switchyard/message"
)

var errWorker = errors.New("worker died")

func TestJobAnswersOnce(t *testing.T) {
	ok := &message.Response{Code: 200, Body: []byte("first")}
	later := &message.Response{Code: 500}
	tests := []struct {
		name     string
		answer   func(j *Job) []bool // each call's report, in order
		wantWins []bool
		wantResp *message.Response
		wantErr  error
	}{
		{
			name:     "finish then fail",
			answer:   func(j *Job) []bool { return []bool{j.Finish(ok), j.Fail(errWorker)} },
			wantWins: []bool{true, false}, wantResp: ok,
		},
		{
			name:     "fail then finish",
			answer:   func(j *Job) []bool { return []bool{j.Fail(errWorker), j.Finish(ok)} },
			wantWins: []bool{true, false}, wantErr: errWorker,
		},
		{
			name:     "finish twice",
			answer:   func(j *Job) []bool { return []bool{j.Finish(ok), j.Finish(later)} },
			wantWins: []bool{true, false}, wantResp: ok,
		},
		{
			name:     "fail twice",
			answer:   func(j *Job) []bool { return []bool{j.Fail(errWorker), j.Fail(ErrExpired)} },
			wantWins: []bool{true, false}, wantErr: errWorker,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := NewJob("j", message.Input{}, t0, time.Time{})
			if j.Answered() {
				t.Fatal("a new job is answered")
			}
			if wins := tt.answer(j); !slices.Equal(wins, tt.wantWins) {
				t.Errorf("reports = %v, want %v", wins, tt.wantWins)
			}
			<-j.Done()
			resp, err := j.Result()
			if resp != tt.wantResp || err != tt.wantErr || !j.Answered() {
				t.Errorf("Result = %v, %v (answered %v), want %v, %v", resp, err, j.Answered(), tt.wantResp, tt.wantErr)
			}
		})
	}
}

// TestJobRacingAnswers has many goroutines answer one job at once: exactly
// one of them wins, and every reader sees that answer.
func TestJobRacingAnswers(t *testing.T) {
	j := NewJob("j", message.Input{}, t0, time.Time{})
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			var won bool
			if i%2 == 0 {
				won = j.Finish(&message.Response{Code: 200 + i})
			} else {
				won = j.Fail(errWorker)
			}
			if won {
				wins.Add(1)
			}
		})
	}
	wg.Wait()
	if wins.Load() != 1 {
		t.Fatalf("%d answers won, want 1", wins.Load())
	}
	r1, e1 := j.Result()
	r2, e2 := j.Wait(context.Background())
	if r1 != r2 || e1 != e2 || (r1 == nil) == (e1 == nil) {
		t.Errorf("readers disagree or the answer is half-made: %v, %v and %v, %v", r1, e1, r2, e2)
	}
}

func TestJobWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		j := NewJob("j", message.Input{}, time.Now(), time.Time{})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := j.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Wait on an unanswered job = %v, want the context's error", err)
		}
		want := &message.Response{Code: 200}
		go func() {
			time.Sleep(time.Second)
			j.Finish(want)
		}()
		start := time.Now()
		got, err := j.Wait(t.Context())
		if got != want || err != nil || time.Since(start) != time.Second {
			t.Errorf("Wait = %v, %v after %v; want the answer after 1s", got, err, time.Since(start))
		}
	})
}

func TestJobDeadline(t *testing.T) {
	tests := []struct {
		name        string
		deadline    time.Time
		set         time.Time // passed to SetDeadline unless zero
		at          time.Time
		wantHas     bool
		wantExpired bool
	}{
		{name: "none never expires", at: t0.Add(1000 * time.Hour)},
		{name: "before the deadline", deadline: t0.Add(time.Second), at: t0.Add(time.Second - 1), wantHas: true},
		{name: "at the deadline", deadline: t0.Add(time.Second), at: t0.Add(time.Second), wantHas: true, wantExpired: true},
		{name: "set on a job without one", set: t0.Add(time.Second), at: t0.Add(time.Second), wantHas: true, wantExpired: true},
		{name: "set does not move one", deadline: t0.Add(time.Hour), set: t0.Add(time.Second), at: t0.Add(time.Minute), wantHas: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := NewJob("j", message.Input{}, t0, tt.deadline)
			if !tt.set.IsZero() {
				j.SetDeadline(tt.set)
			}
			if _, has := j.Deadline(); has != tt.wantHas {
				t.Errorf("Deadline has = %v, want %v", has, tt.wantHas)
			}
			if got := j.Expired(tt.at); got != tt.wantExpired {
				t.Errorf("Expired = %v, want %v", got, tt.wantExpired)
			}
			if !j.Created().Equal(t0) {
				t.Errorf("Created = %v, want %v", j.Created(), t0)
			}
		})
	}
}

func TestJobCancel(t *testing.T) {
	t.Run("waiting", func(t *testing.T) {
		j := NewJob("j", message.Input{}, t0, time.Time{})
		ctx := j.Context()
		if j.Gone() || j.Cause() != nil || ctx.Err() != nil {
			t.Fatalf("Gone = %v, Cause = %v, context %v before the client left", j.Gone(), j.Cause(), ctx.Err())
		}
		j.Cancel(ErrClientGone)
		j.Cancel(ErrClosed) // only the first cause counts
		if !j.Gone() || j.Cause() != ErrClientGone || context.Cause(ctx) != ErrClientGone {
			t.Errorf("Gone = %v, Cause = %v, context's cause %v; want ErrClientGone", j.Gone(), j.Cause(), context.Cause(ctx))
		}
		if _, err := j.Result(); err != ErrClientGone {
			t.Errorf("answer %v, want ErrClientGone", err)
		}
	})
	t.Run("answered", func(t *testing.T) {
		j := NewJob("j", message.Input{}, t0, time.Time{})
		ok := &message.Response{Code: 200}
		j.Finish(ok)
		j.Cancel(ErrClientGone)
		if resp, err := j.Result(); resp != ok || err != nil || !j.Gone() {
			t.Errorf("answer %v, %v (gone %v); a cancel after the answer keeps it", resp, err, j.Gone())
		}
		if context.Cause(j.Context()) != ErrClientGone {
			t.Errorf("a context taken after the cancel is not done with its cause: %v", context.Cause(j.Context()))
		}
	})
}
