package worker

// Registration tests of the registry on fake workers, in virtual time:
// loading models (PENDING), failed registrations, requirements installed
// with pip, and the metrics of what happened.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/properties"
)

// TestSimLoadingQueues: a request for a model whose first worker is still
// loading (PENDING) waits in its queue and is answered once the worker is
// up, instead of being refused.
func TestSimLoadingQueues(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "lazy")
		w.set("lazy", func(s *fakeScript) { s.loadTime = 30 * time.Second })
		if _, err := r.Register(context.Background(), api.RegisterRequest{URL: "lazy"}); err != nil {
			t.Fatal(err)
		}
		settle()
		if st, list := r.status(t, "lazy"), r.List()[0].Status; st != api.StatusPending || list != api.StatusPending {
			t.Fatalf("while it loads: describe %s, list %s; want %s", st, list, api.StatusPending)
		}
		began := time.Now()
		resp, err := r.call(t, "lazy", newJob("early"))
		if err != nil || string(resp.Body) != "early" || time.Since(began) != 30*time.Second {
			t.Fatalf("the request sent while loading: %+v, %v after %v", resp, err, time.Since(began))
		}
		if st, list := r.status(t, "lazy"), r.List()[0].Status; st != api.StatusHealthy || list != api.StatusReady {
			t.Errorf("after the load: describe %s, list %s; want %s and %s", st, list, api.StatusHealthy, api.StatusReady)
		}
	})
}

// TestSimStartupLoading checks the health entry /ping reads: a model loaded
// at startup is StartupLoading until its first load ends, a model
// registered later never is.
func TestSimStartupLoading(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		boot := r.model(t, "boot")
		r.model(t, "later")
		for _, name := range []string{"boot", "later"} {
			w.set(name, func(s *fakeScript) { s.loadTime = 10 * time.Second })
		}
		if err := r.LoadStartup([]properties.ModelRef{{Name: "boot", Path: boot}}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Register(context.Background(), api.RegisterRequest{URL: "later"}); err != nil {
			t.Fatal(err)
		}
		advance(5 * time.Second)
		h := r.Health()
		if !h["boot"].StartupLoading || h["boot"].Status != api.StatusPending || h["later"].StartupLoading {
			t.Fatalf("while both load: %+v", h)
		}
		advance(5 * time.Second)
		if h := r.Health()["boot"]; h.StartupLoading || h.Status != api.StatusHealthy {
			t.Errorf("after the first load: %+v", h)
		}
	})
}

// TestSimFailedRegistrationLeavesNothing registers a model that fails to
// load, synchronously: the registry is as it was before (list and health),
// Describe says why the model is gone, and the name can be registered
// again once the model loads.
func TestSimFailedRegistrationLeavesNothing(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "healthy", "minWorkers=1", "maxWorkers=1")
		r.mustRegister(t, "healthy")
		list, health := r.List(), r.Health()
		r.model(t, "broken")
		w.set("broken", func(s *fakeScript) { s.fail = -1 })
		err := r.register(t, "broken")
		if !errors.Is(err, api.ErrModelFailed) || !strings.Contains(err.Error(), "the model does not load") {
			t.Fatalf("register = %v, want ErrModelFailed with the load's error", err)
		}
		if got := r.List(); !reflect.DeepEqual(got, list) {
			t.Errorf("List = %+v, want %+v as before", got, list)
		}
		if got := r.Health(); !reflect.DeepEqual(got, health) {
			t.Errorf("Health = %+v, want %+v as before", got, health)
		}
		_, err = r.Describe("broken")
		if !errors.Is(err, api.ErrModelNotFound) || !strings.Contains(err.Error(), "registration failed") || !strings.Contains(err.Error(), "does not load") {
			t.Errorf("Describe = %v, want not found saying why", err)
		}
		if err := r.Submit("broken", newJob("x")); !errors.Is(err, api.ErrModelNotFound) {
			t.Errorf("Submit = %v, want not found", err)
		}
		w.set("broken", func(s *fakeScript) { s.fail = 0 })
		r.mustRegister(t, "broken")
		if _, err := r.call(t, "broken", newJob("fixed")); err != nil {
			t.Fatal(err)
		}
	}, func(c *Config) { c.Server.RetryThreshold = 1 })
}

