package worker

// Lifecycle tests of the registry on fake workers, in virtual time:
// restart backoff, retry_threshold and FAILED, deaths, predict timeouts.

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/properties"
)

// retryAlways keeps a model from becoming FAILED however often it fails.
func retryAlways(c *Config) { c.Server.RetryThreshold = 1000 }

// TestSimRestartBackoff kills a model's only worker, then lets its next
// eight starts fail: the restarts come 1 s after the death, then 2, 4, 8,
// 16, 32 s after each failure, and 60 s from then on. A worker that ran
// less than a minute keeps the delay; one that ran a healthy minute
// resets it to 1 s.
func TestSimRestartBackoff(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "flaky", "minWorkers=1", "maxWorkers=1")
		r.mustRegister(t, "flaky")
		w.set("flaky", func(s *fakeScript) { s.fail, s.loadTime = 8, -1 })
		died := time.Now()
		w.live("flaky")[0].crash()
		advance(time.Second / 2)
		if ws := r.workersOf(t, "flaky"); len(ws) != 1 || ws[0].Status != workerBackoff {
			t.Errorf("half a second after the death: %+v, want one worker in BACKOFF", ws)
		}
		if st := r.status(t, "flaky"); st != api.StatusUnhealthy {
			t.Errorf("status while the worker backs off = %s, want Unhealthy", st)
		}
		advance(244 * time.Second)
		starts := startTimes(w.startsOf("flaky")[1:])
		want := []time.Duration{1, 3, 7, 15, 31, 63, 123, 183, 243}
		if got := since(died, starts...); !slices.Equal(got, seconds(want...)) {
			t.Fatalf("restarts at %v after the death, want %v", got, seconds(want...))
		}
		if st := r.status(t, "flaky"); st != api.StatusHealthy {
			t.Errorf("after the ninth start: %s", st)
		}

		advance(10 * time.Second) // a short run: the delay stays at 60 s
		died = time.Now()
		w.live("flaky")[0].crash()
		advance(2 * time.Minute) // restarted after 60 s, it has run a healthy minute
		w.live("flaky")[0].crash()
		advance(10 * time.Second)
		starts = startTimes(w.startsOf("flaky")[10:])
		if got := since(died, starts...); !slices.Equal(got, seconds(60, 121)) {
			t.Errorf("restarts at %v after the short run's death, want 60 s, then 1 s after the healthy minute", got)
		}
	}, retryAlways)
}

// seconds turns whole seconds into durations.
func seconds(n ...time.Duration) []time.Duration {
	out := make([]time.Duration, len(n))
	for i, s := range n {
		out[i] = s * time.Second
	}
	return out
}

// TestSimFailedAfterRetries loads a model whose handler raises at import,
// as a model of the server's configuration, next to a healthy one: it is
// FAILED after retry_threshold starts, with the traceback in its record;
// requests to it are refused, the healthy one serves on.
func TestSimFailedAfterRetries(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "healthy")
		r.mustRegister(t, "healthy")
		dir := r.model(t, "broken")
		w.set("broken", func(s *fakeScript) { s.fail = -1 })
		began := time.Now()
		if err := r.LoadStartup([]properties.ModelRef{{Name: "broken", Path: dir}}); err != nil {
			t.Fatal(err)
		}
		if h := r.Health()["broken"]; !h.StartupLoading || h.Status != api.StatusPending {
			t.Errorf("while it loads: %+v", h)
		}
		advance(time.Minute)
		starts := w.startsOf("broken")
		if got := since(began, startTimes(starts)...); !slices.Equal(got, []time.Duration{0, fakeLoadTime + time.Second}) {
			t.Errorf("starts at %v, want two (retry_threshold), the second 1 s after the first failed", got)
		}
		rec, _ := r.Describe("broken")
		const last = "RuntimeError: fake: the model does not load"
		if rec.Status != api.StatusFailed || !strings.Contains(rec.LastError, last) || !strings.Contains(rec.LastError, "Traceback") {
			t.Errorf("record status %s, lastError:\n%s", rec.Status, rec.LastError)
		}
		h := r.Health()
		if h["broken"].Status != api.StatusFailed || h["broken"].StartupLoading || !strings.Contains(h["broken"].Error, last) {
			t.Errorf("Health = %+v", h)
		}
		if err := r.Submit("broken", newJob("x")); !errors.Is(err, api.ErrModelFailed) {
			t.Errorf("Submit to a FAILED model = %v", err)
		}
		if _, err := r.call(t, "healthy", newJob("still here")); err != nil {
			t.Errorf("the healthy model: %v", err)
		}
		if logged := r.logs.FilterMessageSnippet("model FAILED").All(); len(logged) != 1 || logged[0].ContextMap()["model"] != "broken" {
			t.Errorf("the FAILED model is logged as %+v", logged)
		}
	}, func(c *Config) { c.Server.RetryThreshold = 2 })
}

