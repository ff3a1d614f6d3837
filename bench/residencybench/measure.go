package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchyard/switchyard/bench/internal/benchserver"
)

// body is what every request sends: the langid example's input, which the
// no-op filler takes too.
const body = `{"inputs": "Bonjour tout le monde"}`

// coldResult is what the cold-start part found.
type coldResult struct {
	cold, warm []time.Duration
}

// measureCold times cold starts of the model against warm requests, on a
// server that holds one model at a time.
func measureCold(ctx context.Context, cfg config, logw io.Writer) (coldResult, error) {
	var res coldResult
	store, err := os.MkdirTemp("", "residencybench-store")
	if err != nil {
		return res, err
	}
	defer os.RemoveAll(store)
	if err := copyModel(cfg.model, store, "model", "minWorkers=1", "maxWorkers=1"); err != nil {
		return res, err
	}
	if err := copyModel(cfg.filler, store, "filler", "minWorkers=1", "maxWorkers=1"); err != nil {
		return res, err
	}
	s, err := startServer(ctx, cfg, store, map[string]string{"max_loaded_models": "1", "min_residence_time": "0"})
	if err != nil {
		return res, err
	}
	defer s.Stop()
	c := s.caller()
	for i := range cfg.loads {
		if _, err := c.predict(ctx, "filler"); err != nil {
			return res, s.Explain(err)
		}
		if loaded, err := c.loaded(ctx, "model"); err != nil || loaded {
			return res, s.Explain(fmt.Errorf("the model is not unloaded before cold start %d (loaded %v): %v", i+1, loaded, err))
		}
		took, err := c.predict(ctx, "model")
		if err != nil {
			return res, s.Explain(err)
		}
		res.cold = append(res.cold, took)
		for range cfg.warm {
			took, err := c.predict(ctx, "model")
			if err != nil {
				return res, s.Explain(err)
			}
			res.warm = append(res.warm, took)
		}
		fmt.Fprintf(logw, "cold start %d: %v\n", i+1, res.cold[i].Round(time.Millisecond))
	}
	return res, nil
}

// rrResult is one round-robin run.
type rrResult struct {
	name             string
	requests, errors int
	latencies        []time.Duration
	took             time.Duration
	loads, evictions float64
}

// measureRoundRobin runs the same round-robin traffic over copies of the
// model twice: with a memory budget that holds cfg.fit of them, and with
// all of them loaded.
func measureRoundRobin(ctx context.Context, cfg config, logw io.Writer) ([]rrResult, error) {
	store, err := os.MkdirTemp("", "residencybench-store")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(store)
	var models []string
	for i := range cfg.copies {
		name := fmt.Sprintf("m%d", i+1)
		models = append(models, name)
		if err := copyModel(cfg.model, store, name, "minWorkers=1", "maxWorkers=1", fmt.Sprintf("required_memory_mb=%d", cfg.memMiB)); err != nil {
			return nil, err
		}
	}
	budget := int64(cfg.fit)*cfg.memMiB + cfg.memMiB/2
	type runSpec struct {
		name    string
		keys    map[string]string
		preload bool
	}
	var runs []runSpec
	for _, r := range cfg.residences {
		runs = append(runs, runSpec{fmt.Sprintf("%d copies, %d fit (memory_budget_mb=%d, min_residence_time=%v)", cfg.copies, cfg.fit, budget, r),
			map[string]string{"memory_budget_mb": strconv.FormatInt(budget, 10), "min_residence_time": strconv.Itoa(int(r / time.Second))}, false})
	}
	runs = append(runs, runSpec{fmt.Sprintf("%d copies, all fit (all loaded first)", cfg.copies), map[string]string{}, true})
	var out []rrResult
	for _, r := range runs {
		res, err := oneRun(ctx, cfg, store, models, r.keys, r.preload)
		if err != nil {
			return nil, err
		}
		res.name = r.name
		fmt.Fprintf(logw, "%s: %d requests in %v\n", res.name, res.requests, res.took.Round(time.Millisecond))
		out = append(out, res)
	}
	return out, nil
}

