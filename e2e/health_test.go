package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// TestHealthEndpoints walks /ping, /v2/health/live and /v2/health/ready
// through a model loading, all models healthy, and a model with fewer live
// workers than its minimum.
func TestHealthEndpoints(t *testing.T) {
	store := t.TempDir()
	faultModel(t, store, "steady", nil, nil)
	faultModel(t, store, "single", []string{"minWorkers=1", "maxWorkers=2"}, map[string]string{"SINGLE": ""})
	slow := faultModel(t, store, "slow", nil, map[string]string{"HOLD": ""})
	t.Cleanup(func() { mustWrite(t, filepath.Join(slow, "OPEN"), "") })
	s := StartServer(t, Options{Store: store, Models: "steady,single", Config: map[string]string{"retry_threshold": "100"}})
	checkLive(t, s)
	s.WaitStatus(faultWait, api.StatusHealthy, "steady", "single")
	checkHealth(t, s, "all healthy", http.StatusOK, http.StatusOK, map[string]string{"steady": api.StatusHealthy, "single": api.StatusHealthy})

	if code, body := s.Do(http.MethodPost, s.Management+"/models?url=slow&synchronous=false", "", nil); code != http.StatusAccepted {
		t.Fatalf("register slow: %d %s", code, body)
	}
	checkHealth(t, s, "one loading", http.StatusOK, http.StatusServiceUnavailable,
		map[string]string{"steady": api.StatusHealthy, "single": api.StatusHealthy, "slow": api.StatusPending})
	mustWrite(t, filepath.Join(slow, "OPEN"), "") // the load ends only now
	s.WaitStatus(faultWait, api.StatusHealthy, "slow")

	if code, body := s.Do(http.MethodPut, s.Management+"/models/single?min_worker=2&synchronous=false", "", nil); code != http.StatusAccepted {
		t.Fatalf("scale single: %d %s", code, body)
	}
	testutil.WaitFor(t, faultWait, "a second worker of single failing", func() bool {
		return strings.Contains(s.Log(), `"msg":"worker failed to start","model":"single"`)
	})
	checkHealth(t, s, "one below its minimum", http.StatusServiceUnavailable, http.StatusServiceUnavailable,
		map[string]string{"steady": api.StatusHealthy, "single": api.StatusUnhealthy, "slow": api.StatusHealthy})
	checkLive(t, s)

	if code, body := s.Do(http.MethodPut, s.Management+"/models/single?min_worker=1", "", nil); code != http.StatusOK {
		t.Fatalf("scale single back: %d %s", code, body)
	}
	checkHealth(t, s, "healthy again", http.StatusOK, http.StatusOK,
		map[string]string{"steady": api.StatusHealthy, "single": api.StatusHealthy, "slow": api.StatusHealthy})
}

// checkLive checks that /v2/health/live says the process is up.
func checkLive(t *testing.T, s *Server) {
	t.Helper()
	if code, body := s.Get(s.Inference + "/v2/health/live"); code != http.StatusOK {
		t.Errorf("/v2/health/live = %d %s", code, body)
	}
}

// checkHealth checks /ping's status and map and /v2/health/ready's status.
func checkHealth(t *testing.T, s *Server, when string, pingCode, readyCode int, want map[string]string) {
	t.Helper()
	code, ping := s.ping(t)
	got := map[string]string{}
	for name, h := range ping {
		got[name] = h.Status
	}
	gotJSON, _ := json.Marshal(got)
	wantJSON, _ := json.Marshal(want)
	t.Logf("%s: /ping %d %s", when, code, gotJSON)
	if code != pingCode || string(gotJSON) != string(wantJSON) {
		t.Errorf("%s: /ping = %d %s, want %d %s", when, code, gotJSON, pingCode, wantJSON)
	}
	if code, body := s.Get(s.Inference + "/v2/health/ready"); code != readyCode {
		t.Errorf("%s: /v2/health/ready = %d %s, want %d", when, code, body, readyCode)
	}
}

// healthPoll is how often TestHealthWorkerDeath reads /ping.
const healthPoll = 20 * time.Millisecond

// TestHealthWorkerDeath kills a model's only worker: /ping reports the model
// Unhealthy (never Healthy with no live worker) until the replacement is
// up, then Healthy again. The replacement's load is held (HOLD) until the
// test has seen Unhealthy, so the test does not race the restart.
func TestHealthWorkerDeath(t *testing.T) {
	store := t.TempDir()
	dir := faultModel(t, store, "mortal", []string{"minWorkers=1", "maxWorkers=1"}, nil)
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(faultWait, api.StatusHealthy, "mortal")
	mustWrite(t, filepath.Join(dir, "HOLD"), "") // for the replacement's load, not the first one's
	t.Cleanup(func() { mustWrite(t, filepath.Join(dir, "OPEN"), "") })
	c := &http.Client{}
	out := invoke(c, s, "mortal", clientTimeout, "X-Crash", "1")
	t.Logf("request whose handler exits: %d %q", out.code, out.message)
	if out.code != http.StatusServiceUnavailable || !strings.Contains(out.message, "exit status 3") {
		t.Errorf("the request on the dying worker: %+v, want 503 naming exit status 3", out)
	}
	unhealthy := testutil.Poll(faultWait, func() bool {
		code, ping := s.ping(t)
		time.Sleep(healthPoll)
		return ping["mortal"].Status == api.StatusUnhealthy && code == http.StatusServiceUnavailable
	})
	mustWrite(t, filepath.Join(dir, "OPEN"), "") // the replacement may load now
	healthy := testutil.Poll(faultWait, func() bool {
		_, ping := s.ping(t)
		time.Sleep(healthPoll)
		return ping["mortal"].Status == api.StatusHealthy && len(s.live("mortal")) == 1
	})
	if !unhealthy || !healthy {
		t.Errorf("after the crash: Unhealthy (503) seen %v, Healthy again %v", unhealthy, healthy)
	}
}
