package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// chatExample is the toy chat model shipped with the repository.
const chatExample = "../examples/models/chat"

// loadLimit bounds a model's load in these tests: the chat model loads in
// a few seconds, pip installs take longer, and the machine is shared.
const loadLimit = 2 * time.Minute

// startChat starts a server whose store holds the chat example under the
// name model (plus any extra folders written by more), and waits until
// every model is Healthy.
func startChat(t *testing.T, model string, more func(store string) []string) *Server {
	t.Helper()
	needE2E(t)
	store := t.TempDir()
	testutil.CopyDir(t, chatExample, filepath.Join(store, model))
	names := []string{model}
	if more != nil {
		names = append(names, more(store)...)
	}
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(loadLimit, api.StatusHealthy, names...)
	return s
}

// answer is one HTTP answer, read whole.
type answer struct {
	code   int
	header http.Header
	body   []byte
}

// call sends a request with a JSON body and reads the whole answer;
// headers are name, value pairs.
func call(t testing.TB, method, url, body string, headers ...string) answer {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v (read %q)", method, url, err, b)
	}
	return answer{code: resp.StatusCode, header: resp.Header, body: b}
}

// genLine is one line of a JSON-lines generation stream.
type genLine struct {
	Token *struct {
		ID   int    `json:"id"`
		Text string `json:"text"`
	} `json:"token"`
	GeneratedText *string `json:"generated_text"`
	FinishReason  *string `json:"finish_reason"`
	Usage         *usage  `json:"usage"`
	Error         string  `json:"error"`
}

// usage is OpenAI's token count.
type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// jsonLines decodes a JSON-lines body; every line must be one JSON object
// ending with "\n".
func jsonLines(t testing.TB, body []byte) []genLine {
	t.Helper()
	if len(body) == 0 || body[len(body)-1] != '\n' {
		t.Fatalf("JSON-lines body does not end with a newline: %q", body)
	}
	var out []genLine
	for _, l := range bytes.Split(bytes.TrimSuffix(body, []byte{'\n'}), []byte{'\n'}) {
		var g genLine
		if err := json.Unmarshal(l, &g); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, g)
	}
	return out
}

// sseData returns the data of each event of an event-stream body, checking
// that it ends with data: [DONE] (which is not returned).
func sseData(t testing.TB, body []byte) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, d)
		} else if sc.Text() != "" {
			t.Fatalf("event-stream line %q is not a data field", sc.Text())
		}
	}
	if len(out) == 0 || out[len(out)-1] != "[DONE]" {
		t.Fatalf("event stream does not end with [DONE]: %q", body)
	}
	return out[:len(out)-1]
}

// chunk is an OpenAI chat.completion.chunk.
type chunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Delta struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *usage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// chatStream is a streamed chat answer, decoded.
type chatStream struct {
	chunks []chunk
	text   string
	finish string
	usage  *usage
	err    string
}

// readChatStream decodes an event-stream chat answer.
func readChatStream(t testing.TB, body []byte) chatStream {
	t.Helper()
	var cs chatStream
	for _, d := range sseData(t, body) {
		var c chunk
		if err := json.Unmarshal([]byte(d), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("event %q is not a chat.completion.chunk (%v)", d, err)
		}
		cs.chunks = append(cs.chunks, c)
		if c.Usage != nil {
			cs.usage = c.Usage
		}
		if c.Error != nil {
			cs.err = c.Error.Message
		}
		for _, ch := range c.Choices {
			cs.text += ch.Delta.Content
			if ch.FinishReason != nil {
				cs.finish = *ch.FinishReason
			}
		}
	}
	return cs
}

// completion is an OpenAI chat.completion.
type completion struct {
	Object  string `json:"object"`
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage usage `json:"usage"`
}

func decodeCompletion(t testing.TB, a answer) completion {
	t.Helper()
	var c completion
	if a.code != http.StatusOK || json.Unmarshal(a.body, &c) != nil || c.Object != "chat.completion" || len(c.Choices) != 1 {
		t.Fatalf("not a chat.completion: %d %s", a.code, a.body)
	}
	return c
}

// problemOf decodes an error answer of the given status: switchyard's
// {"code", "type", "message"}, or OpenAI's {"error": {"message", ...}} (the
// shape of /v1/...).
func problemOf(t testing.TB, a answer, code int) string {
	t.Helper()
	var p struct {
		Code    int    `json:"code"`
		Type    string `json:"type"`
		Message string `json:"message"`
		Error   *struct {
			Message string `json:"message"`
			Type    string `json:"type"`
		} `json:"error"`
	}
	if a.code != code || json.Unmarshal(a.body, &p) != nil {
		t.Fatalf("want a %d error body, got %d %s", code, a.code, a.body)
	}
	if p.Error != nil && p.Error.Message != "" && p.Error.Type != "" {
		return p.Error.Message
	}
	if p.Code != code || p.Message == "" {
		t.Fatalf("want a %d error body, got %d %s", code, a.code, a.body)
	}
	return p.Message
}

// chatBody is a one-question chat request with more fields appended (each
// `"key": value`).
func chatBody(model, question string, fields ...string) string {
	q, _ := json.Marshal(question)
	parts := append([]string{`"model": "` + model + `"`, `"messages": [{"role": "user", "content": ` + string(q) + `}]`}, fields...)
	return "{" + strings.Join(parts, ", ") + "}"
}
