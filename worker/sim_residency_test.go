package worker

// Tests of serving more models than fit, on fake workers in virtual time:
// loading on demand, evicting the least recently used idle models for the
// budget or the loaded-model cap, pinned models, refusals, and what
// describe, /ping and the metrics show.

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/gpu/gputest"
	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/properties"
)

// onDemand sets load_on_demand with a memory budget (MiB; 0 for none) and
// a minimum residence.
func onDemand(budgetMiB int64, residence time.Duration) func(*Config) {
	return func(c *Config) {
		c.Server.LoadOnDemand, c.Server.MemoryBudgetMB, c.Server.MinResidenceTime = true, budgetMiB, residence
	}
}

// storeModels writes model folders with the given serving.properties lines
// and loads them as the server's startup models; it returns their names.
func (r *testRegistry) storeModels(t *testing.T, names []string, props ...string) {
	t.Helper()
	var refs []properties.ModelRef
	for _, name := range names {
		r.model(t, name, props...)
		refs = append(refs, properties.ModelRef{Name: name, Path: filepath.Join(r.cfg.Server.ModelStore, name)})
	}
	if err := r.LoadStartup(refs); err != nil {
		t.Fatal(err)
	}
	settle()
}

// record returns a model's describe record.
func (r *testRegistry) record(t *testing.T, model string) api.ModelRecord {
	t.Helper()
	rec, err := r.Describe(model)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

// evictions counts the model's evictions for reason in the metrics.
func (r *testRegistry) evictions(model, reason string) int {
	return int(testutil.ToFloat64(r.loads.evictions.WithLabelValues(model, reason)))
}

// evictionClock records each eviction with the test's event clock, from
// the log line the registry writes while it holds the model's lock.
type evictionClock struct {
	seq    *atomic.Int64
	mu     sync.Mutex
	events []evictionEvent
}

type evictionEvent struct {
	model string
	seq   int64
}

func (c *evictionClock) Enabled(zapcore.Level) bool        { return true }
func (c *evictionClock) With([]zapcore.Field) zapcore.Core { return c }
func (c *evictionClock) Sync() error                       { return nil }
func (c *evictionClock) Check(e zapcore.Entry, ce *zapcore.CheckedEntry) *zapcore.CheckedEntry {
	if e.Message == "model evicted" {
		return ce.AddCore(e, c)
	}
	return ce
}

func (c *evictionClock) Write(_ zapcore.Entry, fields []zapcore.Field) error {
	for _, f := range fields {
		if f.Key == "model" {
			c.mu.Lock()
			c.events = append(c.events, evictionEvent{model: f.String, seq: c.seq.Add(1)})
			c.mu.Unlock()
		}
	}
	return nil
}

func (c *evictionClock) all() []evictionEvent {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]evictionEvent(nil), c.events...)
}

// withEvictionClock logs evictions to clock as well.
func withEvictionClock(clock *evictionClock) func(*Config) {
	return func(c *Config) { c.Logger = zap.New(zapcore.NewTee(c.Logger.Core(), clock)) }
}

// sent is one request of a client of the round-robin test.
type sent struct {
	model, body string
	accepted    int64 // the event clock once Submit returned: the job was queued before
	err         error
	code        int
}

