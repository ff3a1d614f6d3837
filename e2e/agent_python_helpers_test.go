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
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// The Python agent stack's helpers: the example agent of examples/agent run
// as its users run it, the models it reaches, the client scripts of
// e2e/python.

// exampleAgent is the Python example agent's folder.
const exampleAgent = "../examples/agent"

// recorderModel is langid (its model.py renamed langid_model.py beside it)
// with every request body it receives appended, as one JSON string a line,
// to requests.jsonl in its folder: the small model's calls as switchyard
// handed them to the worker.
const recorderModel = `import json
import os

import langid_model

LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "requests.jsonl")


def handle(inputs):
    if not inputs.is_empty():
        with open(LOG, "a", encoding="utf-8") as f:
            for item in inputs.get_batches():
                f.write(json.dumps(bytes(item.get_as_bytes() or b"").decode()) + "\n")
    return langid_model.handle(inputs)
`

// genModel answers the generation schema ({"inputs", "parameters"}) with
// its inputs as generated_text, in the list TGI and LMI answer, and
// records each body as the recorder does.
const genModel = `import json
import os

from djl_python import Output

LOG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "requests.jsonl")


def handle(inputs):
    if inputs.is_empty():
        return None
    body = bytes(inputs.get_as_bytes() or b"").decode()
    with open(LOG, "a", encoding="utf-8") as f:
        f.write(json.dumps(body) + "\n")
    out = Output()
    out.add_property("content-type", "application/json")
    out.add_as_json([{"generated_text": json.loads(body)["inputs"]}])
    return out
`

// pythonModels is the server the Python stack reaches: the recorder as
// "slm" (the tool's endpoint), langid, the toolcaller fixture (the
// stand-in planner), the gated planner of agent_test.go and the
// generation echo "gen".
type pythonModels struct {
	*Server
	slm  string // the recorder's folder
	gate string // the gated planner's folder
	gen  string // the generation echo's folder
}

func startPythonModels(t *testing.T) pythonModels {
	t.Helper()
	needE2E(t)
	store := t.TempDir()
	testutil.CopyDir(t, langidExample, filepath.Join(store, "langid"))
	slm := testutil.CopyDir(t, langidExample, filepath.Join(store, "slm"))
	if err := os.Rename(filepath.Join(slm, "model.py"), filepath.Join(slm, "langid_model.py")); err != nil {
		t.Fatal(err)
	}
	mustWrite(t, filepath.Join(slm, "model.py"), recorderModel)
	testutil.CopyDir(t, toolFixture, filepath.Join(store, "toolcaller"))
	fixture, err := filepath.Abs(filepath.Join(toolFixture, "model.py"))
	if err != nil {
		t.Fatal(err)
	}
	gate := WriteModel(t, store, "gatedplanner", map[string]string{
		"model.py": fmt.Sprintf(gatedPlanner, fixture), "serving.properties": "engine=Python\noption.rolling_batch=scheduler\n",
	})
	gen := WriteModel(t, store, "gen", map[string]string{"model.py": genModel, "serving.properties": "engine=Python\n"})
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(loadLimit, api.StatusHealthy, "langid", "slm", "toolcaller", "gatedplanner", "gen")
	return pythonModels{Server: s, slm: slm, gate: gate, gen: gen}
}

// slmRequests returns the request bodies the recorder has received so far.
func (m pythonModels) slmRequests(t *testing.T) []map[string]any {
	t.Helper()
	return recorded(t, m.slm)
}

// recorded returns the request bodies a recording model in dir has
// received so far.
func recorded(t *testing.T, dir string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "requests.jsonl"))
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var body string
		var req map[string]any
		if json.Unmarshal([]byte(line), &body) != nil || json.Unmarshal([]byte(body), &req) != nil {
			t.Fatalf("recorded request %q is not a JSON object", line)
		}
		out = append(out, req)
	}
	return out
}

