package frontend

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
)

func TestChatCompletion(t *testing.T) {
	f := newFake("chat")
	completion := `{"id":"chatcmpl-1","object":"chat.completion","model":"gpt2-hub-id",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`
	f.respond = func(_ string, j *batching.Job) {
		j.Finish(&message.Response{Code: 200, Body: []byte(completion), Props: []message.Prop{
			{Key: "content-type", Value: "application/json"}, {Key: "x-switchyard-warning", Value: "max_new_tokens is ignored in a chat request; use max_tokens"},
		}})
	}
	ts := startServer(t, f)
	resp, body := ts.do(t, "POST", ts.inf+"/v1/chat/completions", `{"model":"chat","messages":[],"max_new_tokens":3}`, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d %s", resp.StatusCode, body)
	}
	var got struct {
		Model   string `json:"model"`
		Object  string `json:"object"`
		Choices []struct {
			Message struct{ Content string } `json:"message"`
		} `json:"choices"`
		Usage chatUsage `json:"usage"`
	}
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	if got.Model != "chat" || got.Object != "chat.completion" || got.Choices[0].Message.Content != "hi" || got.Usage.TotalTokens != 4 {
		t.Errorf("answer %s", body)
	}
	if !strings.Contains(resp.Header.Get("X-Switchyard-Warning"), "max_new_tokens") {
		t.Errorf("warning header %q", resp.Header.Get("X-Switchyard-Warning"))
	}
}

// chatChunk is one chat.completion.chunk event, as a client reads it.
type chatChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role      string          `json:"role"`
			Content   *string         `json:"content"`
			ToolCalls []toolCallDelta `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *chatUsage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

// chatEvents posts a streamed chat request and returns the chunks of the
// answer, checking the framing: an event stream ending with [DONE].
func chatEvents(t *testing.T, ts *testServer, body string) []chatChunk {
	t.Helper()
	resp, raw := ts.do(t, "POST", ts.inf+"/v1/chat/completions", body, nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != contentTypeSSE {
		t.Fatalf("answer %d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
	}
	data := events(t, string(raw))
	if data[len(data)-1] != "[DONE]" {
		t.Fatalf("last event %q", data[len(data)-1])
	}
	var chunks []chatChunk
	for _, d := range data[:len(data)-1] {
		var c chatChunk
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("event %q: %v", d, err)
		}
		chunks = append(chunks, c)
	}
	return chunks
}

// text joins the content of a chat stream's chunks.
func text(chunks []chatChunk) string {
	var b strings.Builder
	for _, c := range chunks {
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				b.WriteString(*ch.Delta.Content)
			}
		}
	}
	return b.String()
}

// finishOf returns the finish chunk, failing unless there is exactly one.
func finishOf(t *testing.T, chunks []chatChunk) chatChunk {
	t.Helper()
	var found []chatChunk
	for _, c := range chunks {
		if len(c.Choices) == 1 && c.Choices[0].FinishReason != nil {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d finish chunks in %+v", len(found), chunks)
	}
	return found[0]
}

func TestChatStream(t *testing.T) {
	// The worker's format: a line per token, then a last line whose token is null.
	final := `{"token":null,"generated_text":"Hi there!","finish_reason":"eos",` +
		`"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}` + "\n"
	f := newFake("chat")
	streaming(f, jsonLines, nil, tokenLine(1, "Hi"), tokenLine(2, " there")+tokenLine(3, "!"), final)
	ts := startServer(t, f)
	chunks := chatEvents(t, ts, `{"model":"chat","messages":[],"stream":true,"stream_options":{"include_usage":true}}`)
	if got := text(chunks); got != "Hi there!" {
		t.Errorf("text %q", got)
	}
	// three text chunks (the first with the role), the finish chunk, the usage chunk
	if len(chunks) != 5 {
		t.Errorf("%d chunks: %+v", len(chunks), chunks)
	}
	for i, c := range chunks {
		if c.Object != "chat.completion.chunk" || c.Model != "chat" || c.ID != chunks[0].ID || !strings.HasPrefix(c.ID, "chatcmpl-") || c.Created == 0 {
			t.Errorf("chunk %d: %+v", i, c)
		}
		if role := i == 0; len(c.Choices) > 0 && (c.Choices[0].Delta.Role == "assistant") != role {
			t.Errorf("chunk %d role %q", i, c.Choices[0].Delta.Role)
		}
	}
	if fin := finishOf(t, chunks); *fin.Choices[0].FinishReason != "stop" || fin.Error != nil {
		t.Errorf("finish chunk %+v", fin)
	}
	last := chunks[len(chunks)-1]
	if len(last.Choices) != 0 || last.Usage == nil || *last.Usage != (chatUsage{PromptTokens: 5, CompletionTokens: 3, TotalTokens: 8}) {
		t.Errorf("usage chunk %+v", last)
	}
}