// TestSimRoundRobinOverBudget is the acceptance test of serving more
// models than fit: six models of 1 GiB each, loaded on demand with a
// budget of 2.5 GiB, and four clients sending requests round-robin over
// all six. Every request is answered 200; at no moment do more than two
// models hold workers (the fake world counts starts under way and workers
// alive as they change); models are evicted, and counted; no model is
// evicted while a request for it is queued or in flight (a request queued
// before an eviction is answered before it); and no model ever starts
// while it holds a worker already.
func TestSimRoundRobinOverBudget(t *testing.T) {
	var seq atomic.Int64
	clock := &evictionClock{seq: &seq}
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		w.seq = &seq
		names := []string{"m0", "m1", "m2", "m3", "m4", "m5"}
		r.storeModels(t, names, "minWorkers=1", "maxWorkers=1", "required_memory_mb=1024")
		for _, name := range names {
			if rec := r.record(t, name); rec.Status != api.StatusPending || rec.Loaded || len(rec.WorkerGroups[0].Workers) != 0 {
				t.Fatalf("%s at start: %s, loaded %v, %+v; want PENDING without workers", name, rec.Status, rec.Loaded, rec.WorkerGroups)
			}
		}
		const clients, rounds = 4, 12
		results := make([][]sent, clients)
		var wg sync.WaitGroup
		for c := range clients {
			wg.Go(func() {
				for k := range rounds {
					model := names[(c+k)%len(names)]
					body := fmt.Sprintf("client %d request %d", c, k)
					j := newJob(body, "action", "sleep", "seconds", "0.5")
					s := sent{model: model, body: body}
					if s.err = r.Submit(model, j); s.err == nil {
						s.accepted = seq.Add(1)
						var resp *message.Response
						resp, s.err = j.Wait(context.Background())
						if resp != nil {
							s.code = resp.Code
						}
					}
					results[c] = append(results[c], s)
				}
			})
		}
		wg.Wait()

		for _, rs := range results {
			for _, s := range rs {
				if s.err != nil || s.code != 200 {
					t.Errorf("%s to %s: %d, %v; want 200", s.body, s.model, s.code, s.err)
				}
			}
		}
		peak, overlaps := w.watch()
		if peak > 2 {
			t.Errorf("%d models held workers at once, want at most 2 (2.5 GiB of 1 GiB models)", peak)
		}
		if len(overlaps) > 0 {
			t.Errorf("models started while they held a worker: %v", overlaps)
		}
		events := clock.all()
		total := 0
		for _, name := range names {
			total += r.evictions(name, api.EvictMemory)
		}
		if len(events) == 0 || total != len(events) {
			t.Errorf("%d evictions logged, %d counted; want some, all counted", len(events), total)
		}
		for _, e := range events {
			for _, rs := range results {
				for _, s := range rs {
					if s.model == e.model && s.accepted < e.seq && w.answered[s.body] > e.seq {
						t.Errorf("%s was evicted while %q was in its hands (queued at %d, evicted at %d, answered at %d)",
							e.model, s.body, s.accepted, e.seq, w.answered[s.body])
					}
				}
			}
		}
		t.Logf("%d requests, %d evictions, %d worker starts, %v of virtual time",
			clients*rounds, len(events), len(w.startsOf("")), time.Since(time.Unix(946684800, 0)))
	}, onDemand(2560, 100*time.Millisecond), withEvictionClock(clock))
}

// TestSimPinnedStaysUnderPressure: a pinned model loads at start and keeps
// its worker while three others take turns in the room that is left.
func TestSimPinnedStaysUnderPressure(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.storeModels(t, []string{"pin"}, "minWorkers=1", "maxWorkers=1", "required_memory_mb=1024", "pinned=true")
		r.storeModels(t, []string{"a", "b", "c"}, "minWorkers=1", "maxWorkers=1", "required_memory_mb=1024")
		advance(time.Second)
		rec := r.record(t, "pin")
		if !rec.Loaded || !rec.Pinned || rec.Status != api.StatusHealthy {
			t.Fatalf("the pinned model at start: %+v, want it loaded", rec)
		}
		pinPID := w.live("pin")[0].pid
		for k := range 9 {
			model := []string{"a", "b", "c"}[k%3]
			if _, err := r.call(t, model, newJob(model)); err != nil {
				t.Fatalf("request %d to %s: %v", k, model, err)
			}
			if _, err := r.call(t, "pin", newJob("pin")); err != nil {
				t.Fatal(err)
			}
		}
		if live := w.live("pin"); len(live) != 1 || live[0].pid != pinPID || len(w.startsOf("pin")) != 1 {
			t.Errorf("the pinned model's workers: %v, %d starts; want its first worker throughout", live, len(w.startsOf("pin")))
		}
		if n := r.evictions("pin", api.EvictMemory); n != 0 {
			t.Errorf("the pinned model was evicted %d times", n)
		}
		if n := r.evictions("a", api.EvictMemory) + r.evictions("b", api.EvictMemory) + r.evictions("c", api.EvictMemory); n < 7 {
			t.Errorf("%d evictions of the others, want one for (almost) every request", n)
		}
	}, onDemand(2560, 0))
}