// TestSimFailedRecovers brings a FAILED model back once it loads again:
// by scaling it, and by registering it again.
func TestSimFailedRecovers(t *testing.T) {
	for _, how := range []string{"scale", "register"} {
		t.Run(how, func(t *testing.T) {
			simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
				dir := r.model(t, "m")
				w.set("m", func(s *fakeScript) { s.fail = -1 })
				if err := r.LoadStartup([]properties.ModelRef{{Name: "m", Path: dir}}); err != nil {
					t.Fatal(err)
				}
				advance(time.Minute)
				if st := r.status(t, "m"); st != api.StatusFailed {
					t.Fatalf("status %s, want FAILED", st)
				}
				queued := r.Submit("m", newJob("early"))
				w.set("m", func(s *fakeScript) { s.fail = 0 })
				var err error
				if how == "scale" {
					err = r.Scale(context.Background(), "m", api.ScaleRequest{MinWorker: ptr(1), Synchronous: true})
				} else {
					err = r.register(t, "m")
				}
				if err != nil {
					t.Fatal(err)
				}
				rec, _ := r.Describe("m")
				if rec.Status != api.StatusHealthy || rec.LastError != "" || queued == nil {
					t.Errorf("after %s: status %s, lastError %q, the submit while FAILED: %v", how, rec.Status, rec.LastError, queued)
				}
				if _, err := r.call(t, "m", newJob("back")); err != nil {
					t.Error(err)
				}
			}, func(c *Config) { c.Server.RetryThreshold = 1 })
		})
	}
}

// TestSimAsyncRegistrationDropped registers a model that never loads,
// asynchronously: describe shows the load's error between the retries, and
// after the last one the model is gone, Describe saying why.
func TestSimAsyncRegistrationDropped(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "broken")
		w.set("broken", func(s *fakeScript) { s.fail = -1 })
		rec, err := r.Register(context.Background(), api.RegisterRequest{URL: "broken"})
		if err != nil || rec.Status != api.StatusPending {
			t.Fatalf("Register = %+v, %v; want a loading model", rec, err)
		}
		advance(time.Second / 2) // the first start failed; the second waits its backoff
		rec, err = r.Describe("broken")
		if err != nil || rec.Status != api.StatusPending || !strings.Contains(rec.LastError, "the model does not load") {
			t.Errorf("between the retries: %+v, %v", rec, err)
		}
		advance(time.Minute)
		_, err = r.Describe("broken")
		if !errors.Is(err, api.ErrModelNotFound) || !strings.Contains(err.Error(), "registration failed") {
			t.Errorf("Describe = %v, want not found saying why", err)
		}
		if n := len(w.startsOf("broken")); n != 2 {
			t.Errorf("%d starts, want retry_threshold = 2", n)
		}
		if names := r.Names(); len(names) != 0 {
			t.Errorf("registered: %v", names)
		}
	}, func(c *Config) { c.Server.RetryThreshold = 2 })
}

