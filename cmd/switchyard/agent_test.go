package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/agent"
)

// envTestAsMain makes this test binary run as switchyard itself (TestMain),
// so that agent dev can start it as its runtime.
const envTestAsMain = "SWITCHYARD_TEST_AS_MAIN"

// agentEnvVars are cleared for each agent test, so that the caller's
// environment does not leak in.
var agentEnvVars = []string{agent.EnvModelID, agent.EnvReasoningRegion, agent.EnvCloudRegion, agent.EnvEndpoint,
	agent.EnvTargetModel, agent.EnvCourse, envAgentURL, envNoticeShown, "AWS_ENDPOINT_URL", "AWS_PROFILE"}

// localAgentEnv sets the environment of a runtime whose two services are
// at base (no call reaches them unless a test makes one).
func localAgentEnv(t *testing.T, base string) {
	t.Helper()
	for _, k := range agentEnvVars {
		t.Setenv(k, "")
	}
	for k, v := range map[string]string{
		agent.EnvModelID: "us.planner", agent.EnvEndpoint: "langid", agent.EnvCloudRegion: "us-east-1",
		"AWS_ENDPOINT_URL_BEDROCK_RUNTIME": base, "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME": base,
		"AWS_ACCESS_KEY_ID": "AKIDTEST", "AWS_SECRET_ACCESS_KEY": "test-secret",
	} {
		t.Setenv(k, v)
	}
}