// TestSimLoadOnDemand: a model of the store that loads on demand is
// PENDING and unloaded at start, does not hold /ping back, loads for its
// first request (which waits the load time), and then shows as loaded,
// with its last use; the load is counted and timed.
func TestSimLoadOnDemand(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		w.set("lazy", func(s *fakeScript) { s.loadTime = 3 * time.Second })
		r.storeModels(t, []string{"lazy"})
		h := r.Health()["lazy"]
		if h.Status != api.StatusPending || !h.OnDemand || h.StartupLoading {
			t.Errorf("health at start: %+v, want PENDING, on demand, not a startup load", h)
		}
		if l := r.List()[0].Status; l != api.StatusPending {
			t.Errorf("list at start: %s", l)
		}
		if n := len(w.startsOf("lazy")); n != 0 {
			t.Fatalf("%d workers started before any request", n)
		}
		began := time.Now()
		first := r.submit(t, "lazy", newJob("first"))
		advance(time.Second)
		second := r.submit(t, "lazy", newJob("during the load"))
		if h := r.Health()["lazy"]; !h.OnDemand || h.Status != api.StatusPending {
			t.Errorf("health while it loads for a request: %+v", h)
		}
		for _, j := range []*batching.Job{first, second} {
			if _, err := await(t, j); err != nil {
				t.Fatal(err)
			}
		}
		if took := time.Since(began); took != 3*time.Second {
			t.Errorf("the first request took %v, want the load time", took)
		}
		rec := r.record(t, "lazy")
		if rec.Status != api.StatusHealthy || !rec.Loaded || rec.Pinned || !rec.LastUsed.Equal(recordTime(time.Now())) {
			t.Errorf("after the load: %+v", rec)
		}
		if n := testutil.ToFloat64(r.loads.loads.WithLabelValues("lazy")); n != 1 {
			t.Errorf("%v loads counted, want 1", n)
		}
		if n := testutil.CollectAndCount(r.loads.loadTime); n != 1 {
			t.Errorf("%d load time series, want 1", n)
		}
	}, onDemand(0, 0))
}

// TestSimEvictionWaitsForWork: a model with a request in flight and one
// queued is not evicted: the model that needs its room waits until both
// are answered, then evicts it and loads.
func TestSimEvictionWaitsForWork(t *testing.T) {
	var seq atomic.Int64
	clock := &evictionClock{seq: &seq}
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		w.seq = &seq
		r.storeModels(t, []string{"busy", "next"}, "minWorkers=1", "maxWorkers=1", "required_memory_mb=1000")
		long := r.submit(t, "busy", newJob("long", "action", "sleep", "seconds", "10"))
		queued := r.submit(t, "busy", newJob("queued", "action", "sleep", "seconds", "5"))
		accepted := seq.Add(1)
		advance(time.Second)
		waiting := r.submit(t, "next", newJob("waits"))
		advance(13 * time.Second)
		if len(w.live("busy")) != 1 || len(w.startsOf("next")) != 0 || waiting.Answered() {
			t.Fatalf("14 s in: busy has %d workers, next started %d; want busy kept while it has work", len(w.live("busy")), len(w.startsOf("next")))
		}
		if st := r.status(t, "next"); st != api.StatusPending {
			t.Errorf("the model waiting for room: %s", st)
		}
		for _, j := range []*batching.Job{long, queued, waiting} {
			if _, err := await(t, j); err != nil {
				t.Fatal(err)
			}
		}
		events := clock.all()
		if len(events) != 1 || events[0].seq < w.answered["queued"] || events[0].seq < accepted {
			t.Errorf("evictions %+v; want one of busy after its last request was answered (at %d)", events, w.answered["queued"])
		}
		rec := r.record(t, "busy")
		if rec.Loaded || rec.Status != api.StatusPending || rec.LastUnload == nil || rec.LastUnload.Reason != api.UnloadEvicted ||
			rec.LastUnload.ForModel != "next" || rec.LastUnload.Cause != api.EvictMemory {
			t.Errorf("the evicted model: %+v, %+v", rec, rec.LastUnload)
		}
		if e := r.logs.FilterMessage("model evicted").All(); len(e) != 1 || e[0].ContextMap()["for"] != "next" {
			t.Errorf("eviction log: %+v", e)
		}
	}, onDemand(1500, 0), withEvictionClock(clock))
}

