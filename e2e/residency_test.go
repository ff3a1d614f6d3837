package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
)

// readyModels returns the models GET /models lists as READY.
func readyModels(t testing.TB, s *Server) []string {
	t.Helper()
	code, body := s.Get(s.Management + "/models")
	var list api.ModelList
	if code != http.StatusOK || json.Unmarshal(body, &list) != nil {
		t.Errorf("GET /models: %d %s", code, body)
		return nil
	}
	var ready []string
	for _, m := range list.Models {
		if m.Status == api.StatusReady {
			ready = append(ready, m.ModelName)
		}
	}
	return ready
}

// TestLoadOnDemandOverBudget serves three models of the store, each
// declaring 200 MiB, with load_on_demand and a memory budget of 500 MiB:
// two fit at once. Nothing loads at start and /ping is 200. Two clients
// then send requests alternating over the three: every one is answered by
// its model, GET /models never lists more than two READY, models are
// evicted for one another, and describe says which model is loaded and why
// the others were unloaded.
func TestLoadOnDemandOverBudget(t *testing.T) {
	store := t.TempDir()
	names := []string{"ma", "mb", "mc"}
	for _, name := range names {
		probeModel(t, store, name, "minWorkers=1", "maxWorkers=1", "required_memory_mb=200")
	}
	s := StartServer(t, Options{Store: store, Config: map[string]string{
		"load_on_demand": "true", "memory_budget_mb": "500", "min_residence_time": "0",
	}})
	if code, body := s.Get(s.Inference + "/ping"); code != http.StatusOK {
		t.Fatalf("/ping with every model unloaded: %d %s", code, body)
	}
	if ready := readyModels(t, s); len(ready) != 0 {
		t.Fatalf("READY at start: %v, want none", ready)
	}
	for _, name := range names {
		if rec := s.Describe(name); rec.Status != api.StatusPending || rec.Loaded {
			t.Fatalf("%s at start: %s, loaded %v", name, rec.Status, rec.Loaded)
		}
	}

	stop := make(chan struct{})
	var most atomic.Int32
	var watched sync.WaitGroup
	watched.Go(func() { // GET /models while the traffic runs
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if n := int32(len(readyModels(t, s))); n > most.Load() {
				most.Store(n)
			}
		}
	})
	c := newClient(2)
	var mu sync.Mutex
	var replies []reply
	var clients sync.WaitGroup
	for client := range 2 {
		clients.Go(func() {
			for k := range 6 {
				model := names[(client+k)%len(names)]
				r := probeCall(c, s, model, fmt.Sprintf("c%d-%d", client, k), "")
				r.tag = model
				mu.Lock()
				replies = append(replies, r)
				mu.Unlock()
			}
		})
	}
	clients.Wait()
	close(stop)
	watched.Wait()

	for _, r := range replies {
		a, err := r.probe()
		if err != nil || a.Model != r.tag {
			t.Errorf("request to %s: %+v, %v", r.tag, a, err)
		}
	}
	if n := most.Load(); n > 2 {
		t.Errorf("GET /models listed %d models READY at once, want at most 2", n)
	}
	last := names[(1+5)%len(names)]
	if rec := s.Describe(last); !rec.Loaded || rec.Status != api.StatusHealthy || rec.LastUsed.IsZero() {
		t.Errorf("%s after its last request: %s, loaded %v, last used %v", last, rec.Status, rec.Loaded, rec.LastUsed)
	}
	evicted := 0
	for _, name := range names {
		rec := s.Describe(name)
		if u := rec.LastUnload; u != nil && u.Reason == api.UnloadEvicted && u.Cause == api.EvictMemory {
			evicted++
			if rec.Loaded && rec.Status != api.StatusHealthy || !rec.Loaded && rec.Status != api.StatusPending {
				t.Errorf("%s: status %s with loaded %v", name, rec.Status, rec.Loaded)
			}
		}
	}
	if evicted == 0 {
		t.Errorf("no model shows an eviction in describe")
	}
	_, metrics := s.Get(s.Management + "/metrics")
	for _, want := range []string{"switchyard_model_evictions_total{model=", "switchyard_model_loads_total{model=", "switchyard_model_load_seconds_bucket", "switchyard_model_loaded{model="} {
		if !strings.Contains(string(metrics), want) {
			t.Errorf("/metrics has no %s", want)
		}
	}
	t.Logf("%d evictions logged", strings.Count(s.Log(), `"model evicted"`))
	if !strings.Contains(s.Log(), `"model evicted"`) {
		t.Errorf("the log names no eviction")
	}
}
