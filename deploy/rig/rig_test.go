package rig

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// phaseResult is one phase's numbers, as README.md reports them.
type phaseResult struct {
	Phase     string
	Seconds   float64
	Sent, OK  int
	Failures  []Failure
	Loads     map[string]float64 // per replica
	Evictions map[string]float64 // per replica
	Served    map[string]map[string]int
	// Retried counts the requests HAProxy sent more than once, Redispatched
	// those it sent again to another replica (its log's retries field).
	Retried, Redispatched int
}

// TestRig runs the rig's phases (RIG_PHASES, default all: affinity,
// roundrobin, kill, rolling; "unbounded" may be added), each for
// RIG_SECONDS (60 by default), and checks that affinity saves loads and
// that a rolling restart fails no request. Needs root, working "ip netns",
// haproxy and a Python for the workers (RIG_PYTHON, or the repository's
// .venv); skipped otherwise. RIG_RESULTS names a file for the results as
// JSON; RIG_DIR a folder to work in and keep (replica and HAProxy logs).
func TestRig(t *testing.T) {
	r := newRig(t)
	phases := strings.Split(envOr("RIG_PHASES", "affinity,roundrobin,kill,rolling"), ",")
	var results []phaseResult
	for _, phase := range phases {
		run, ok := phaseRuns[phase]
		if !ok {
			t.Fatalf("unknown phase %q", phase)
		}
		res := run(t, r)
		res.Phase = phase
		results = append(results, res)
		report(t, res)
	}
	if f := os.Getenv("RIG_RESULTS"); f != "" {
		data, _ := json.MarshalIndent(results, "", "  ")
		if err := os.WriteFile(f, data, 0o644); err != nil {
			t.Error(err)
		}
	}
	judge(t, results)
}

var phaseRuns = map[string]func(*testing.T, *rig) phaseResult{
	"affinity":   func(t *testing.T, r *rig) phaseResult { return r.steady(t, "affinity") },
	"unbounded":  func(t *testing.T, r *rig) phaseResult { return r.steady(t, "unbounded") },
	"roundrobin": func(t *testing.T, r *rig) phaseResult { return r.steady(t, "roundrobin") },
	"kill":       func(t *testing.T, r *rig) phaseResult { return r.kill(t) },
	"rolling":    func(t *testing.T, r *rig) phaseResult { return r.rolling(t) },
}

// judge checks the phases against what the rig is for.
func judge(t *testing.T, results []phaseResult) {
	byPhase := map[string]phaseResult{}
	for _, r := range results {
		byPhase[r.Phase] = r
		if r.OK == 0 {
			t.Errorf("%s: no request succeeded", r.Phase)
		}
	}
	for _, phase := range []string{"affinity", "unbounded", "roundrobin", "rolling"} {
		if r, ok := byPhase[phase]; ok && len(r.Failures) > 0 {
			t.Errorf("%s: %d requests failed, want none; first: %+v", phase, len(r.Failures), r.Failures[0])
		}
	}
	// A replica's death may cost the requests it held, no more: at most
	// one per client.
	if r, ok := byPhase["kill"]; ok && len(r.Failures) > 4 {
		t.Errorf("kill: %d requests failed, want at most 4 (those in flight)", len(r.Failures))
	}
	a, aok := byPhase["affinity"]
	rr, rrok := byPhase["roundrobin"]
	if aok && rrok {
		al, rl := sum(a.Loads), sum(rr.Loads)
		// Over the same time and clients, so that a phase slowed by its
		// loads, which sends fewer requests, is not flattered.
		if al > rl/2 {
			t.Errorf("affinity made %.0f loads for %d requests, round robin %.0f for %d: want at most half", al, a.Sent, rl, rr.Sent)
		}
	}
	if aok {
		if n := servedBy(a, hotModel); n < 2 {
			t.Errorf("affinity: %s served by %d replica(s), want more than one (the bound spills it)", hotModel, n)
		}
	}
}

// servedBy counts the replicas that answered model at least once.
func servedBy(p phaseResult, model string) int {
	n := 0
	for _, models := range p.Served {
		if models[model] > 0 {
			n++
		}
	}
	return n
}

func report(t *testing.T, p phaseResult) {
	loads, evictions := sum(p.Loads), sum(p.Evictions)
	t.Logf("%s: %.0f s, %d sent, %d ok, %d failed (%d retried by HAProxy, %d of them on another replica); loads %.0f (per replica %v), evictions %.0f (per replica %v)",
		p.Phase, p.Seconds, p.Sent, p.OK, len(p.Failures), p.Retried, p.Redispatched, loads, p.Loads, evictions, p.Evictions)
	for replica, models := range p.Served {
		t.Logf("%s: %s served %v", p.Phase, replica, models)
	}
	for i, f := range p.Failures {
		if i == 10 {
			t.Logf("%s: ... %d more failures", p.Phase, len(p.Failures)-10)
			break
		}
		t.Logf("%s: failure at %v: %+v", p.Phase, f.At.Round(time.Millisecond), f)
	}
}

