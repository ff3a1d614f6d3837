package worker

// The direct send at c=1 on fake workers, in virtual time.

import (
	"testing"
	"time"
)

// TestSimDirectSend sends five requests one after another (c=1) to a
// one-worker model. With batch size 1, or batch size 8 and
// adaptive_batching, each finds the worker idle and the queue empty and
// is sent to the worker from the goroutine that submits it (no hand-off to
// the worker's collector), at once. With batch size 8 and no adaptive
// batching each goes through the queue and waits out max_batch_delay.
func TestSimDirectSend(t *testing.T) {
	tests := []struct {
		name   string
		props  []string
		direct bool
		took   time.Duration
	}{
		{"batch 1", []string{"batch_size=1"}, true, 0},
		{"batch 8, adaptive", []string{"batch_size=8", "max_batch_delay=100", "adaptive_batching=true"}, true, 0},
		{"batch 8", []string{"batch_size=8", "max_batch_delay=100"}, false, 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
				r.model(t, "m", append([]string{"minWorkers=1", "maxWorkers=1"}, tt.props...)...)
				r.mustRegister(t, "m")
				const n = 5
				for i := range n {
					settle() // the worker is idle again and its collector waits
					began := time.Now()
					resp, err := r.call(t, "m", newJob(string(rune('a'+i))))
					if err != nil || string(resp.Body) != string(rune('a'+i)) {
						t.Fatalf("request %d: %+v, %v", i, resp, err)
					}
					if took := time.Since(began); took != tt.took {
						t.Errorf("request %d took %v, want %v", i, took, tt.took)
					}
				}
				given := w.live("m")[0].given()
				if len(given) != n {
					t.Fatalf("the worker was given %v, want %d batches", given, n)
				}
				for i, b := range given {
					if b.size != 1 || b.direct != tt.direct {
						t.Errorf("batch %d: %+v, want one request, direct %v", i, b, tt.direct)
					}
				}
				if st := r.queueStats(t, "m"); st.Pushed != n || st.Dispatched != n {
					t.Errorf("queue stats %+v, want %d pushed and dispatched", st, n)
				}
			})
		})
	}
}