// TestSimWorkerDies kills a model's only worker while it holds a request
// (exit status 3 from inside, or SIGKILL) and while it is idle: the request
// it held fails at once naming how the process ended, and a fresh worker
// takes the next request after the 1 s backoff.
func TestSimWorkerDies(t *testing.T) {
	for _, tt := range deathCases() {
		t.Run(tt.name, func(t *testing.T) {
			simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
				r.model(t, "fragile", "minWorkers=1", "maxWorkers=1")
				r.mustRegister(t, "fragile")
				before := w.live("fragile")[0]
				if tt.job != nil {
					r.submit(t, "fragile", tt.job)
					settle()
				}
				if tt.kill {
					before.crash()
				}
				died := time.Now()
				if tt.job != nil {
					_, err := await(t, tt.job)
					if !errors.Is(err, api.ErrWorkerDied) || !strings.Contains(err.Error(), tt.want) || time.Since(died) != 0 {
						t.Fatalf("held job: %s after %v, want ErrWorkerDied naming %q at once", errText(err), time.Since(died), tt.want)
					}
				}
				resp, err := r.call(t, "fragile", newJob("next"))
				if err != nil {
					t.Fatalf("request after the death: %v", err)
				}
				if took := time.Since(died); pidOf(t, resp) == before.pid || took != time.Second+fakeLoadTime {
					t.Errorf("answered by %d after %v; want a fresh worker after the 1 s backoff and its load", pidOf(t, resp), took)
				}
				if st := r.status(t, "fragile"); st != api.StatusHealthy {
					t.Errorf("status after the restart = %s", st)
				}
			})
		})
	}
}

// TestSimNotSentRequeued: a worker that dies before a batch reaches it
// leaves the batch to the next worker instead of failing it.
func TestSimNotSentRequeued(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "m", "minWorkers=1", "maxWorkers=1")
		r.mustRegister(t, "m")
		first := w.live("m")[0].pid
		w.set("m", func(s *fakeScript) { s.lose = 1 })
		resp, err := r.call(t, "m", newJob("lost"))
		if err != nil {
			t.Fatalf("a request its worker never got: %v", err)
		}
		if pidOf(t, resp) == first {
			t.Errorf("answered by the dead worker %d", first)
		}
	}, retryAlways)
}

// TestSimPredictTimeout sends requests that never get an answer: an
// untracked one fails with ErrPredictTimeout exactly at
// option.predict_timeout and its worker is replaced at once (no backoff);
// a tracked one fails the same way and its worker serves on.
func TestSimPredictTimeout(t *testing.T) {
	for _, rolling := range []string{"disable", "scheduler"} {
		t.Run(rolling, func(t *testing.T) {
			simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
				r.model(t, "slow", "option.predict_timeout=3", "option.rolling_batch="+rolling, "minWorkers=1", "maxWorkers=1")
				r.mustRegister(t, "slow")
				old := w.live("slow")[0].pid
				began := time.Now()
				_, err := r.call(t, "slow", newJob("stuck", "action", "hang"))
				if !errors.Is(err, api.ErrPredictTimeout) || time.Since(began) != 3*time.Second {
					t.Fatalf("error = %s after %v, want ErrPredictTimeout after 3s", errText(err), time.Since(began))
				}
				settle()
				resp, err := r.call(t, "slow", newJob("fresh"))
				if err != nil {
					t.Fatal(err)
				}
				replaced := pidOf(t, resp) != old
				if replaced != (rolling == "disable") {
					t.Errorf("worker replaced: %v; want it replaced only when it held an untracked request", replaced)
				}
				if rolling == "disable" && time.Since(began) != 3*time.Second+fakeLoadTime {
					t.Errorf("the replacement answered %v after the request, want at once after its load", time.Since(began))
				}
				if st := r.status(t, "slow"); st != api.StatusHealthy {
					t.Errorf("status = %s", st)
				}
			})
		})
	}
}

// TestSimQueueDeadline queues a job with a short deadline behind a busy
// worker (one batch running, the next held behind it): it expires in the
// queue and never reaches the worker.
func TestSimQueueDeadline(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "busy", "minWorkers=1", "maxWorkers=1")
		r.mustRegister(t, "busy")
		long := r.submit(t, "busy", newJob("long", "action", "sleep", "seconds", "3"))
		held := r.submit(t, "busy", newJob("held"))
		settle()
		in := message.Input{Content: []message.Item{{Key: "data", Value: []byte("late")}}}
		late := batching.NewJob("late", in, time.Now(), time.Now().Add(200*time.Millisecond))
		if _, err := r.call(t, "busy", late); !errors.Is(err, batching.ErrExpired) {
			t.Fatalf("late job error = %s, want ErrExpired", errText(err))
		}
		if long.Answered() {
			t.Fatal("the long job ended before the late one expired")
		}
		for _, j := range []*batching.Job{long, held} {
			if _, err := await(t, j); err != nil {
				t.Fatal(err)
			}
		}
		if n := w.live("busy")[0].servedCount(); n != 2 {
			t.Errorf("the worker served %d requests, want 2", n)
		}
	})
}