// rig is a rig set up by rig.sh under a test's temporary folder.
type rig struct {
	script, dir, base string
	haproxyLog        string // the current HAProxy's log
	seconds           time.Duration
	env               []string
}

const replicas = 3

func newRig(t *testing.T) *rig {
	if os.Geteuid() != 0 {
		t.Skip("the rig needs root (network namespaces)")
	}
	// A namespace made and deleted at once: "ip netns list" alone works
	// where making one is refused (a container without CAP_SYS_ADMIN).
	probe := fmt.Sprintf("syrprobe%d", os.Getpid())
	if out, err := exec.Command("ip", "netns", "add", probe).CombinedOutput(); err != nil {
		t.Skipf("ip netns does not work here: %v: %s", err, out)
	}
	if out, err := exec.Command("ip", "netns", "del", probe).CombinedOutput(); err != nil {
		t.Fatalf("ip netns del %s: %v: %s", probe, err, out)
	}
	if _, err := exec.LookPath("haproxy"); err != nil {
		t.Skip("haproxy is not installed (apt-get install haproxy)")
	}
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	python := envOr("RIG_PYTHON", filepath.Join(repo, ".venv", "bin", "python"))
	if _, err := os.Stat(python); err != nil {
		t.Skipf("no Python for the workers at %s (set RIG_PYTHON)", python)
	}
	seconds, err := strconv.Atoi(envOr("RIG_SECONDS", "60"))
	if err != nil {
		t.Fatalf("RIG_SECONDS: %v", err)
	}
	dir := os.Getenv("RIG_DIR") // kept afterwards, for its logs
	if dir == "" {
		dir = t.TempDir()
	}
	port := strconv.Itoa(freePort(t))
	r := &rig{script: filepath.Join(repo, "deploy", "rig", "rig.sh"), dir: dir, base: "http://127.0.0.1:" + port, seconds: time.Duration(seconds) * time.Second}
	r.env = append(os.Environ(), "RIG_PYTHON="+python, "SWITCHYARD="+switchyard(t, repo, dir), "RIG_PORT="+port)
	r.sh(t, "up")
	t.Cleanup(func() { r.sh(t, "down") })
	return r
}

// switchyard returns the binary to run: $SWITCHYARD, or one built now.
func switchyard(t *testing.T, repo, dir string) string {
	if bin := os.Getenv("SWITCHYARD"); bin != "" {
		return bin
	}
	bin := filepath.Join(dir, "switchyard")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/switchyard")
	cmd.Dir = repo
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building switchyard: %v\n%s", err, out)
	}
	return bin
}

func (r *rig) sh(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(r.script, append([]string{args[0], r.dir}, args[1:]...)...)
	cmd.Env = r.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rig.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (r *rig) management(t *testing.T, n int) string {
	return "http://" + r.sh(t, "addr", strconv.Itoa(n)) + ":8084"
}

// fresh starts every replica anew and HAProxy in mode, and waits until
// HAProxy sees every replica up.
func (r *rig) fresh(t *testing.T, mode string) {
	for n := 1; n <= replicas; n++ {
		if r.running(n) {
			r.sh(t, "stop", strconv.Itoa(n))
		}
		r.sh(t, "start", strconv.Itoa(n))
	}
	r.haproxyLog = r.sh(t, "haproxy", mode)
	for n := 1; n <= replicas; n++ {
		r.waitState(t, n, true)
	}
}

func (r *rig) running(n int) bool {
	data, err := os.ReadFile(filepath.Join(r.dir, "r"+strconv.Itoa(n), "pid"))
	if err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strings.TrimSpace(string(data)) + "/stat")
	return err == nil && !strings.Contains(string(stat), ") Z ")
}

// counts scrapes every running replica.
func (r *rig) counts(t *testing.T) map[string]Counts {
	out := map[string]Counts{}
	for n := 1; n <= replicas; n++ {
		if !r.running(n) {
			continue
		}
		c, err := Scrape(r.management(t, n))
		if err != nil {
			t.Fatal(err)
		}
		out["r"+strconv.Itoa(n)] = c
	}
	return out
}

// load starts the clients; the returned function stops them and returns
// what they saw.
func (r *rig) load(seed uint64) func() *Result {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *Result)
	go func() { done <- Load{Base: r.base, Clients: 4, Rate: 20, Seed: seed}.Run(ctx) }()
	return func() *Result { cancel(); return <-done }
}