func TestChatStreamEndings(t *testing.T) {
	died := fmt.Errorf("%w: worker 1 exited", api.ErrWorkerDied)
	cases := []struct {
		name     string
		chunks   []string
		closeErr error
		usage    bool
		text     string
		finish   string
		errMsg   string
		tokens   int // completion tokens in the usage chunk; -1: no usage chunk
	}{
		{"length", []string{tokenLine(1, "a"), `{"token":null,"generated_text":"a","finish_reason":"length"}` + "\n"}, nil, false, "a", "length", "", -1},
		{"no final line", []string{tokenLine(1, "a"), tokenLine(2, "b")}, nil, true, "ab", "stop", "", 2},
		{"final line with usage", []string{tokenLine(1, "a"), tokenLine(2, "b"),
			`{"token":null,"generated_text":"ab","finish_reason":"eos","usage":{"prompt_tokens":4,"completion_tokens":2,"total_tokens":6}}` + "\n"},
			nil, true, "ab", "stop", "", 2},
		{"generated_text is not sent again after token texts", []string{tokenLine(1, "ab"), tokenLine(2, ""),
			`{"token":null,"generated_text":"a","finish_reason":"stop"}` + "\n"}, nil, false, "ab", "stop", "", -1},
		{"final line carrying a token", []string{tokenLine(1, "a"),
			`{"token":{"id":2,"text":"b"},"generated_text":"ab","finish_reason":"length"}` + "\n"}, nil, true, "ab", "length", "", 2},
		{"error line after tokens", []string{tokenLine(1, "a"), tokenLine(2, "b"),
			`{"token":null,"generated_text":"ab","finish_reason":"error","error":"engine: boom","usage":{"prompt_tokens":1,"completion_tokens":2,"total_tokens":3}}` + "\n"},
			nil, true, "ab", "error", "engine: boom", 2},
		{"worker error line", []string{tokenLine(1, "a"), `{"token":null,"finish_reason":"error","error":"CUDA error"}` + "\n"}, nil, false, "a", "error", "CUDA error", -1},
		{"canceled", []string{`{"token":null,"finish_reason":"canceled"}` + "\n"}, nil, false, "", "error", "generation canceled", -1},
		{"stream broken", []string{tokenLine(1, "a")}, died, true, "a", "error", "worker died: worker 1 exited", 1},
		{"plain text lines", []string{"hello\n", "world"}, nil, false, "helloworld", "stop", "", -1},
		{"only a final line", []string{`{"generated_text":"whole","finish_reason":"stop"}` + "\n"}, nil, false, "whole", "stop", "", -1},
		{"lines after the end are dropped", []string{`{"finish_reason":"eos"}` + "\n" + tokenLine(1, "late")}, nil, false, "", "stop", "", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake("chat")
			streaming(f, jsonLines, c.closeErr, c.chunks...)
			ts := startServer(t, f)
			body := fmt.Sprintf(`{"model":"chat","stream":true,"stream_options":{"include_usage":%v}}`, c.usage)
			chunks := chatEvents(t, ts, body)
			if got := text(chunks); got != c.text {
				t.Errorf("text %q, want %q", got, c.text)
			}
			fin := finishOf(t, chunks)
			if *fin.Choices[0].FinishReason != c.finish {
				t.Errorf("finish_reason %q, want %q", *fin.Choices[0].FinishReason, c.finish)
			}
			if (fin.Error == nil) != (c.errMsg == "") || fin.Error != nil && fin.Error.Message != c.errMsg {
				t.Errorf("error %+v, want %q", fin.Error, c.errMsg)
			}
			last := chunks[len(chunks)-1]
			if c.tokens >= 0 && (last.Usage == nil || last.Usage.CompletionTokens != c.tokens) {
				t.Errorf("usage chunk %+v, want %d completion tokens", last, c.tokens)
			}
			if c.tokens < 0 && last.Usage != nil {
				t.Errorf("usage chunk %+v not asked for", last)
			}
		})
	}
}

// TestChatStreamPassThrough checks that a stream that is not JSON lines
// (a handler that writes its own events) goes out as it came.
func TestChatStreamPassThrough(t *testing.T) {
	f := newFake("chat")
	streaming(f, contentTypeSSE, nil, "data: {}\n\n", sseDone)
	ts := startServer(t, f)
	resp, body := ts.do(t, "POST", ts.inf+"/v1/chat/completions", `{"model":"chat","stream":true}`, nil)
	if resp.StatusCode != 200 || string(body) != "data: {}\n\n"+sseDone {
		t.Errorf("answer %d %q", resp.StatusCode, body)
	}
}

func TestV1Models(t *testing.T) {
	ts := startServer(t, newFake("b", "a"))
	created := ts.started.Unix()
	cases := []struct {
		name, method, path string
		code               int
		want               string
	}{
		{"list", "GET", "/v1/models", 200, fmt.Sprintf(`{"object":"list","data":[`+
			`{"id":"a","object":"model","created":%d,"owned_by":"switchyard"},`+
			`{"id":"b","object":"model","created":%[1]d,"owned_by":"switchyard"}]}`, created)},
		{"one", "GET", "/v1/models/b", 200, fmt.Sprintf(`{"id":"b","object":"model","created":%d,"owned_by":"switchyard"}`, created)},
		{"head", "HEAD", "/v1/models", 200, ""},
		{"unknown", "GET", "/v1/models/zz", 404, ""},
		{"bad name", "GET", "/v1/models/a%21", 400, ""},
		{"post", "POST", "/v1/models", 405, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := ts.do(t, c.method, ts.inf+c.path, "", nil)
			if resp.StatusCode != c.code {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.code, body)
			}
			if c.code != 200 {
				mustOpenAIError(t, resp, body)
				return
			}
			if c.want != "" && compact(t, body) != compact(t, []byte(c.want)) {
				t.Errorf("body %s\nwant %s", body, c.want)
			}
		})
	}
	resp, _ := ts.do(t, "GET", ts.mgmt+"/v1/models", "", nil)
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("management listener answers /v1/models: %d", resp.StatusCode)
	}
}

func TestV1ModelsEmpty(t *testing.T) {
	ts := startServer(t, newFake())
	_, body := ts.do(t, "GET", ts.inf+"/v1/models", "", nil)
	if got := compact(t, body); got != `{"data":[],"object":"list"}` {
		t.Errorf("body %s", got)
	}
}

// compact re-encodes JSON with sorted keys and no spaces, for comparison.
func compact(t *testing.T, body []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