// TestSimEvictionSparesHeldWork: work a model holds without a busy worker
// keeps it too: a request in a batch being filled (max_batch_delay), and
// one queued while the model's only worker waits to restart. The model is
// evicted once that request is answered, not before.
func TestSimEvictionSparesHeldWork(t *testing.T) {
	cases := []struct {
		name  string
		props []string
		setup func(w *fakeWorld)
	}{
		{"a batch being filled", []string{"batch_size=4", "max_batch_delay=5000"}, func(*fakeWorld) {}},
		{"a request waiting for a restart", nil, func(w *fakeWorld) { w.live("held")[0].crash(); settle() }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var seq atomic.Int64
			clock := &evictionClock{seq: &seq}
			simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
				w.seq = &seq
				r.storeModels(t, []string{"held"}, append([]string{"minWorkers=1", "maxWorkers=1", "required_memory_mb=1000"}, c.props...)...)
				r.storeModels(t, []string{"next"}, "minWorkers=1", "maxWorkers=1", "required_memory_mb=1000")
				if _, err := r.call(t, "held", newJob("load")); err != nil {
					t.Fatal(err)
				}
				c.setup(w)
				held := r.submit(t, "held", newJob("held"))
				accepted := seq.Add(1)
				settle()
				next := r.submit(t, "next", newJob("next"))
				for _, j := range []*batching.Job{held, next} {
					if _, err := await(t, j); err != nil {
						t.Fatal(err)
					}
				}
				events := clock.all()
				if len(events) != 1 || events[0].model != "held" {
					t.Fatalf("evictions %+v, want held's", events)
				}
				if e := events[0].seq; accepted < e && w.answered["held"] > e {
					t.Errorf("held was evicted (at %d) while its request was in its hands (queued at %d, answered at %d)",
						e, accepted, w.answered["held"])
				}
			}, onDemand(1500, 0), withEvictionClock(clock))
		})
	}
}

// TestSimMinResidence: a model that has just loaded is not evicted for
// min_residence_time, even when idle: the model that needs the room waits
// out the rest of it.
func TestSimMinResidence(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.storeModels(t, []string{"a", "b"}, "minWorkers=1", "maxWorkers=1", "required_memory_mb=1000")
		if _, err := r.call(t, "a", newJob("a")); err != nil {
			t.Fatal(err)
		}
		loaded := w.live("a")[0].started
		began := time.Now()
		if _, err := r.call(t, "b", newJob("b")); err != nil {
			t.Fatal(err)
		}
		if want := loaded.Add(10 * time.Second).Add(fakeLoadTime); !time.Now().Equal(want) {
			t.Errorf("b answered %v after a loaded, want the residence (10 s) and b's load", time.Since(loaded))
		}
		t.Logf("b waited %v", time.Since(began))
	}, onDemand(1500, 10*time.Second))
}

// TestSimNoRoomRefuses: when the room is held by pinned models, a load on
// demand is refused with 507 naming them; the model stays registered and
// unloaded, and /ping is not troubled.
func TestSimNoRoomRefuses(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.storeModels(t, []string{"big"}, "minWorkers=1", "maxWorkers=1", "required_memory_mb=2000", "pinned=true")
		r.storeModels(t, []string{"small"}, "minWorkers=1", "maxWorkers=1", "required_memory_mb=1000")
		advance(time.Second)
		_, err := r.call(t, "small", newJob("x"))
		if !errors.Is(err, api.ErrInsufficientMemory) || !strings.Contains(err.Error(), "big (2000 MiB, pinned)") {
			t.Fatalf("request to a model that cannot fit: %v, want 507 naming big", err)
		}
		if h := r.Health()["small"]; h.Status != api.StatusPending || !h.OnDemand {
			t.Errorf("after the refusal: %+v, want unloaded", h)
		}
		if rec := r.record(t, "small"); !strings.Contains(rec.LastError, "does not fit") {
			t.Errorf("lastError %q", rec.LastError)
		}
		if n := len(w.startsOf("small")); n != 0 {
			t.Errorf("%d workers started", n)
		}
	}, onDemand(2500, 0))
}

