package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// chatOracle is greedy model.generate after the chat template, in-process.
type chatOracle struct {
	IDs          []int  `json:"ids"`
	Text         string `json:"text"`
	PromptTokens int    `json:"prompt_tokens"`
}

// TestHFGenerate serves the causal-LM fixture from serving.properties alone,
// twice: with rolling_batch=auto (transformers' continuous batching, since
// vLLM is not installed) and rolling_batch=disable (model.generate). For each,
// a greedy chat request answers the same tokens as model.generate called
// in-process with the same chat template, through /v1/chat/completions,
// Converse and InvokeEndpoint; a streamed answer is one line per generated
// token, each carrying the token the model generated, and as many lines as
// completion_tokens; the generation schema answers DJL's shape for disable
// and LMI's for continuous batching; a cut-off answer is counted as length
// in /metrics.
func TestHFGenerate(t *testing.T) {
	needE2E(t)
	fx := testutil.Fixtures(t, "qwen2-chat")
	folder := absFixture(t, fx, "qwen2-chat")
	store := t.TempDir()
	hfFolder(t, store, "qwen-cb", "engine=Python", "option.model_id="+folder)
	hfFolder(t, store, "qwen-gen", "engine=Python", "option.model_id="+folder, "option.rolling_batch=disable")
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(hfLoadLimit, api.StatusHealthy, "qwen-cb", "qwen-gen")
	if rb := s.Describe("qwen-cb").RollingBatch; rb != "transformers" {
		t.Errorf("qwen-cb runs rolling_batch %q, want transformers (auto without vLLM)", rb)
	}
	messages := []map[string]string{{"role": "user", "content": "What is the capital of Japan?"}}
	var want chatOracle
	oracle(t, map[string]any{"kind": "chat", "folder": folder, "messages": messages, "max_new_tokens": 24}, &want)
	t.Logf("model.generate: %d tokens %q", len(want.IDs), want.Text)
	for _, model := range []string{"qwen-cb", "qwen-gen"} {
		t.Run(model, func(t *testing.T) {
			checkChatRoutes(t, s, model, want)
			checkTokenStream(t, s, model, want)
			checkGenerationSchema(t, s, model, folder)
			checkCutOff(t, s, model)
		})
	}
}