// TestSimShutdownDuringAsyncRegistration shuts the registry down while an
// asynchronous registration is still retrying: Shutdown waits for its
// goroutine, and a model removed by the shutdown is not reported as a
// failed registration.
func TestSimShutdownDuringAsyncRegistration(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "broken")
		w.set("broken", func(s *fakeScript) { s.fail = -1 })
		if _, err := r.Register(context.Background(), api.RegisterRequest{URL: "broken"}); err != nil {
			t.Fatal(err)
		}
		advance(time.Second / 2)
		if rec, err := r.Describe("broken"); err != nil || rec.LastError == "" {
			t.Fatalf("after a first failure: %+v, %v", rec, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := r.Shutdown(ctx); err != nil {
			t.Fatal(err)
		}
		if n := r.logs.FilterMessage("model registration failed; model removed").Len(); n != 0 {
			t.Errorf("%d registrations reported failed at shutdown", n)
		}
		if _, err := r.Register(context.Background(), api.RegisterRequest{URL: "broken", ModelName: "late"}); !errors.Is(err, batching.ErrClosed) {
			t.Errorf("Register after Shutdown = %v, want ErrClosed", err)
		}
	}, retryAlways)
}

// pipCall is one run of the fake pip.
type pipCall struct {
	python, dir string
	args        []string
}

// fakePip records pip's runs and installs nothing, or fails with out.
func fakePip(calls *[]pipCall, out string) func(context.Context, string, string, []string) ([]byte, error) {
	return func(_ context.Context, python, dir string, args []string) ([]byte, error) {
		*calls = append(*calls, pipCall{python, dir, args})
		if out != "" {
			return []byte(out), errors.New("exit status 1")
		}
		target := args[slices.Index(args, "--target")+1]
		return nil, os.MkdirAll(target, 0o755)
	}
}

// TestSimRequirements registers a model folder with requirements.txt and
// wheels/: pip installs them once, offline from the wheels, into a folder
// of the model's own, and that folder goes on the workers' PYTHONPATH. A
// second registration of the same folder installs nothing.
func TestSimRequirements(t *testing.T) {
	var calls []pipCall
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		dir := r.model(t, "deps", "minWorkers=1", "maxWorkers=1")
		if err := os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte("langdetect==1.0.9\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, "wheels"), 0o755); err != nil {
			t.Fatal(err)
		}
		r.mustRegister(t, "deps")
		if len(calls) != 1 {
			t.Fatalf("pip ran %d times, want once", len(calls))
		}
		c := calls[0]
		if c.python != "/fake/python3" || c.dir != dir || !slices.Contains(c.args, "--no-index") || c.args[len(c.args)-1] != filepath.Join(dir, "wheels") {
			t.Errorf("pip run %+v, want the model's interpreter, offline from its wheels", c)
		}
		target := strings.TrimSuffix(c.args[slices.Index(c.args, "--target")+1], ".tmp")
		if path := w.startsOf("deps")[0].spec.PythonPath; !slices.Contains(path, target) {
			t.Errorf("worker PYTHONPATH %v lacks the requirements folder %s", path, target)
		}
		if err := r.Unregister(context.Background(), "deps"); err != nil {
			t.Fatal(err)
		}
		r.mustRegister(t, "deps")
		if len(calls) != 1 {
			t.Errorf("pip ran again for the same requirements")
		}
	}, func(c *Config) { c.Pip = fakePip(&calls, "") })
}

// TestSimRequirementsFail: a model whose requirements do not install fails
// its registration with pip's last lines, and starts no worker.
func TestSimRequirementsFail(t *testing.T) {
	var calls []pipCall
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		dir := r.model(t, "deps")
		if err := os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte("nope==0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := r.register(t, "deps")
		if !errors.Is(err, api.ErrModelFailed) || !strings.Contains(err.Error(), "pip install -r requirements.txt failed") {
			t.Errorf("register = %v", err)
		}
		if n := len(w.startsOf("deps")); n != 0 {
			t.Errorf("%d workers started", n)
		}
	}, func(c *Config) {
		c.Pip = fakePip(&calls, "ERROR: No matching distribution found for nope==0")
	})
}