// TestSimLoadFailureAnswers: a load on demand that fails answers the
// requests that waited for it with its error.
func TestSimLoadFailureAnswers(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		w.set("broken", func(s *fakeScript) { s.fail = -1 })
		r.storeModels(t, []string{"broken"})
		_, err := r.call(t, "broken", newJob("x"))
		if !errors.Is(err, api.ErrModelFailed) || !strings.Contains(err.Error(), "the model does not load") {
			t.Fatalf("request = %v, want the load's error", err)
		}
	}, onDemand(0, 0), func(c *Config) { c.Server.RetryThreshold = 1 })
}

// TestSimAbandonedLoad: a load on demand whose request gave up while it
// waited for room (its deadline passed) is abandoned: nothing starts, the
// model is unloaded again, and its next request loads it.
func TestSimAbandonedLoad(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.storeModels(t, []string{"a", "b"}, "minWorkers=1", "maxWorkers=1", "required_memory_mb=1000")
		long := r.submit(t, "a", newJob("long", "action", "sleep", "seconds", "30"))
		settle()
		short := batching.NewJob("short", message.Input{}, time.Now(), time.Now().Add(5*time.Second))
		r.submit(t, "b", short)
		if _, err := await(t, short); !errors.Is(err, batching.ErrExpired) {
			t.Fatalf("a request whose deadline passes while it waits for room: %v", err)
		}
		advance(time.Second)
		if st, n := r.status(t, "b"), len(w.startsOf("b")); st != api.StatusPending || n != 0 || r.loaded("b") {
			t.Errorf("after its request went: %s, %d starts", st, n)
		}
		if _, err := await(t, long); err != nil {
			t.Fatal(err)
		}
		if _, err := r.call(t, "b", newJob("again")); err != nil {
			t.Fatal(err)
		}
	}, onDemand(1500, 0))
}

// loaded reports whether model holds a worker that serves.
func (r *testRegistry) loaded(model string) bool {
	m, err := r.lookup(model)
	return err == nil && m.loaded()
}

// TestSimLoadedModelCap: with max_loaded_models=2 and no memory limit,
// three models taking turns stay within two loaded, evicting for the cap.
func TestSimLoadedModelCap(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		names := []string{"a", "b", "c"}
		r.storeModels(t, names, "minWorkers=1", "maxWorkers=1")
		for k := range 9 {
			if _, err := r.call(t, names[k%3], newJob("x")); err != nil {
				t.Fatal(err)
			}
		}
		if peak, _ := w.watch(); peak != 2 {
			t.Errorf("%d models loaded at most, want 2", peak)
		}
		n := 0
		for _, name := range names {
			n += r.evictions(name, api.EvictLoadedModels)
		}
		if n != 7 {
			t.Errorf("%d evictions for the cap, want 7 (every request after the second)", n)
		}
		if rec := r.record(t, "b"); rec.LastUnload == nil || rec.LastUnload.Cause != api.EvictLoadedModels {
			t.Errorf("b's last unload: %+v", rec.LastUnload)
		}
	}, onDemand(0, 0), func(c *Config) { c.Server.MaxLoadedModels = 2 })
}

// TestSimReloadAfterEviction: a request that comes while its model is
// being unloaded loads it again once its workers have gone, never next to
// them.
func TestSimReloadAfterEviction(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		w.set("a", func(s *fakeScript) { s.stopTime = 2 * time.Second })
		r.storeModels(t, []string{"a", "b"}, "minWorkers=1", "maxWorkers=1", "required_memory_mb=1000")
		if _, err := r.call(t, "a", newJob("a")); err != nil {
			t.Fatal(err)
		}
		jb := r.submit(t, "b", newJob("b", "action", "sleep", "seconds", "1"))
		advance(time.Second)
		if rec := r.record(t, "a"); rec.Status != api.StatusPending || rec.Loaded || len(w.live("a")) != 1 {
			t.Fatalf("a second into its eviction: %+v, want a still leaving", rec)
		}
		ja := r.submit(t, "a", newJob("a again"))
		for _, j := range []*batching.Job{jb, ja} {
			if _, err := await(t, j); err != nil {
				t.Fatal(err)
			}
		}
		if _, overlaps := w.watch(); len(overlaps) > 0 {
			t.Errorf("started next to its own worker: %v", overlaps)
		}
		if n := len(w.startsOf("a")); n != 2 {
			t.Errorf("a started %d times, want 2", n)
		}
	}, onDemand(1500, 0))
}