// steady is a phase of traffic through HAProxy in mode, from cold replicas.
func (r *rig) steady(t *testing.T, mode string) phaseResult {
	r.fresh(t, mode)
	start := time.Now()
	stop := r.load(1)
	time.Sleep(r.seconds)
	res := stop()
	return r.result(t, res, start, r.counts(t))
}

// kill SIGKILLs replica 2 a third of the way in and starts it again at two
// thirds.
func (r *rig) kill(t *testing.T) phaseResult {
	r.fresh(t, "affinity")
	start := time.Now()
	stop := r.load(2)
	time.Sleep(r.seconds / 3)
	before := r.counts(t)
	r.sh(t, "kill", "2")
	time.Sleep(r.seconds / 3)
	r.sh(t, "start", "2")
	time.Sleep(r.seconds - time.Since(start))
	res := stop()
	after := r.counts(t)
	after["r2"].Add(before["r2"])
	return r.result(t, res, start, after)
}

// rolling restarts the replicas one after the other as a Deployment's
// rolling update does: SIGTERM, wait for the exit, start, wait until the
// load balancer sends to it again; traffic throughout.
func (r *rig) rolling(t *testing.T) phaseResult {
	r.fresh(t, "affinity")
	start := time.Now()
	stop := r.load(3)
	pause := r.seconds / (replicas + 1)
	total := map[string]Counts{}
	for n := 1; n <= replicas; n++ {
		time.Sleep(pause)
		name := "r" + strconv.Itoa(n)
		c, err := Scrape(r.management(t, n))
		if err != nil {
			t.Fatal(err)
		}
		total[name] = c
		r.sh(t, "stop", strconv.Itoa(n))
		r.waitState(t, n, false)
		r.sh(t, "start", strconv.Itoa(n))
		r.waitState(t, n, true)
		t.Logf("rolling: %s restarted at %v", name, time.Since(start).Round(time.Millisecond))
	}
	time.Sleep(pause)
	res := stop()
	for name, c := range r.counts(t) {
		total[name].Add(c)
	}
	return r.result(t, res, start, total)
}

func (r *rig) result(t *testing.T, res *Result, start time.Time, counts map[string]Counts) phaseResult {
	p := phaseResult{Seconds: time.Since(start).Seconds(), Sent: res.Sent, OK: res.OK, Failures: res.Failures,
		Served: res.Served, Loads: map[string]float64{}, Evictions: map[string]float64{}}
	for name, c := range counts {
		p.Loads[name], p.Evictions[name] = c.Total()
	}
	p.Retried, p.Redispatched = retries(t, r.haproxyLog)
	return p
}

// retries counts the requests of an HAProxy log (option httplog) that were
// retried, and those redispatched: the last field of the connection counts
// (actconn/feconn/beconn/srv_conn/retries) is above 0, with a "+" when the
// request went to another server.
func retries(t *testing.T, log string) (retried, redispatched int) {
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		for i := 1; i < len(f); i++ {
			if len(f[i-1]) != 4 || strings.Count(f[i], "/") != 4 || !strings.Contains(line, `"POST `) {
				continue
			}
			n := f[i][strings.LastIndex(f[i], "/")+1:]
			if n != "0" {
				retried++
			}
			if strings.HasPrefix(n, "+") {
				redispatched++
			}
			break
		}
	}
	return retried, redispatched
}

// waitState waits until HAProxy's admin socket shows replica n up (or
// down): the health checks have seen it.
func (r *rig) waitState(t *testing.T, n int, up bool) {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if state, err := r.serverState(n); err == nil && (state == "2") == up {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("HAProxy never saw sy%d %s", n, map[bool]string{true: "up", false: "down"}[up])
}

// serverState returns HAProxy's srv_op_state of server syN (2: running).
func (r *rig) serverState(n int) (string, error) {
	c, err := net.DialTimeout("unix", filepath.Join(r.dir, "haproxy.sock"), time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := fmt.Fprintf(c, "show servers state switchyard\n"); err != nil {
		return "", err
	}
	sc := bufio.NewScanner(c)
	var header []string
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) > 1 && f[0] == "#" {
			header = f[1:]
			continue
		}
		col := slices.Index(header, "srv_op_state")
		name := slices.Index(header, "srv_name")
		if col >= 0 && name >= 0 && len(f) > col && f[name] == fmt.Sprintf("sy%d", n) {
			return f[col], nil
		}
	}
	return "", fmt.Errorf("no server sy%d in HAProxy's state", n)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
