package batching

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

var errWorker = errors.New("worker died")

func TestJobAnswersOnce(t *testing.T) {
	ok := &Response{Code: 200, Body: []byte("first")}
	later := &Response{Code: 500}
	tests := []struct {
		name     string
		answer   func(j *Job) []bool // each call's report, in order
		wantWins []bool
		wantResp *Response
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
			j := NewJob("j", Input{}, t0, time.Time{})
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
	j := NewJob("j", Input{}, t0, time.Time{})
	var wins atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			var won bool
			if i%2 == 0 {
				won = j.Finish(&Response{Code: 200 + i})
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
		j := NewJob("j", Input{}, time.Now(), time.Time{})
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := j.Wait(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Wait on an unanswered job = %v, want the context's error", err)
		}
		want := &Response{Code: 200}
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
			j := NewJob("j", Input{}, t0, tt.deadline)
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
		j := NewJob("j", Input{}, t0, time.Time{})
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
		j := NewJob("j", Input{}, t0, time.Time{})
		ok := &Response{Code: 200}
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

// readAll reads a stream to its end and returns its chunks and end error.
func readAll(ctx context.Context, s *Stream) ([]string, error) {
	var got []string
	for {
		c, err := s.Next(ctx)
		if err != nil {
			return got, err
		}
		got = append(got, string(c))
	}
}

func TestStream(t *testing.T) {
	errCut := errors.New("cut")
	tests := []struct {
		name    string
		feed    func(s *Stream)
		want    []string
		wantErr error
	}{
		{
			name: "chunks in order, clean end",
			feed: func(s *Stream) {
				s.Push([]byte("a"))
				s.Push([]byte("b"))
				s.Push([]byte("c"))
				s.Close(nil)
			},
			want: []string{"a", "b", "c"}, wantErr: io.EOF,
		},
		{
			name: "chunks before an error are still read",
			feed: func(s *Stream) {
				s.Push([]byte("a"))
				s.Close(errCut)
			},
			want: []string{"a"}, wantErr: errCut,
		},
		{
			name: "pushes after close are dropped",
			feed: func(s *Stream) {
				s.Push([]byte("a"))
				s.Close(nil)
				s.Push([]byte("late"))
			},
			want: []string{"a"}, wantErr: io.EOF,
		},
		{
			name: "only the first close counts",
			feed: func(s *Stream) {
				s.Close(errCut)
				s.Close(nil)
			},
			wantErr: errCut,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStream()
			tt.feed(s)
			got, err := readAll(context.Background(), s)
			if !slices.Equal(got, tt.want) || err != tt.wantErr {
				t.Errorf("read %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
			if _, again := s.Next(context.Background()); again != tt.wantErr {
				t.Errorf("Next after the end = %v, want %v again", again, tt.wantErr)
			}
		})
	}
}

// TestStreamConcurrent feeds a stream from one goroutine while another
// reads: the reader sees every chunk, in order, then the end.
func TestStreamConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStream()
		var want []string
		for i := range 50 {
			want = append(want, string(rune('A'+i%26)))
		}
		go func() {
			for _, c := range want {
				s.Push([]byte(c))
				time.Sleep(time.Millisecond)
			}
			s.Close(nil)
		}()
		got, err := readAll(t.Context(), s)
		if !slices.Equal(got, want) || err != io.EOF {
			t.Errorf("read %q, %v; want %q, EOF", got, err, want)
		}
	})
}

func TestStreamNextContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStream()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := s.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Next on an idle stream = %v, want the context's error", err)
		}
		s.Push([]byte("a"))
		if c, err := s.Next(t.Context()); string(c) != "a" || err != nil {
			t.Errorf("Next after the timeout = %q, %v; want the chunk", c, err)
		}
	})
}