// TestSimScaleFromZeroEvicts: models without a minimum wake on a request
// with a temporary worker, which waits for room like a load: two of them
// with room for one take turns.
func TestSimScaleFromZeroEvicts(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.storeModels(t, []string{"x", "y"}, "minWorkers=0", "maxWorkers=1", "required_memory_mb=1000")
		var jobs []*batching.Job
		for k := range 6 {
			jobs = append(jobs, r.submit(t, []string{"x", "y"}[k%2], newJob(fmt.Sprint(k), "action", "sleep", "seconds", "1")))
		}
		for _, j := range jobs {
			if _, err := await(t, j); err != nil {
				t.Fatal(err)
			}
		}
		if peak, _ := w.watch(); peak != 1 {
			t.Errorf("%d models loaded at most, want 1", peak)
		}
		if n := r.evictions("x", api.EvictMemory) + r.evictions("y", api.EvictMemory); n == 0 {
			t.Error("no eviction")
		}
	}, onDemand(1500, 0))
}

// TestSimScaleLoads: scaling an unloaded model loads it, also when the
// scale comes while it is being unloaded.
func TestSimScaleLoads(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		w.set("a", func(s *fakeScript) { s.stopTime = 2 * time.Second })
		r.storeModels(t, []string{"a", "b"}, "minWorkers=1", "maxWorkers=2", "required_memory_mb=1000")
		ctx := context.Background()
		if err := r.Scale(ctx, "a", api.ScaleRequest{MinWorker: ptr(1), Synchronous: true}); err != nil || !r.loaded("a") {
			t.Fatalf("scale of an unloaded model: %v, loaded %v", err, r.loaded("a"))
		}
		r.submit(t, "b", newJob("b"))
		advance(time.Second)
		if st := r.status(t, "a"); st != api.StatusPending || len(w.live("a")) != 1 {
			t.Fatalf("a second into a's eviction: %s, %d workers", st, len(w.live("a")))
		}
		if err := r.Scale(ctx, "a", api.ScaleRequest{MinWorker: ptr(1), Synchronous: true}); err != nil || !r.loaded("a") {
			t.Errorf("scale of a model being unloaded: %v, loaded %v", err, r.loaded("a"))
		}
		if _, overlaps := w.watch(); len(overlaps) > 0 {
			t.Errorf("started next to its own worker: %v", overlaps)
		}
	}, onDemand(1500, 0))
}

// TestSimIdleUnload: a model without a minimum whose last worker is
// released for want of work shows as unloaded, for being idle.
func TestSimIdleUnload(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "zero", "minWorkers=0", "maxWorkers=1", "max_idle_time=5")
		r.mustRegister(t, "zero")
		if _, err := r.call(t, "zero", newJob("x")); err != nil {
			t.Fatal(err)
		}
		if rec := r.record(t, "zero"); !rec.Loaded || rec.Pinned || rec.LastUnload != nil {
			t.Fatalf("while its worker lives: %+v", rec)
		}
		advance(5 * time.Second)
		rec := r.record(t, "zero")
		if rec.Loaded || rec.LastUnload == nil || rec.LastUnload.Reason != api.UnloadIdle || rec.Status != api.StatusHealthy {
			t.Errorf("after max_idle_time: %+v, %+v", rec, rec.LastUnload)
		}
	})
}

// TestSimRegisterEvicts: without load_on_demand, a registration that does
// not fit evicts an idle model that is not pinned (a model without a
// minimum, or with pinned=false), never a model with a minimum.
func TestSimRegisterEvicts(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "kept", "minWorkers=1", "maxWorkers=1", "required_memory_mb=1000")
		r.model(t, "loose", "minWorkers=1", "maxWorkers=1", "required_memory_mb=1000", "pinned=false")
		r.model(t, "new", "minWorkers=1", "maxWorkers=1", "required_memory_mb=1000")
		r.mustRegister(t, "kept")
		r.mustRegister(t, "loose")
		if rec := r.record(t, "kept"); !rec.Pinned {
			t.Errorf("a model with a minimum and no load_on_demand is not pinned: %+v", rec)
		}
		r.mustRegister(t, "new")
		if !r.loaded("kept") || r.loaded("loose") || !r.loaded("new") {
			t.Errorf("after the registration: kept %v, loose %v, new %v", r.loaded("kept"), r.loaded("loose"), r.loaded("new"))
		}
		r.model(t, "more", "minWorkers=1", "maxWorkers=1", "required_memory_mb=1000")
		err := r.register(t, "more")
		if !errors.Is(err, api.ErrInsufficientMemory) || !strings.Contains(err.Error(), "kept (1000 MiB, pinned)") {
			t.Errorf("registering with every loaded model pinned = %v, want 507 naming them", err)
		}
	}, func(c *Config) { c.Server.MemoryBudgetMB = 2500 })
}