// cleanEnv is the test's environment without the variables that configure
// an agent or an AWS client, so that nothing of the machine's leaks in.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "AWS_") || strings.HasPrefix(k, "SLM_") || strings.HasPrefix(k, "REASONING_") ||
			strings.HasPrefix(k, "AGENTCORE_") || strings.HasPrefix(k, "LITELLM_") ||
			k == "CLOUD_REGION" || k == "AGENT_COURSE" || k == "PORT" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// pythonAgentEnv is what a developer exports to run the example agent
// against s: the SDKs' endpoint variables, any credentials, the region,
// the reasoning model (none when planner is ""), the endpoint and course.
func pythonAgentEnv(s *Server, planner string, more ...string) []string {
	env := append(cleanEnv(), "AWS_ENDPOINT_URL_BEDROCK_RUNTIME="+s.Inference, "AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME="+s.Inference,
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "CLOUD_REGION=us-east-1",
		"SLM_ENDPOINT_NAME=slm", "AGENT_COURSE=classification")
	if planner != "" {
		env = append(env, "REASONING_MODEL_ID="+planner)
	}
	return append(env, more...)
}

// pyApp is one of the example's apps (app.py, app_stream.py) serving on a
// free port, stopped when the test ends.
type pyApp struct {
	base string
	log  *testutil.Buffer
}

// pythonStartLimit bounds a Python app's start: importing Strands,
// boto3 and the AgentCore SDK takes a few seconds on a busy machine.
const pythonStartLimit = 90 * time.Second

func startPythonApp(t *testing.T, script string, env []string) pyApp {
	t.Helper()
	dir, err := filepath.Abs(exampleAgent)
	if err != nil {
		t.Fatal(err)
	}
	port := testutil.FreePort(t)
	a := pyApp{base: "http://127.0.0.1:" + port, log: &testutil.Buffer{}}
	cmd := exec.Command(python, script)
	cmd.Dir = dir
	cmd.Env = append(env, "PORT="+port, "PYTHONUNBUFFERED=1")
	exited := startLogged(t, cmd, script, a.log, 20*time.Second)
	deadline := time.Now().Add(pythonStartLimit)
	for !agentPinged(a.base) {
		select {
		case <-exited:
			t.Fatalf("%s exited at start:\n%s", script, a.log.String())
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not answer /ping within %v:\n%s", script, pythonStartLimit, a.log.String())
		}
	}
	return a
}

// runPython runs a script of e2e/python with env and decodes the JSON it
// prints into v.
func runPython(t *testing.T, v any, env []string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, args...)
	cmd.Dir = "python"
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("python %s printed %q: %v\n%s", strings.Join(args, " "), out, err, stderr.String())
	}
}

// sseEvents returns the data of each event of a server-sent event stream,
// and whether every event was framed as "data: <one line>" and a blank line.
func sseEvents(body string) ([]string, bool) {
	var out []string
	framed := strings.HasSuffix(body, "\n\n")
	sc := bufio.NewScanner(strings.NewReader(body))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	blank := true
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			blank = true
		case strings.HasPrefix(line, "data: ") && blank:
			out = append(out, strings.TrimPrefix(line, "data: "))
			blank = false
		default:
			framed = false
		}
	}
	return out, framed
}

// percentiles returns the p50 and p90 of ds (nearest rank).
func percentiles(ds []time.Duration) (time.Duration, time.Duration) {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := func(p float64) time.Duration {
		i := int(p*float64(len(s))+0.999999) - 1
		return s[max(0, min(i, len(s)-1))]
	}
	return rank(0.5), rank(0.9)
}

// invokeAgent posts a prompt to a runtime's /invocations and returns the
// status, the answer and the time it took.
func invokeAgent(t *testing.T, base, prompt string, headers ...string) (int, []byte, time.Duration) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"prompt": prompt})
	start := time.Now()
	a := call(t, http.MethodPost, base+"/invocations", string(body), headers...)
	return a.code, a.body, time.Since(start)
}
