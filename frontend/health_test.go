package frontend

import (
	"encoding/json"
	"testing"

	"github.com/switchyard/switchyard/api"
)

func health(states ...string) map[string]api.ModelHealth {
	m := map[string]api.ModelHealth{}
	for i, s := range states {
		m[string(rune('a'+i))] = api.ModelHealth{Status: s}
	}
	return m
}

func TestPing(t *testing.T) {
	f := newFake()
	ts := startServer(t, f)
	cases := []struct {
		name   string
		health map[string]api.ModelHealth
		code   int
	}{
		{"no models", nil, 200},
		{"healthy", health(api.StatusHealthy, api.StatusHealthy), 200},
		{"pending", health(api.StatusHealthy, api.StatusPending), 200},
		{"startup model loading", startupLoading(api.StatusHealthy), 503},
		{"startup model loading, failed", startupLoading(api.StatusFailed), 500},
		{"unhealthy", health(api.StatusHealthy, api.StatusUnhealthy), 503},
		{"unknown state", health("Confused"), 503},
		{"failed", health(api.StatusFailed, api.StatusHealthy), 500},
		{"failed beats unhealthy", health(api.StatusUnhealthy, api.StatusFailed), 500},
		{"a model that loads on demand", onDemand(api.StatusHealthy), 200},
		{"on demand and failed", onDemand(api.StatusFailed), 500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.set(func(f *fakeModels) { f.health = c.health })
			resp, body := ts.do(t, "GET", ts.inf+"/ping", "", nil)
			if resp.StatusCode != c.code {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, c.code, body)
			}
			var got map[string]api.ModelHealth
			decode(t, resp, body, &got)
			if len(got) != len(c.health) {
				t.Fatalf("body %s does not list every model", body)
			}
			for name, h := range c.health {
				h.StartupLoading, h.OnDemand = false, false // not part of the answer
				if got[name] != h {
					t.Errorf("%s = %+v, want %+v", name, got[name], h)
				}
			}
		})
	}
	t.Run("error detail", func(t *testing.T) {
		f.set(func(f *fakeModels) {
			f.health = map[string]api.ModelHealth{"x": {Status: api.StatusFailed, Error: "CUDA error"}}
		})
		_, body := ts.do(t, "GET", ts.inf+"/ping", "", nil)
		var got map[string]map[string]string
		if err := json.Unmarshal(body, &got); err != nil || got["x"]["error"] != "CUDA error" {
			t.Errorf("body %s", body)
		}
	})
}

// onDemand returns health with one more model, "u", that loads on demand
// and is not loaded.
func onDemand(states ...string) map[string]api.ModelHealth {
	m := health(states...)
	m["u"] = api.ModelHealth{Status: api.StatusPending, OnDemand: true}
	return m
}

// startupLoading returns health with one more model, "z", loaded at startup
// and still loading.
func startupLoading(states ...string) map[string]api.ModelHealth {
	m := health(states...)
	m["z"] = api.ModelHealth{Status: api.StatusPending, StartupLoading: true}
	return m
}

// TestPingOptions checks DJL's wait_model_loading=false and
// allow_multi_status=true.
func TestPingOptions(t *testing.T) {
	cases := []struct {
		name          string
		noWait, multi bool
		health        map[string]api.ModelHealth
		code          int
	}{
		{"no wait: a loading startup model is PENDING", true, false, startupLoading(api.StatusHealthy), 200},
		{"no wait, multi status", true, true, startupLoading(api.StatusHealthy), 207},
		{"multi status: a PENDING model", false, true, health(api.StatusHealthy, api.StatusPending), 207},
		{"multi status: all healthy", false, true, health(api.StatusHealthy), 200},
		{"multi status: startup still loading", false, true, startupLoading(), 503},
		{"multi status: unhealthy", false, true, health(api.StatusPending, api.StatusUnhealthy), 503},
		{"multi status: a model that loads on demand is no PENDING", false, true, onDemand(api.StatusHealthy), 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake()
			f.health = c.health
			ts := startServer(t, f, func(cfg *Config) { cfg.NoWaitModelLoading, cfg.AllowMultiStatus = c.noWait, c.multi })
			resp, body := ts.do(t, "GET", ts.inf+"/ping", "", nil)
			if resp.StatusCode != c.code {
				t.Errorf("status = %d, want %d (%s)", resp.StatusCode, c.code, body)
			}
			var got map[string]api.ModelHealth
			decode(t, resp, body, &got)
			if len(got) != len(c.health) {
				t.Errorf("body %s does not list every model", body)
			}
		})
	}
}

func TestHealthV2(t *testing.T) {
	f := newFake()
	ts := startServer(t, f)
	cases := []struct {
		name        string
		health      map[string]api.ModelHealth
		live, ready int
	}{
		{"no models", nil, 200, 200},
		{"healthy", health(api.StatusHealthy), 200, 200},
		{"loading", health(api.StatusHealthy, api.StatusPending), 200, 503},
		{"failed", health(api.StatusFailed), 200, 503},
		{"unloaded, loads on demand", onDemand(api.StatusHealthy), 200, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f.set(func(f *fakeModels) { f.health = c.health })
			resp, body := ts.do(t, "GET", ts.inf+"/v2/health/live", "", nil)
			if resp.StatusCode != c.live || string(body) != `{"live":true}`+"\n" {
				t.Errorf("live = %d %q", resp.StatusCode, body)
			}
			resp, body = ts.do(t, "GET", ts.inf+"/v2/health/ready", "", nil)
			if c.ready == 200 {
				if resp.StatusCode != 200 || string(body) != `{"ready":true}`+"\n" {
					t.Errorf("ready = %d %q", resp.StatusCode, body)
				}
				return
			}
			if msg := mustV2Error(t, resp, body, c.ready); msg != "Models not ready: b." && msg != "Models not ready: a." {
				t.Errorf("message = %q", msg)
			}
		})
	}
}

func fakeHealth(status string) api.ModelHealth { return api.ModelHealth{Status: status} }