// TestSimGPUEviction: on one GPU of 30000 MiB free, models that take
// 12000 MiB each while loaded (NVML's free memory goes down as they load
// and back as they exit) take turns two at a time: the third evicts the
// least recently used of the other two, for memory.
func TestSimGPUEviction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lib := gputest.New(30000)
		r := gpuRegistry(t, lib, onDemand(0, 0))
		w := r.world
		names := []string{"a", "b", "c"}
		for _, name := range names {
			w.set(name, func(s *fakeScript) {
				s.onLoad = func() { lib.AddFree(0, -12000) }
				s.onExit = func() { lib.AddFree(0, 12000) }
			})
		}
		r.storeModels(t, names, "gpu.minWorkers=1", "gpu.maxWorkers=1", "gpu.required_memory_mb=12000")
		for k := range 7 {
			if _, err := r.call(t, names[k%3], newJob("x")); err != nil {
				t.Fatalf("request %d: %v", k, err)
			}
		}
		if peak, overlaps := w.watch(); peak != 2 || len(overlaps) > 0 {
			t.Errorf("%d models on the GPU at most (want 2), overlaps %v", peak, overlaps)
		}
		if n := r.evictions("a", api.EvictMemory) + r.evictions("b", api.EvictMemory) + r.evictions("c", api.EvictMemory); n != 5 {
			t.Errorf("%d evictions, want 5", n)
		}
		if rec := r.record(t, "b"); rec.LastUnload == nil || rec.LastUnload.ForModel != "a" {
			t.Errorf("b's last unload: %+v, want evicted for a", rec.LastUnload)
		}
	})
}

// TestSimHostMemoryEviction: without a budget, the host's available
// memory (which follows a container's cgroup limit) decides: it drops by
// 1000 MiB for each live worker, from 2400 with 500 reserved, so one model
// of 1000 MiB fits and the other evicts it.
func TestSimHostMemoryEviction(t *testing.T) {
	var world atomic.Pointer[fakeWorld]
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		world.Store(w)
		r.storeModels(t, []string{"a", "b"}, "minWorkers=1", "maxWorkers=1", "required_memory_mb=1000")
		for k := range 4 {
			if _, err := r.call(t, []string{"a", "b"}[k%2], newJob("x")); err != nil {
				t.Fatalf("request %d: %v", k, err)
			}
		}
		if peak, _ := w.watch(); peak != 1 {
			t.Errorf("%d models loaded at most, want 1", peak)
		}
		if n := r.evictions("a", api.EvictMemory) + r.evictions("b", api.EvictMemory); n != 3 {
			t.Errorf("%d evictions, want 3", n)
		}
	}, onDemand(0, 0), func(c *Config) {
		c.HostMemory = func() (uint64, uint64, error) {
			live := 0
			if w := world.Load(); w != nil {
				live = len(w.live("a")) + len(w.live("b"))
			}
			return 64000, uint64(2400 - 1000*live), nil
		}
	})
}

// TestSimUnregisteredDescribe: describing a model that was unregistered
// says so.
func TestSimUnregisteredDescribe(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "gone", "minWorkers=1")
		r.mustRegister(t, "gone")
		if err := r.Unregister(context.Background(), "gone"); err != nil {
			t.Fatal(err)
		}
		_, err := r.Describe("gone")
		if !errors.Is(err, api.ErrModelNotFound) || !strings.Contains(err.Error(), "it was unregistered at") {
			t.Errorf("describe = %v", err)
		}
	})
}
