package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// nodeDir holds the Node.js clients and their package-lock.json;
// scripts/deps.sh runs npm ci there.
const nodeDir = "node"

// sdkResult is what e2e/node/chat_stream.mjs prints.
type sdkResult struct {
	Models []string `json:"models"`
	Whole  struct {
		Text         string `json:"text"`
		FinishReason string `json:"finish_reason"`
		Model        string `json:"model"`
		Usage        *usage `json:"usage"`
	} `json:"whole"`
	Stream struct {
		Chunks       int      `json:"chunks"`
		Text         string   `json:"text"`
		Roles        []string `json:"roles"`
		FinishReason string   `json:"finish_reason"`
		Usage        *usage   `json:"usage"`
		IDs          int      `json:"ids"`
		Error        string   `json:"error"`
	} `json:"stream"`
}

// needNode skips without Node.js and fails without the installed SDK.
func needNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", "openai", "package.json")); err != nil {
		t.Fatalf("the OpenAI SDK is not installed in e2e/node: run scripts/deps.sh (npm ci there): %v", err)
	}
	return node
}

// runSDK runs chat_stream.mjs against the server and decodes its report.
func runSDK(t *testing.T, node string, s *Server, model, question string, args ...string) sdkResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	argv := append([]string{"chat_stream.mjs", s.Inference + "/v1", model, question}, args...)
	cmd := exec.CommandContext(ctx, node, argv...)
	cmd.Dir = nodeDir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node chat_stream.mjs: %v\n%s", err, stderr.String())
	}
	var r sdkResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	return r
}

// TestOpenAINodeSDK is the acceptance test: the OpenAI Node SDK
// lists the models, gets a whole chat completion, and streams one from
// /v1/chat/completions with at least one chunk and non-empty text. A
// stream the SDK cannot parse yields zero chunks without an error, so the
// chunks are counted.
func TestOpenAINodeSDK(t *testing.T) {
	needE2E(t)
	node := needNode(t)
	s := startChat(t, "toychat", nil)
	r := runSDK(t, node, s, "toychat", "What does cruft mean?", "40")
	if !slices.Contains(r.Models, "toychat") {
		t.Errorf("models.list = %v", r.Models)
	}
	if r.Whole.Text == "" || r.Whole.Model != "toychat" || r.Whole.Usage == nil || r.Whole.Usage.CompletionTokens == 0 {
		t.Errorf("whole completion %+v", r.Whole)
	}
	st := r.Stream
	if st.Error != "" || st.Chunks < 1 || st.Text == "" {
		t.Fatalf("stream: %d chunks, text %q, error %q", st.Chunks, st.Text, st.Error)
	}
	if !slices.Equal(st.Roles, []string{"assistant"}) || st.IDs != 1 {
		t.Errorf("stream roles %v, %d ids", st.Roles, st.IDs)
	}
	if st.FinishReason != r.Whole.FinishReason || st.Text != r.Whole.Text {
		t.Errorf("temperature 0: streamed %q (%s), whole %q (%s)", st.Text, st.FinishReason, r.Whole.Text, r.Whole.FinishReason)
	}
	if st.Usage == nil || *st.Usage != *r.Whole.Usage {
		t.Errorf("stream usage %+v, whole usage %+v", st.Usage, r.Whole.Usage)
	}
}