// checkChatRoutes asks the same greedy question through three routes.
func checkChatRoutes(t *testing.T, s *Server, model string, want chatOracle) {
	c := decodeCompletion(t, call(t, http.MethodPost, s.Inference+"/v1/chat/completions",
		chatBody(model, "What is the capital of Japan?", `"max_tokens": 24`, `"temperature": 0`)))
	if c.Choices[0].Message.Content != want.Text || c.Usage.CompletionTokens != len(want.IDs) || c.Usage.PromptTokens != want.PromptTokens {
		t.Errorf("/v1/chat/completions: %q, usage %+v; want %q in %d tokens after %d", c.Choices[0].Message.Content,
			c.Usage, want.Text, len(want.IDs), want.PromptTokens)
	}
	a := call(t, http.MethodPost, s.Inference+"/model/"+model+"/converse",
		`{"messages": [{"role": "user", "content": [{"text": "What is the capital of Japan?"}]}], "inferenceConfig": {"maxTokens": 24, "temperature": 0}}`)
	var conv struct {
		Output struct {
			Message struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"message"`
		} `json:"output"`
		Usage struct{ OutputTokens int } `json:"usage"`
	}
	if err := json.Unmarshal(a.body, &conv); err != nil || a.code != 200 || len(conv.Output.Message.Content) != 1 ||
		conv.Output.Message.Content[0].Text != want.Text || conv.Usage.OutputTokens != len(want.IDs) {
		t.Errorf("Converse: %d %s; want %q", a.code, a.body, want.Text)
	}
	c = decodeCompletion(t, call(t, http.MethodPost, s.Inference+"/endpoints/"+model+"/invocations",
		`{"messages": [{"role": "user", "content": "What is the capital of Japan?"}], "max_tokens": 24, "temperature": 0}`))
	if c.Choices[0].Message.Content != want.Text {
		t.Errorf("InvokeEndpoint: %q, want %q", c.Choices[0].Message.Content, want.Text)
	}
}

// checkTokenStream streams the answer as JSON lines: one line per generated
// token, each the token model.generate made, then the last line.
func checkTokenStream(t *testing.T, s *Server, model string, want chatOracle) {
	a := call(t, http.MethodPost, s.Inference+"/invocations",
		`{"messages": [{"role": "user", "content": "What is the capital of Japan?"}], "max_tokens": 24, "temperature": 0, "stream": true}`,
		"X-Amzn-SageMaker-Target-Model", model)
	lines := jsonLines(t, a.body)
	var ids []int
	var text strings.Builder
	for _, l := range lines[:len(lines)-1] {
		if l.Token == nil {
			t.Fatalf("a line without a token before the last: %s", a.body)
		}
		ids = append(ids, l.Token.ID)
		text.WriteString(l.Token.Text)
	}
	last := lines[len(lines)-1]
	if last.Usage == nil || last.Usage.CompletionTokens != len(ids) || len(ids) != len(want.IDs) {
		t.Fatalf("%d token lines, last line %s; want %d, one per generated token", len(ids), short(last), len(want.IDs))
	}
	for i := range ids {
		if ids[i] != want.IDs[i] {
			t.Fatalf("token %d is %d, model.generate's is %d", i, ids[i], want.IDs[i])
		}
	}
	if text.String() != want.Text || *last.GeneratedText != want.Text {
		t.Errorf("streamed text %q, generated_text %q; want %q", text.String(), *last.GeneratedText, want.Text)
	}
	sse := readChatStream(t, call(t, http.MethodPost, s.Inference+"/v1/chat/completions",
		chatBody(model, "What is the capital of Japan?", `"max_tokens": 24`, `"temperature": 0`, `"stream": true`,
			`"stream_options": {"include_usage": true}`)).body)
	if sse.text != want.Text || sse.usage == nil || sse.usage.CompletionTokens != len(want.IDs) {
		t.Errorf("SSE stream: %q, usage %+v; want %q in %d tokens", sse.text, sse.usage, want.Text, len(want.IDs))
	}
}

// checkGenerationSchema sends {"inputs", "parameters"}: disable answers as
// DJL's Hugging Face handler and the text-generation pipeline do (a list,
// the prompt included); continuous batching as LMI's rolling batch does
// (one object, the continuation only).
func checkGenerationSchema(t *testing.T, s *Server, model, folder string) {
	prompt := "The capital of France is"
	a := call(t, http.MethodPost, s.Inference+"/predictions/"+model,
		`{"inputs": "`+prompt+`", "parameters": {"max_new_tokens": 6, "do_sample": false}}`)
	var pipe []map[string]string
	oracle(t, map[string]any{"kind": "generation", "folder": folder, "prompt": prompt, "max_new_tokens": 6}, &pipe)
	if model == "qwen-gen" {
		var got []map[string]string
		if err := json.Unmarshal(a.body, &got); err != nil || len(got) != 1 || got[0]["generated_text"] != pipe[0]["generated_text"] {
			t.Errorf("generation schema: %d %s; want the pipeline's %v", a.code, a.body, pipe)
		}
		return
	}
	var got map[string]string
	if err := json.Unmarshal(a.body, &got); err != nil || prompt+got["generated_text"] != pipe[0]["generated_text"] {
		t.Errorf("generation schema: %d %s; want the continuation of the pipeline's %v", a.code, a.body, pipe)
	}
}

// checkCutOff asks for fewer tokens than the answer needs: finish_reason
// length, and the model's length counter in /metrics goes up.
func checkCutOff(t *testing.T, s *Server, model string) {
	series := `switchyard_generations_total{finish_reason="length",model="` + model + `"}`
	before, _ := sample(s.scrape(), series)
	c := decodeCompletion(t, call(t, http.MethodPost, s.Inference+"/v1/chat/completions",
		chatBody(model, "What is the capital of Japan?", `"max_tokens": 3`, `"temperature": 0`)))
	if c.Choices[0].FinishReason != "length" || c.Usage.CompletionTokens != 3 {
		t.Errorf("max_tokens 3: finish %q after %d tokens, want length after 3", c.Choices[0].FinishReason, c.Usage.CompletionTokens)
	}
	after, _ := sample(s.scrape(), series)
	if before == after || after == "" {
		t.Errorf("%s went from %q to %q, want one more", series, before, after)
	}
}
