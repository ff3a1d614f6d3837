package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// Files the worker-side tests provide: a fake vllm with vLLM's async
// engine API, and a tool that writes a tiny wheel.
const (
	fakeVLLM  = "../pyruntime/tests/fakes/vllm/__init__.py"
	makeWheel = "../pyruntime/tests/make_wheel.py"
)

// wheelModel answers with the greeting of the package its requirements.txt
// installs, and where that package was imported from.
const wheelModel = `import sytoy
from djl_python import Output


def handle(inputs):
    if inputs.is_empty():
        return None
    return Output().add_as_json({"greeting": sytoy.greet(inputs.get_as_string()), "file": sytoy.__file__})
`

// backendModels writes the model folders of TestGenerativeBackends into
// store and returns their names.
func backendModels(t *testing.T, store string) map[string]string {
	t.Helper()
	WriteModel(t, store, "trt", map[string]string{"serving.properties": "engine=Python\noption.rolling_batch=trtllm\n"})
	vllmDir := WriteModel(t, store, "vllmchat", map[string]string{"serving.properties": "engine=Python\noption.rolling_batch=vllm\n"})
	fake, err := os.ReadFile(fakeVLLM)
	if err != nil {
		t.Fatalf("the fake vllm of the worker tests: %v", err)
	}
	// The model folder is on the worker's path, so the fake imports as vllm.
	WriteModel(t, vllmDir, "vllm", map[string]string{"__init__.py": string(fake)})
	for name, req := range map[string]string{"wheel": "sytoy==0.1\n", "nowheel": "sytoy==9.9\n"} {
		dir := WriteModel(t, store, name, map[string]string{"model.py": wheelModel, "requirements.txt": req})
		buildWheel(t, filepath.Join(dir, "wheels"))
	}
	return map[string]string{"trt": api.StatusFailed, "vllmchat": api.StatusHealthy, "wheel": api.StatusHealthy, "nowheel": api.StatusFailed}
}

// buildWheel writes sytoy-0.1-py3-none-any.whl into dir.
func buildWheel(t *testing.T, dir string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, makeWheel, dir, "--name", "sytoy", "--version", "0.1").CombinedOutput()
	if err != nil {
		t.Fatalf("make_wheel.py: %v\n%s", err, out)
	}
}

// TestGenerativeBackends checks the backend choice per rolling_batch and
// the per-model requirements: trtllm without tensorrt_llm fails the load
// with ModuleNotFoundError; a vllm model refuses a rendered string in
// inputs and serves chat; a requirements.txt with a local wheel installs
// and imports, and one that cannot be met fails the load with pip's words.
func TestGenerativeBackends(t *testing.T) {
	needE2E(t)
	store := t.TempDir()
	want := backendModels(t, store)
	// A fresh cache, so that pip really runs instead of finding an earlier
	// run's install.
	s := StartServer(t, Options{Store: store, Env: []string{"SWITCHYARD_CACHE_DIR=" + testutil.ShortDir(t)}})
	for name, status := range want {
		s.WaitStatus(loadLimit, status, name)
	}
	t.Run("trtllm without tensorrt_llm", func(t *testing.T) {
		rec := s.Describe("trt")
		for _, part := range []string{"ModuleNotFoundError", "tensorrt_llm"} {
			if !strings.Contains(rec.LastError, part) {
				t.Errorf("lastError does not name %s: %q", part, rec.LastError)
			}
		}
	})
	t.Run("vllm refuses a raw string", func(t *testing.T) { checkRawString(t, s) })
	t.Run("requirements from a local wheel", func(t *testing.T) { checkWheel(t, s) })
	t.Run("unmet requirements fail the load", func(t *testing.T) {
		if e := s.Describe("nowheel").LastError; !strings.Contains(e, "sytoy==9.9") || !strings.Contains(e, "pip") {
			t.Errorf("lastError %q", e)
		}
	})
}

func checkRawString(t *testing.T, s *Server) {
	raw := `{"inputs": "<|user|>hi<|end|><|assistant|>", "parameters": {"max_new_tokens": 4}}`
	a := call(t, http.MethodPost, s.Inference+"/predictions/vllmchat", raw)
	if msg := problemOf(t, a, http.StatusBadRequest); !strings.Contains(msg, "ChatCompletionRequest or CompletionRequest") {
		t.Errorf("message %q", msg)
	}
	c := decodeCompletion(t, call(t, http.MethodPost, s.Inference+"/v1/chat/completions", chatBody("vllmchat", "hi", `"max_tokens": 3`)))
	if c.Model != "vllmchat" || c.Choices[0].Message.Content == "" || c.Usage.CompletionTokens != 3 {
		t.Errorf("chat through vllm: %+v", c)
	}
	cs := readChatStream(t, call(t, http.MethodPost, s.Inference+"/v1/chat/completions",
		chatBody("vllmchat", "hi", `"max_tokens": 3`, `"stream": true`)).body)
	if cs.text != c.Choices[0].Message.Content || cs.finish != "length" {
		t.Errorf("streamed %+v, whole %q", cs, c.Choices[0].Message.Content)
	}
}

func checkWheel(t *testing.T, s *Server) {
	a := call(t, http.MethodPost, s.Inference+"/predictions/wheel", "bob")
	var got struct{ Greeting, File string }
	if a.code != http.StatusOK || json.Unmarshal(a.body, &got) != nil {
		t.Fatalf("answer %d %s", a.code, a.body)
	}
	// pip installs into a folder of the model's own, never into its folder.
	if got.Greeting != "sytoy 0.1 greets bob" || strings.Contains(got.File, "/wheel/") || !strings.HasSuffix(got.File, "sytoy/__init__.py") {
		t.Errorf("answer %+v", got)
	}
}
