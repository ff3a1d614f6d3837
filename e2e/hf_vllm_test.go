package e2e

import (
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// vllmPythonEnv names an interpreter that has vLLM (scripts/vllm_cpu.sh
// makes one for the CPU); without it TestHFVLLM skips, as in CI.
const vllmPythonEnv = "SWITCHYARD_VLLM_PYTHON"

// TestHFVLLM serves the causal-LM fixture from serving.properties alone with
// option.rolling_batch=vllm, on vLLM's engine in the interpreter that
// SWITCHYARD_VLLM_PYTHON names (the model's option.pythonExecutable): a
// greedy chat request answers what model.generate answers in-process, and a
// streamed one is one line per token. vLLM starts slowly (its engine spawns
// processes that import it again), so the load may take minutes.
func TestHFVLLM(t *testing.T) {
	needE2E(t)
	vllm := os.Getenv(vllmPythonEnv)
	if vllm == "" {
		t.Skipf("%s names no interpreter with vLLM (scripts/vllm_cpu.sh makes one)", vllmPythonEnv)
	}
	fx := testutil.Fixtures(t, "qwen2-chat")
	folder := absFixture(t, fx, "qwen2-chat")
	store := t.TempDir()
	hfFolder(t, store, "qv", "engine=Python", "option.model_id="+folder, "option.rolling_batch=vllm",
		"option.dtype=fp32", "option.max_model_len=512", "option.pythonExecutable="+vllm,
		"option.model_loading_timeout=900")
	s := StartServer(t, Options{Store: store, Env: []string{"VLLM_CPU_KVCACHE_SPACE=1", "HF_HUB_OFFLINE=1"}})
	s.WaitStatus(15*time.Minute, api.StatusHealthy, "qv")
	if rb := s.Describe("qv").RollingBatch; rb != "vllm" {
		t.Errorf("rolling batch %q, want vllm", rb)
	}
	messages := []map[string]string{{"role": "user", "content": "What is the capital of Japan?"}}
	var want chatOracle
	oracle(t, map[string]any{"kind": "chat", "folder": folder, "messages": messages, "max_new_tokens": 24}, &want)
	c := decodeCompletion(t, call(t, http.MethodPost, s.Inference+"/v1/chat/completions",
		chatBody("qv", "What is the capital of Japan?", `"max_tokens": 24`, `"temperature": 0`)))
	if c.Choices[0].Message.Content != want.Text || c.Usage.CompletionTokens != len(want.IDs) {
		t.Errorf("vLLM answered %q in %d tokens; model.generate %q in %d", c.Choices[0].Message.Content,
			c.Usage.CompletionTokens, want.Text, len(want.IDs))
	}
	checkTokenStream(t, s, "qv", want)
}