// oneRun starts a server with keys, loads every model first when preload
// is set, and runs the traffic.
func oneRun(ctx context.Context, cfg config, store string, models []string, keys map[string]string, preload bool) (rrResult, error) {
	s, err := startServer(ctx, cfg, store, keys)
	if err != nil {
		return rrResult{}, err
	}
	defer s.Stop()
	c := s.caller()
	if preload {
		for _, m := range models {
			if _, err := c.predict(ctx, m); err != nil {
				return rrResult{}, s.Explain(err)
			}
		}
	}
	loads0, evictions0, err := c.counters(ctx)
	if err != nil {
		return rrResult{}, s.Explain(err)
	}
	res := roundRobin(ctx, c, models, cfg.clients, cfg.duration)
	loads1, evictions1, err := c.counters(ctx)
	if err != nil {
		return rrResult{}, s.Explain(err)
	}
	res.loads, res.evictions = loads1-loads0, evictions1-evictions0
	return res, nil
}

// roundRobin runs clients that each send requests round-robin over models
// (client i starts at model i) until d has passed, and counts what came
// back.
func roundRobin(ctx context.Context, c caller, models []string, clients int, d time.Duration) rrResult {
	var mu sync.Mutex
	var res rrResult
	var wg sync.WaitGroup
	start := time.Now()
	for i := range clients {
		wg.Go(func() {
			for k := i; time.Since(start) < d && ctx.Err() == nil; k++ {
				took, err := c.predict(ctx, models[k%len(models)])
				mu.Lock()
				res.requests++
				if err != nil {
					res.errors++
				} else {
					res.latencies = append(res.latencies, took)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	res.took = time.Since(start)
	return res
}

// caller talks to one server.
type caller struct {
	c                     *http.Client
	inference, management string
}

// predict sends one request to model and times it; anything but 200 is an
// error.
func (c caller) predict(ctx context.Context, model string) (time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.inference+"/predictions/"+model, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	t0 := time.Now()
	resp, err := c.c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	took := time.Since(t0)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: status %d: %.300s", model, resp.StatusCode, b)
	}
	return took, err
}

// loaded reports whether describe says model is loaded.
func (c caller) loaded(ctx context.Context, model string) (bool, error) {
	b, err := c.get(ctx, c.management+"/models/"+model)
	if err != nil {
		return false, err
	}
	var flows []struct {
		Models []struct {
			Loaded bool `json:"loaded"`
		} `json:"models"`
	}
	if err := json.Unmarshal(b, &flows); err != nil || len(flows) != 1 || len(flows[0].Models) != 1 {
		return false, fmt.Errorf("describe %s: %.300s", model, b)
	}
	return flows[0].Models[0].Loaded, nil
}

// counters returns the loads and evictions /metrics counts, over all
// models.
func (c caller) counters(ctx context.Context) (loads, evictions float64, err error) {
	b, err := c.get(ctx, c.management+"/metrics")
	if err != nil {
		return 0, 0, err
	}
	return sumSeries(b, "switchyard_model_loads_total"), sumSeries(b, "switchyard_model_evictions_total"), nil
}

// sumSeries adds up the samples of a series in Prometheus text.
func sumSeries(text []byte, name string) float64 {
	var sum float64
	for _, line := range strings.Split(string(text), "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || rest == "" || (rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		fields := strings.Fields(rest[strings.LastIndexByte(rest, '}')+1:])
		if len(fields) > 0 {
			if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
				sum += v
			}
		}
	}
	return sum
}

func (c caller) get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: status %d: %.300s", url, resp.StatusCode, b)
	}
	return b, err
}

// server is one switchyard process of the benchmark.
type server struct{ *benchserver.Server }

// startServer starts the binary on store with load_on_demand and keys,
// and waits until /ping answers 200.
func startServer(ctx context.Context, cfg config, store string, keys map[string]string) (server, error) {
	all := map[string]string{
		"model_store": store, "load_models": "ALL", "python_executable": cfg.python, "load_on_demand": "true",
	}
	maps.Copy(all, keys)
	s, err := benchserver.Start(ctx, cfg.bin, all, time.Minute)
	return server{s}, err
}

func (s server) caller() caller {
	return caller{c: &http.Client{Timeout: 5 * time.Minute}, inference: s.Inference, management: s.Management}
}

// copyModel copies the regular files at the top of the model folder src
// into store/name, and adds extra lines to its serving.properties.
func copyModel(src, store, name string, extra ...string) error {
	dst := filepath.Join(store, name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	entries, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	props := ""
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			return err
		}
		if e.Name() == "serving.properties" {
			props = string(b)
			continue
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			return err
		}
	}
	props = strings.TrimRight(props, "\n") + "\n" + strings.Join(extra, "\n") + "\n"
	return os.WriteFile(filepath.Join(dst, "serving.properties"), []byte(props), 0o644)
}