func TestAgentHelp(t *testing.T) {
	for _, args := range [][]string{{"help", "agent"}, {"agent", "--help"}, {"agent", "help"}} {
		code, stdout, stderr := cli(t, args...)
		if code != exitOK || stdout != agentUsage || stderr != "" {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	for sub := range (agentEnv{}).commands() {
		code, stdout, _ := cli(t, "help", "agent", sub)
		if code != exitOK || !strings.HasPrefix(stdout, "usage: switchyard agent "+sub+" ") || !strings.Contains(agentUsage, "\n  "+sub+" ") {
			t.Errorf("help agent %s: exit %d, %q", sub, code, stdout)
		}
	}
	for args, says := range map[string]string{
		"agent":             "switchyard agent: usage: agent needs a command",
		"agent nope":        `unknown agent command "nope"`,
		"help agent nope":   `unknown agent command "nope"`,
		"agent serve extra": "switchyard agent serve: usage: agent serve takes no arguments",
	} {
		code, _, stderr := cli(t, strings.Fields(args)...)
		if code != exitUsage || !strings.Contains(stderr, says) {
			t.Errorf("%s: exit %d, stderr %q, want %q", args, code, stderr, says)
		}
	}
}

// TestAgentServeNeedsTheModelID: without REASONING_MODEL_ID, serve (and
// dev) exit at once, naming the variable, before anything starts.
func TestAgentServeNeedsTheModelID(t *testing.T) {
	localAgentEnv(t, "http://127.0.0.1:1")
	t.Setenv(agent.EnvModelID, "")
	for _, cmd := range []string{"serve", "dev"} {
		code, stdout, stderr := cli(t, "agent", cmd, "--address", "127.0.0.1:1")
		if code != exitError || stdout != "" || !strings.Contains(stderr, "switchyard agent "+cmd+": ") ||
			!strings.Contains(stderr, "REASONING_MODEL_ID is not set") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", cmd, code, stdout, stderr)
		}
	}
}

func TestAgentCreate(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := cli(t, "agent", "create", "Invoices", "--dir", dir, "--from", "classification")
	path := filepath.Join(dir, "Invoices", agent.CourseFile)
	if code != exitOK || !strings.Contains(stdout, path) || stderr != "" {
		t.Fatalf("exit %d, %q, %q", code, stdout, stderr)
	}
	c, err := agent.LoadCourse(filepath.Join(dir, "Invoices"))
	if err != nil || c.Name != "Invoices" || c.Tool != "classify_language" {
		t.Errorf("written course %+v, %v", c, err)
	}
	for args, says := range map[string]string{
		"Invoices":                    "file exists",
		"my-agent":                    "only letters and digits",
		"abcdefghijklmnopqrstuvwxyz1": "at most 23",
	} {
		code, _, stderr := cli(t, "agent", "create", args, "--dir", dir)
		if code != exitError || !strings.Contains(stderr, says) {
			t.Errorf("create %s: exit %d, %q", args, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "my-agent")); err == nil {
		t.Error("a refused name left a folder")
	}
}

// scripted answers prompts for invoke's tests.
type scripted struct{ err error }

func (s scripted) Run(_ context.Context, prompt string) (string, error) {
	return "you said " + prompt, s.err
}

func (s scripted) Stream(_ context.Context, prompt string, emit func(string) error) (string, error) {
	for _, w := range strings.SplitAfter("you said "+prompt, " ") {
		_ = emit(w)
	}
	return "you said " + prompt, s.err
}

// startRuntime serves runner through the agent's own server.
func startRuntime(t *testing.T, runner agent.Runner) string {
	t.Helper()
	srv := httptest.NewServer(agent.NewServer(agent.ServerConfig{Runner: runner, Log: zap.NewNop()}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func TestAgentInvoke(t *testing.T) {
	noLeaks(t)
	for _, k := range agentEnvVars {
		t.Setenv(k, "")
	}
	ok := startRuntime(t, scripted{})
	failing := startRuntime(t, scripted{err: fmt.Errorf("%w: gone", agent.ErrTool)})
	cases := []struct {
		args         []string
		code         int
		stdout, says string
	}{
		{[]string{"--url", ok, "--prompt", "hi"}, exitOK, "you said hi\n", ""},
		{[]string{"--url", ok + "/", "--prompt", "hi", "--stream"}, exitOK, "you said hi\n", ""},
		{[]string{"--url", failing, "--prompt", "hi"}, exitError, "", "switchyard agent invoke: 502 ToolError: the tool's endpoint failed: gone"},
		{[]string{"--url", failing, "--prompt", "hi", "--stream"}, exitError, "you said hi\n", "the answer broke off: ToolError"},
		{[]string{"--url", ok}, exitUsage, "", "--prompt is required"},
		{[]string{"--url", "http://127.0.0.1:1", "--prompt", "hi"}, exitError, "", "cannot reach the server"},
	}
	for _, tc := range cases {
		code, stdout, stderr := cli(t, append([]string{"agent", "invoke"}, tc.args...)...)
		if code != tc.code || stdout != tc.stdout || !strings.Contains(stderr, tc.says) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", tc.args, code, stdout, stderr)
		}
	}
	t.Setenv(envAgentURL, ok)
	if code, stdout, _ := cli(t, "agent", "invoke", "--prompt", "env"); code != exitOK || stdout != "you said env\n" {
		t.Errorf("$%s: exit %d, %q", envAgentURL, code, stdout)
	}
}

// TestAgentVerifyLocal makes one tool call against a stand-in endpoint
// (the SageMaker Runtime wire shape) and reports it.
func TestAgentVerifyLocal(t *testing.T) {
	var got string
	endpoint := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = r.URL.Path + " " + string(b)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"choices": [{"message": {"role": "assistant", "content": "German (deu)"}}]}`)
	}))
	defer endpoint.Close()
	localAgentEnv(t, endpoint.URL)
	code, stdout, stderr := cli(t, "agent", "verify-local", "my-slm", "eu-west-1", "--course", "classification")
	if code != exitOK || !strings.Contains(stdout, "Answer:    German (deu)\n") || !strings.Contains(stdout, "Latency:   ") ||
		!strings.Contains(stdout, "eu-west-1") || strings.Contains(stdout, "Cloud costs") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if !strings.HasPrefix(got, "/endpoints/my-slm/invocations ") || !strings.Contains(got, `"content":"Guten Morgen, wie geht es dir?"`) {
		t.Errorf("the endpoint got %q", got)
	}
	for _, args := range [][]string{{}, {"a", "b", "c"}} {
		if code, _, _ := cli(t, append([]string{"agent", "verify-local"}, args...)...); code != exitUsage {
			t.Errorf("verify-local %q: exit %d", args, code)
		}
	}
}
