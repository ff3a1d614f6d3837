package worker

// Rolling-batch tests of the registry on fake workers, in virtual time:
// requests go to a worker as they arrive, up to max_rolling_batch_size in
// flight, and are answered from the worker's reply reader.

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
)

// rollingSim registers a rolling-batch model with one worker that holds at
// most size requests at once.
func rollingSim(t *testing.T, r *testRegistry, name, size string) {
	t.Helper()
	r.model(t, name, "option.rolling_batch=scheduler", "option.max_rolling_batch_size="+size, "minWorkers=1", "maxWorkers=1")
	r.mustRegister(t, name)
}

// TestSimRollingInFlight sends five 2-second requests to a worker that
// holds three at once: three run together, the other two start as soon as
// slots free, and the worker is BUSY while it holds any.
func TestSimRollingInFlight(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		rollingSim(t, r, "gen", "3")
		began := time.Now()
		var jobs []*batching.Job
		for range 5 {
			jobs = append(jobs, r.submit(t, "gen", newJob("tok", "action", "sleep", "seconds", "2")))
		}
		settle()
		if ws := r.workersOf(t, "gen"); ws[0].Status != workerBusy || r.currentQueueLen(t, "gen") != 2 {
			t.Errorf("with five requests: %+v, %d queued; want BUSY with two queued", ws, r.currentQueueLen(t, "gen"))
		}
		var took []time.Duration
		for _, j := range jobs {
			if _, err := await(t, j); err != nil {
				t.Fatal(err)
			}
			took = append(took, time.Since(began))
		}
		if want := seconds(2, 2, 2, 4, 4); !slices.Equal(took, want) {
			t.Errorf("answered after %v, want %v", took, want)
		}
		settle()
		if ws := r.workersOf(t, "gen"); ws[0].Status != workerReady {
			t.Errorf("after the requests: %+v, want READY", ws)
		}
	})
}

// currentQueueLen returns how many requests wait in the model's queue.
func (r *testRegistry) currentQueueLen(t *testing.T, model string) int {
	t.Helper()
	rec, err := r.Describe(model)
	if err != nil {
		t.Fatal(err)
	}
	return rec.RequestInQueue
}

// TestSimRollingStream streams tokens to one client while another leaves
// mid-stream: the first gets every token, the second's stream ends with
// its context's error and its slot frees for the next request.
func TestSimRollingStream(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		rollingSim(t, r, "gen", "2")
		full := r.submit(t, "gen", newJob("", "tokens", "a,b,c"))
		in := message.Input{Props: []message.Prop{{Key: "tokens", Value: "x,y,z,w"}}}
		left := r.submit(t, "gen", batching.NewJob("left", in, time.Now(), time.Time{}))
		resp, err := await(t, left)
		if err != nil {
			t.Fatal(err)
		}
		if tok, err := resp.Stream.Next(context.Background()); err != nil || string(tok) != "x" {
			t.Fatalf("first token %q, %v", tok, err)
		}
		left.Cancel(batching.ErrClientGone)
		if _, err := readStream(resp.Stream); !errors.Is(err, context.Canceled) {
			t.Errorf("the stream of the client that left ended with %v, want context.Canceled", err)
		}
		next := r.submit(t, "gen", newJob("next"))
		if _, err := await(t, next); err != nil {
			t.Errorf("the request after: %v", err)
		}
		resp, err = await(t, full)
		if err != nil {
			t.Fatal(err)
		}
		if toks, err := readStream(resp.Stream); err != nil || !slices.Equal(toks, []string{"a", "b", "c"}) {
			t.Errorf("stream %q, %v", toks, err)
		}
	})
}

// readStream reads a stream to its end.
func readStream(s *message.Stream) ([]string, error) {
	var toks []string
	for {
		tok, err := s.Next(context.Background())
		if errors.Is(err, io.EOF) {
			return toks, nil
		}
		if err != nil {
			return toks, err
		}
		toks = append(toks, string(tok))
	}
}

// TestSimRollingWorkerDies crashes a rolling-batch worker that holds
// several requests: each fails at once, and a fresh worker serves on.
func TestSimRollingWorkerDies(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		rollingSim(t, r, "gen", "8")
		var held []*batching.Job
		for range 3 {
			held = append(held, r.submit(t, "gen", newJob("held", "action", "sleep", "seconds", "600")))
		}
		settle()
		old := w.live("gen")[0].pid
		if _, err := r.call(t, "gen", newJob("crash", "action", "crash")); !errors.Is(err, api.ErrWorkerDied) {
			t.Fatalf("crashing request: %s", errText(err))
		}
		settle()
		for _, j := range held {
			if !j.Answered() {
				t.Fatal("a held request is not answered at once")
			}
			if _, err := await(t, j); !errors.Is(err, api.ErrWorkerDied) {
				t.Errorf("held request: %s, want ErrWorkerDied", errText(err))
			}
		}
		resp, err := r.call(t, "gen", newJob("next"))
		if err != nil || pidOf(t, resp) == old {
			t.Fatalf("after the crash: %+v, %v (old pid %d)", resp, err, old)
		}
	}, retryAlways)
}

// TestSimRollingNotSent: a rolling-batch request whose worker dies before
// it is sent goes back to the queue and is served by the next worker.
func TestSimRollingNotSent(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		rollingSim(t, r, "gen", "4")
		old := w.live("gen")[0].pid
		w.set("gen", func(s *fakeScript) { s.lose = 1 })
		resp, err := r.call(t, "gen", newJob("lost"))
		if err != nil || pidOf(t, resp) == old {
			t.Fatalf("%+v, %v (old pid %d)", resp, err, old)
		}
	}, retryAlways)
}
