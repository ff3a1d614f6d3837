package worker

// Pipelined batches and adaptive batching on fake workers, in virtual time.

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
)

// TestSimPipelined sends a one-worker model five one-second requests at
// once: the worker holds two batches at a time, never more, and serves the
// five back to back in the order they came.
func TestSimPipelined(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "m", "minWorkers=1", "maxWorkers=1")
		r.mustRegister(t, "m")
		began := time.Now()
		var jobs []*batching.Job
		for i := range 5 {
			jobs = append(jobs, r.submit(t, "m", newJob(string(rune('a'+i)), "action", "sleep", "seconds", "1")))
		}
		var at []time.Duration
		for _, j := range jobs {
			if _, err := await(t, j); err != nil {
				t.Fatal(err)
			}
			at = append(at, time.Since(began))
		}
		if want := []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second, 5 * time.Second}; !slices.Equal(at, want) {
			t.Errorf("answered at %v, want %v", at, want)
		}
		if n := w.live("m")[0].maxHeld(); n != pipelineDepth {
			t.Errorf("the worker held at most %d batches, want %d", n, pipelineDepth)
		}
	})
}

// TestSimPipelinedFaults checks that a batch held behind one that kills
// its worker (a crash, or the predict timeout) is not lost: the worker had
// not started it, so it goes back to the queue and a fresh worker serves it
// (within its deadline, here a minute: by default a request's deadline is
// the predict timeout from its arrival, which has passed when the one
// before it times out).
func TestSimPipelinedFaults(t *testing.T) {
	tests := []struct {
		name  string
		props []string
		want  error
	}{
		{"crash", []string{"action", "crash", "seconds", "1"}, api.ErrWorkerDied},
		{"predict timeout", []string{"action", "hang"}, api.ErrPredictTimeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
				r.model(t, "m", "minWorkers=1", "maxWorkers=1", "option.predict_timeout=3")
				r.mustRegister(t, "m")
				first := w.live("m")[0]
				bad := r.submit(t, "m", newJob("bad", tt.props...))
				in := message.Input{Content: []message.Item{{Key: "data", Value: []byte("behind")}}}
				behind := r.submit(t, "m", batching.NewJob("behind", in, time.Now(), time.Now().Add(time.Minute)))
				settle()
				if n := first.maxHeld(); n != 2 {
					t.Fatalf("the worker held %d batches, want both", n)
				}
				if _, err := await(t, bad); !errors.Is(err, tt.want) {
					t.Errorf("the batch that broke the worker: %s, want %v", errText(err), tt.want)
				}
				resp, err := await(t, behind)
				if err != nil || string(resp.Body) != "behind" || pidOf(t, resp) == first.pid {
					t.Fatalf("the batch behind it: %+v, %s; want it served by a fresh worker", resp, errText(err))
				}
				if n := first.servedCount(); n != 0 {
					t.Errorf("the broken worker served %d requests", n)
				}
			})
		})
	}
}

// TestSimAdaptiveBatching compares a batch-8 model with and without
// adaptive_batching. Without it a lone request waits out max_batch_delay,
// and so does the last, lone batch of a burst. With it a lone request
// that finds the worker idle leaves at once, sent from the submitting
// goroutine, and so does the first of a burst; the rest fill batches of 8
// while the worker is busy.
func TestSimAdaptiveBatching(t *testing.T) {
	tests := []struct {
		name     string
		adaptive bool
		alone    time.Duration // how long the lone request takes
		batches  []fakeBatch   // what the worker is given: the lone request, then a burst of 17
	}{
		{"delay", false, 100 * time.Millisecond, []fakeBatch{{1, false}, {8, false}, {8, false}, {1, false}}},
		{"adaptive", true, 0, []fakeBatch{{1, true}, {1, true}, {8, false}, {8, false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
				props := []string{"minWorkers=1", "maxWorkers=1", "batch_size=8", "max_batch_delay=100"}
				if tt.adaptive {
					props = append(props, "adaptive_batching=true")
				}
				r.model(t, "b8", props...)
				r.mustRegister(t, "b8")
				settle() // the worker waits for work before the lone request comes
				began := time.Now()
				if _, err := r.call(t, "b8", newJob("alone")); err != nil {
					t.Fatal(err)
				}
				if took := time.Since(began); took != tt.alone {
					t.Errorf("a lone request took %v, want %v", took, tt.alone)
				}
				settle()
				var burst []*batching.Job
				for range 17 {
					burst = append(burst, r.submit(t, "b8", newJob("x", "action", "sleep", "seconds", "1")))
				}
				for _, j := range burst {
					if _, err := await(t, j); err != nil {
						t.Fatal(err)
					}
				}
				if got := w.live("b8")[0].given(); !slices.Equal(got, tt.batches) {
					t.Errorf("the worker was given %v, want %v", got, tt.batches)
				}
			})
		})
	}
}

// TestSimHeldJobExpires checks that a job the worker holds behind the batch
// it runs keeps its queue deadline: it is answered ErrExpired at that
// deadline, while the batch ahead still runs, and counted as expired.
func TestSimHeldJobExpires(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "m", "minWorkers=1", "maxWorkers=1")
		r.mustRegister(t, "m")
		long := r.submit(t, "m", newJob("long", "action", "sleep", "seconds", "3"))
		settle()
		in := message.Input{Content: []message.Item{{Key: "data", Value: []byte("late")}}}
		began := time.Now()
		late := r.submit(t, "m", batching.NewJob("late", in, began, began.Add(200*time.Millisecond)))
		settle()
		if n := w.live("m")[0].maxHeld(); n != 2 {
			t.Fatalf("the worker holds %d batches, want 2", n)
		}
		if _, err := await(t, late); !errors.Is(err, batching.ErrExpired) || time.Since(began) != 200*time.Millisecond {
			t.Errorf("the held job: %s after %v, want ErrExpired at its deadline (200ms)", errText(err), time.Since(began))
		}
		if long.Answered() {
			t.Error("the running batch ended first; the test proves nothing")
		}
		if _, err := await(t, long); err != nil {
			t.Fatal(err)
		}
		if st := r.queueStats(t, "m"); st.Expired != 1 {
			t.Errorf("expired = %d, want 1", st.Expired)
		}
	})
}

// queueStats returns model's queue counters.
func (r *testRegistry) queueStats(t *testing.T, model string) batching.Stats {
	t.Helper()
	m, err := r.lookup(model)
	if err != nil {
		t.Fatal(err)
	}
	return m.currentQueue().Stats()
}
