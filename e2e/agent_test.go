package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/switchyard/switchyard/agent"
	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// The agent runtime end to end on one machine: `switchyard serve` with the
// langid example (the small model, called through InvokeEndpoint) and the
// toolcaller fixture (the stand-in planner, called through Converse), and
// `switchyard agent` pointed at it with the SDKs' endpoint variables and
// dummy static credentials, as docs/agent.md shows.

// agentQuestion is the acceptance test's prompt.
const agentQuestion = "Which language is 'Guten Morgen, wie geht es dir?'"

// gatedPlanner is the toolcaller fixture, loaded from its folder, whose
// answers after a tool result stop after their first token until a file
// "open" appears in this model's folder (for up to five minutes).
const gatedPlanner = `import importlib.util
import os
import time

_spec = importlib.util.spec_from_file_location("toolcaller_fixture", %q)
fixture = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fixture)
_events = fixture.events


def _gated(req):
    events = _events(req)
    if not fixture.trailing_tool_results(req.messages):
        return events
    return _held(events)


def _held(events):
    for i, event in enumerate(events):
        yield event
        deadline = time.time() + 300
        while i == 0 and not os.path.exists("open") and time.time() < deadline:
            time.sleep(0.01)


fixture.events = _gated
handle = fixture.handle
`

// startAgentModels serves langid, the toolcaller fixture and the gated
// planner, and returns the server and the gated planner's folder.
func startAgentModels(t *testing.T) (*Server, string) {
	t.Helper()
	needE2E(t)
	store := t.TempDir()
	testutil.CopyDir(t, langidExample, filepath.Join(store, "langid"))
	testutil.CopyDir(t, toolFixture, filepath.Join(store, "toolcaller"))
	fixture, err := filepath.Abs(filepath.Join(toolFixture, "model.py"))
	if err != nil {
		t.Fatal(err)
	}
	gate := WriteModel(t, store, "gatedplanner", map[string]string{
		"model.py": fmt.Sprintf(gatedPlanner, fixture), "serving.properties": "engine=Python\noption.rolling_batch=scheduler\n",
	})
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(loadLimit, api.StatusHealthy, "langid", "toolcaller", "gatedplanner")
	return s, gate
}

// agentEnv is the environment of an agent runtime that reaches s, with
// planner as its reasoning model and langid as its tool's endpoint.
func agentEnv(s *Server, planner string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(k, "AWS_") && !strings.HasPrefix(k, "SLM_") && !strings.HasPrefix(k, "REASONING_") &&
			k != "CLOUD_REGION" && k != "AGENT_COURSE" {
			env = append(env, kv)
		}
	}
	env = append(env, "AWS_ENDPOINT_URL_BEDROCK_RUNTIME="+s.Inference, "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME="+s.Inference,
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "CLOUD_REGION=us-east-1",
		"SLM_ENDPOINT_NAME=langid", "AGENT_COURSE=classification")
	if planner != "" {
		env = append(env, "REASONING_MODEL_ID="+planner)
	}
	return env
}

// agentProc is a `switchyard agent serve` the test started.
type agentProc struct {
	base string
	log  *testutil.Buffer
}

// startLogged starts cmd with its output in log until the test ends; then
// it sends SIGTERM, kills the process if it has not gone within grace, and
// shows the log under name when the test failed. The channel it returns is
// closed when the process has exited.
func startLogged(t *testing.T, cmd *exec.Cmd, name string, log *testutil.Buffer, grace time.Duration) <-chan struct{} {
	t.Helper()
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(grace):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("%s log:\n%s", name, log.String())
		}
	})
	return exited
}