// TestSimMetrics scrapes the registry after traffic, a restart and a
// refusal: queue, batch, restart and worker series say what happened, and
// an unregistered model's series go away.
func TestSimMetrics(t *testing.T) {
	metrics := prometheus.NewRegistry()
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "m", "minWorkers=1", "maxWorkers=1", "batch_size=2", "max_batch_delay=100", "job_queue_size=3")
		r.mustRegister(t, "m")
		for range 2 {
			if _, err := r.call(t, "m", newJob("x")); err != nil {
				t.Fatal(err)
			}
		}
		w.live("m")[0].crash()
		advance(2 * time.Second)
		for range 3 {
			r.submit(t, "m", newJob("held", "action", "sleep", "seconds", "10"))
		}
		settle()
		r.submit(t, "m", newJob("a")) // the second batch on the worker: held, a
		settle()
		for _, name := range []string{"b", "c", "d"} {
			_ = r.Submit("m", newJob(name))
		}
		want := `
# HELP switchyard_worker_restarts_total Worker processes restarted after they died or timed out.
# TYPE switchyard_worker_restarts_total counter
switchyard_worker_restarts_total{model="m"} 1
# HELP switchyard_queue_depth_requests Requests waiting in the model's queue.
# TYPE switchyard_queue_depth_requests gauge
switchyard_queue_depth_requests{model="m"} 3
# HELP switchyard_requests_waiting Requests waiting in all models' queues together (for a worker or for their model's load): the host's backlog.
# TYPE switchyard_requests_waiting gauge
switchyard_requests_waiting 3
# HELP switchyard_worker_processes Worker processes by model, device and state.
# TYPE switchyard_worker_processes gauge
switchyard_worker_processes{device="cpu",model="m",state="BUSY"} 1
# HELP switchyard_worker_rss_bytes Resident memory of a worker process.
# TYPE switchyard_worker_rss_bytes gauge
switchyard_worker_rss_bytes{model="m",worker="1"} 4.4040192e+07
`
		if err := testutil.GatherAndCompare(metrics, strings.NewReader(want),
			"switchyard_worker_restarts_total", "switchyard_queue_depth_requests", "switchyard_requests_waiting", "switchyard_worker_processes", "switchyard_worker_rss_bytes"); err != nil {
			t.Error(err)
		}
		if n := testutil.CollectAndCount(metrics, "switchyard_batch_size_requests"); n != 1 {
			t.Errorf("%d batch size series, want 1", n)
		}
		if err := r.Unregister(context.Background(), "m"); err != nil {
			t.Fatal(err)
		}
		// Only the host's backlog stays, at 0.
		if n := testutil.CollectAndCount(metrics); n != 1 {
			t.Errorf("%d series left after unregister, want 1", n)
		}
		if err := testutil.GatherAndCompare(metrics, strings.NewReader(`
# HELP switchyard_requests_waiting Requests waiting in all models' queues together (for a worker or for their model's load): the host's backlog.
# TYPE switchyard_requests_waiting gauge
switchyard_requests_waiting 0
`), "switchyard_requests_waiting"); err != nil {
			t.Error(err)
		}
	}, func(c *Config) { c.Registerer = metrics })
}

// TestSimStartupInstallPending loads a startup model whose requirements.txt
// pip is still installing: LoadStartup returns at once (so the listener
// answers), the model is PENDING in /ping's view and in describe, and it
// loads once pip is done.
func TestSimStartupInstallPending(t *testing.T) {
	var calls []pipCall
	var release chan struct{} // made in the bubble, so that a pip waiting on it is durably blocked
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		dir := r.model(t, "deps", "minWorkers=1", "maxWorkers=1")
		if err := os.WriteFile(filepath.Join(dir, "requirements.txt"), []byte("transformers\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := r.LoadStartup([]properties.ModelRef{{Name: "deps", Path: dir}}); err != nil {
			t.Fatal(err)
		}
		settle()
		if h := r.Health()["deps"]; !h.StartupLoading || h.Status != api.StatusPending {
			t.Errorf("while pip runs: health %+v, want a PENDING startup model", h)
		}
		if st := r.status(t, "deps"); st != api.StatusPending || len(w.startsOf("deps")) != 0 {
			t.Errorf("while pip runs: %s with %d workers started, want PENDING and none", st, len(w.startsOf("deps")))
		}
		close(release)
		advance(time.Minute)
		if st := r.status(t, "deps"); st != api.StatusHealthy || len(calls) != 1 {
			t.Errorf("after pip: %s after %d pip runs, want Healthy after one", st, len(calls))
		}
	}, func(c *Config) {
		release = make(chan struct{})
		installed := fakePip(&calls, "")
		c.Pip = func(ctx context.Context, python, dir string, args []string) ([]byte, error) {
			<-release
			return installed(ctx, python, dir, args)
		}
	})
}
