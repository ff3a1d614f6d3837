package worker

import (
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/internal/testutil"
	"github.com/switchyard/switchyard/properties"
)

// deathCase is a way for a model's only worker to die: the request it
// holds, if any (its actions are the probe model's and the fake's), and
// whether it is killed from outside.
type deathCase struct {
	name string
	job  *batching.Job // the request the worker holds, if any
	kill bool          // SIGKILL the worker
	want string        // in the held request's error
}

func deathCases() []deathCase {
	return []deathCase{
		{"exits", newJob("doomed", "action", "crash"), false, "exit status 3"},
		{"SIGKILL busy", newJob("doomed", "action", "sleep", "seconds", "600"), true, "signal: killed"},
		{"SIGKILL idle", nil, true, ""},
	}
}

// TestRegistryWorkerDies kills the only worker of a model: from inside
// while it holds a request (exit status 3), with SIGKILL while it holds one,
// and with SIGKILL while it is idle. A request it held fails at once with a
// message naming how the process ended, and a fresh worker takes the next
// request.
func TestRegistryWorkerDies(t *testing.T) {
	r := newTestRegistry(t)
	r.probe(t, "fragile", []string{"minWorkers=1", "maxWorkers=1"})
	r.mustRegister(t, "fragile")
	for _, tt := range deathCases() {
		t.Run(tt.name, func(t *testing.T) {
			testutil.WaitFor(t, waitLimit, "worker ready", func() bool { return count(r.workersOf(t, "fragile"), workerReady, nil) == 1 })
			before := r.workersOf(t, "fragile")[0].PID
			if tt.job != nil {
				r.submit(t, "fragile", tt.job)
				testutil.WaitFor(t, waitLimit, "worker busy or gone", func() bool { return count(r.workersOf(t, "fragile"), workerReady, nil) == 0 })
			}
			if tt.kill {
				if err := syscall.Kill(before, syscall.SIGKILL); err != nil {
					t.Fatal(err)
				}
			}
			if tt.job != nil {
				_, err := await(t, tt.job)
				if !errors.Is(err, api.ErrWorkerDied) || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("in-flight job error = %s, want ErrWorkerDied naming %q", errText(err), tt.want)
				}
			}
			died := time.Now()
			testutil.WaitFor(t, waitLimit, "the registry saw the death", func() bool {
				ws := r.workersOf(t, "fragile")
				return len(ws) == 0 || ws[0].PID != before
			})
			if !testutil.ProcessGone(before) {
				t.Errorf("worker %d still runs", before)
			}
			resp, err := r.call(t, "fragile", newJob("next"))
			if err != nil {
				t.Fatalf("request after the death: %v", err)
			}
			t.Logf("worker %d died; pid %d answered %v later", before, pidOf(t, resp), time.Since(died).Round(time.Millisecond))
			if pidOf(t, resp) == before {
				t.Errorf("the dead worker %d answered", before)
			}
			if st := r.status(t, "fragile"); st != api.StatusHealthy {
				t.Errorf("status after the restart = %s", st)
			}
		})
	}
}

// TestRegistryFailedAfterRetries loads a model whose model.py raises at
// import next to a healthy one, as a model of the server's configuration:
// the broken one is FAILED after retry_threshold starts, with the
// traceback in its record, and the healthy one keeps serving.
func TestRegistryFailedAfterRetries(t *testing.T) {
	r := newTestRegistry(t, func(s *properties.Server) { s.RetryThreshold = 2 })
	r.probe(t, "healthy", nil)
	r.mustRegister(t, "healthy")
	r.probe(t, "broken", nil, "BROKEN")
	began := time.Now()
	r.loadStartup(t, "broken")
	t.Logf("FAILED after %v", time.Since(began).Round(time.Millisecond))
	if n := r.started("broken"); n != 2 {
		t.Errorf("%d starts, want retry_threshold = 2", n)
	}
	rec, _ := r.Describe("broken")
	const last = "RuntimeError: probe: the BROKEN marker is present"
	if rec.Status != api.StatusFailed || !strings.Contains(rec.LastError, last) || !strings.Contains(rec.LastError, "Traceback") {
		t.Errorf("record status %s, lastError:\n%s", rec.Status, rec.LastError)
	}
	h := r.Health()
	if h["broken"].Status != api.StatusFailed || h["broken"].Error == "" || h["healthy"] != (api.ModelHealth{Status: api.StatusHealthy}) {
		t.Errorf("Health = %+v", h)
	}
	if err := r.Submit("broken", newJob("x")); !errors.Is(err, api.ErrModelFailed) {
		t.Errorf("Submit to a FAILED model = %v", err)
	}
	if _, err := r.call(t, "healthy", newJob("still here")); err != nil {
		t.Errorf("the healthy model: %v", err)
	}
	testutil.WaitFor(t, waitLimit, "no worker left", func() bool { return len(r.workersOf(t, "broken")) == 0 })
	logged := r.logs.FilterMessageSnippet("model FAILED").All()
	if len(logged) != 1 || logged[0].ContextMap()["model"] != "broken" || !strings.Contains(fmt.Sprint(logged[0].ContextMap()["error"]), "BROKEN") {
		t.Errorf("the FAILED model is logged as %+v", logged)
	}
}