// startAgent runs `switchyard agent serve` against s until the test ends.
func startAgent(t *testing.T, s *Server, planner string) agentProc {
	t.Helper()
	a := agentProc{base: "http://127.0.0.1:" + testutil.FreePort(t), log: &testutil.Buffer{}}
	cmd := exec.Command(binary, "agent", "serve", "--address", strings.TrimPrefix(a.base, "http://"))
	cmd.Env = agentEnv(s, planner)
	exited := startLogged(t, cmd, "agent", a.log, 40*time.Second)
	for !agentPinged(a.base) {
		select {
		case <-exited:
			t.Fatalf("agent serve exited at start:\n%s", a.log.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	return a
}

func agentPinged(base string) bool {
	resp, err := http.Get(base + "/ping")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// TestAgent is issue 15's acceptance test.
func TestAgent(t *testing.T) {
	s, gate := startAgentModels(t)
	t.Run("the German question", func(t *testing.T) { checkAgentAnswer(t, s) })
	t.Run("no REASONING_MODEL_ID", func(t *testing.T) { checkNoModelID(t, s) })
	t.Run("dev then cleanup", func(t *testing.T) { checkDevCleanup(t, s) })
	t.Run("the stream leaves before the answer exists", func(t *testing.T) { checkAgentStream(t, s, gate) })
}

// requests returns how many requests model answered with 200 so far.
func requests(t *testing.T, s *Server, model string) int {
	t.Helper()
	v, _ := sample(s.scrape(), `switchyard_requests_total{code="200",model="`+model+`"}`)
	n, _ := strconv.Atoi(v)
	return n
}

// checkAgentAnswer: the German question is answered with a result naming
// German; the small model was called exactly once, the planner twice, and
// the planner's second turn carried the tool's answer (the fixture quotes
// it).
func checkAgentAnswer(t *testing.T, s *Server) {
	a := startAgent(t, s, "us.toolcaller")
	slm, planner := requests(t, s, "langid"), requests(t, s, "toolcaller")
	body, _ := json.Marshal(map[string]string{"prompt": agentQuestion})
	code, answer := s.Do(http.MethodPost, a.base+"/invocations", "application/json", body)
	var out struct{ Result string }
	if err := json.Unmarshal(answer, &out); err != nil || code != http.StatusOK {
		t.Fatalf("%d %s", code, answer)
	}
	if !strings.Contains(out.Result, "German") {
		t.Errorf("result %q does not name German", out.Result)
	}
	if out.Result != "The tool answered: German (deu)" {
		t.Errorf("result %q: the planner's second turn did not quote the tool's answer", out.Result)
	}
	if n := requests(t, s, "langid") - slm; n != 1 {
		t.Errorf("the small model answered %d requests, want exactly 1", n)
	}
	if n := requests(t, s, "toolcaller") - planner; n != 2 {
		t.Errorf("the planner answered %d requests, want 2", n)
	}
	var ping struct {
		Status           string `json:"status"`
		TimeOfLastUpdate int64  `json:"time_of_last_update"`
	}
	code, pb := s.Get(a.base + "/ping")
	if json.Unmarshal(pb, &ping) != nil || code != 200 || ping.Status != "Healthy" || ping.TimeOfLastUpdate == 0 {
		t.Errorf("ping %d %s", code, pb)
	}
}

// checkNoModelID: agent serve without REASONING_MODEL_ID exits at once,
// non-zero, naming the variable.
func checkNoModelID(t *testing.T, s *Server) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "agent", "serve", "--address", "127.0.0.1:"+testutil.FreePort(t))
	cmd.Env = agentEnv(s, "")
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); err == nil || code == 0 || !strings.Contains(string(out), "REASONING_MODEL_ID is not set") {
		t.Errorf("exit %d (%v): %s", code, err, out)
	}
}

// checkDevCleanup: agent dev leaves a runtime in its own session with a
// pid file; agent cleanup leaves no process, no socket, no pid file; a
// second cleanup is harmless.
func checkDevCleanup(t *testing.T, s *Server) {
	address := "127.0.0.1:" + testutil.FreePort(t)
	pidFile := filepath.Join(t.TempDir(), "agent.pid")
	agentCLI := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(binary, append([]string{"agent"}, args...)...)
		cmd.Env = agentEnv(s, "us.toolcaller")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("agent %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	agentCLI("dev", "--address", address, "--pid-file", pidFile)
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.SplitN(string(b), "\n", 2)[0])
	t.Cleanup(func() {
		if !testutil.ProcessGone(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	if sid, _ := unix.Getsid(pid); sid != pid || testutil.ProcessGone(pid) {
		t.Errorf("pid %d: session %d, gone %v; want a live session leader", pid, sid, testutil.ProcessGone(pid))
	}
	if in, _ := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", pid)); in != os.DevNull {
		t.Errorf("the runtime's stdin is %q", in)
	}
	if answer := agentCLI("invoke", "--url", "http://"+address, "--prompt", agentQuestion); answer != "The tool answered: German (deu)\n" {
		t.Errorf("invoke: %q", answer)
	}
	out := agentCLI("cleanup", "--pid-file", pidFile)
	if !testutil.ProcessGone(pid) || !strings.Contains(out, fmt.Sprintf("Stopped the agent runtime (pid %d)", pid)) {
		t.Errorf("after cleanup: gone %v\n%s", testutil.ProcessGone(pid), out)
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("the pid file is still there: %v", err)
	}
	if agentPinged("http://" + address) {
		t.Error("something still answers at the runtime's address")
	}
	if out := agentCLI("cleanup", "--pid-file", pidFile); !strings.Contains(out, "Nothing to clean up") {
		t.Errorf("a second cleanup: %s", out)
	}
}

// checkAgentStream: with the planner held after the first token of its
// final answer, the first event of the streamed /invocations answer
// arrives; the answer is whole only once the gate opens.
func checkAgentStream(t *testing.T, s *Server, gate string) {
	a := startAgent(t, s, "us.gatedplanner")
	open := filepath.Join(gate, "open")
	_ = os.Remove(open)
	body, _ := json.Marshal(map[string]string{"prompt": agentQuestion})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.base+"/invocations", strings.NewReader(string(body)))
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		mustWrite(t, open, "")
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	first, err := r.ReadString('\n')
	_, gateErr := os.Stat(open) // the gate is still closed: no such file
	mustWrite(t, open, "")
	if err != nil || first != "data: \"The\"\n" || resp.Header.Get("Content-Type") != "text/event-stream" || gateErr == nil {
		t.Fatalf("first line %q (%v), %s", first, err, resp.Header.Get("Content-Type"))
	}
	text := "The"
	if err := agent.ReadStream(r, func(s string) error { text += s; return nil }); err != nil {
		t.Fatal(err)
	}
	if text != "The tool answered: German (deu)" {
		t.Errorf("streamed %q", text)
	}
}
