package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// prompt is a rendered chat prompt in the toy model's template, sent as a
// generation request's inputs.
const prompt = "<|user|>What does cruft mean?<|end|><|assistant|>"

// TestGenerativeChatModel runs the schema and streaming checks
// against the real toy chat model in a real worker.
func TestGenerativeChatModel(t *testing.T) {
	s := startChat(t, "toychat", nil)
	t.Run("jsonlines stream honours max_new_tokens", func(t *testing.T) { checkMaxNewTokens(t, s) })
	t.Run("chat honours max_tokens", func(t *testing.T) { checkMaxTokens(t, s) })
	t.Run("temperature 0 repeats itself", func(t *testing.T) { checkGreedy(t, s) })
	t.Run("schema errors are 400s naming the field", func(t *testing.T) { checkSchemaErrors(t, s) })
	t.Run("max_new_tokens in chat is ignored with a warning", func(t *testing.T) { checkWarning(t, s) })
	t.Run("event stream on predictions when asked", func(t *testing.T) { checkEventStream(t, s) })
}

func checkMaxNewTokens(t *testing.T, s *Server) {
	for _, n := range []int{1, 4, 12} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			body := fmt.Sprintf(`{"inputs": %q, "parameters": {"max_new_tokens": %d, "temperature": 0.1}, "stream": true}`, prompt, n)
			a := call(t, http.MethodPost, s.Inference+"/invocations", body)
			if a.code != http.StatusOK || a.header.Get("Content-Type") != "application/jsonlines" {
				t.Fatalf("answer %d %q: %s", a.code, a.header.Get("Content-Type"), a.body)
			}
			lines := jsonLines(t, a.body)
			if len(lines) < 1 || len(lines) > n+1 {
				t.Fatalf("%d lines for max_new_tokens=%d: %s", len(lines), n, a.body)
			}
			checkFinalLine(t, lines, n)
		})
	}
}

// checkFinalLine checks the stream's shape: a line per token carrying only
// that token, then one last line with "token": null that ends the stream;
// that its generated_text is the tokens' texts joined; and that its usage
// counts them within the limit n.
func checkFinalLine(t *testing.T, lines []genLine, n int) {
	t.Helper()
	var text strings.Builder
	tokens := 0
	for i, l := range lines {
		final := i == len(lines)-1
		if (l.FinishReason != nil) != final || (l.Token == nil) != final {
			t.Fatalf("line %d of %d: token %v, finish_reason %v", i, len(lines), l.Token, l.FinishReason)
		}
		if !final && (l.GeneratedText != nil || l.Usage != nil || l.Error != "") {
			t.Fatalf("token line %d carries more than its token: %+v", i, l)
		}
		if l.Token != nil {
			tokens++
			text.WriteString(l.Token.Text)
		}
	}
	last := lines[len(lines)-1]
	if last.Error != "" {
		t.Errorf("last line has error %q", last.Error)
	}
	if last.GeneratedText == nil || *last.GeneratedText != text.String() {
		t.Errorf("generated_text %v, tokens say %q", last.GeneratedText, text.String())
	}
	reason := *last.FinishReason
	if reason != "length" && reason != "eos" && reason != "stop" {
		t.Errorf("finish_reason %q", reason)
	}
	if last.Usage == nil || last.Usage.CompletionTokens != tokens || tokens > n || (reason == "length") != (tokens == n) {
		t.Errorf("usage %+v, %d tokens, finish_reason %s, limit %d", last.Usage, tokens, reason, n)
	}
}

func checkMaxTokens(t *testing.T, s *Server) {
	const n = 4
	c := decodeCompletion(t, call(t, http.MethodPost, s.Inference+"/v1/chat/completions",
		chatBody("toychat", "What is a kludge?", fmt.Sprintf(`"max_tokens": %d`, n), `"temperature": 0.1`)))
	if c.Model != "toychat" || c.Usage.CompletionTokens > n || c.Usage.TotalTokens != c.Usage.PromptTokens+c.Usage.CompletionTokens {
		t.Errorf("completion %+v", c)
	}
	if (c.Choices[0].FinishReason == "length") != (c.Usage.CompletionTokens == n) || c.Choices[0].Message.Role != "assistant" {
		t.Errorf("choice %+v with usage %+v", c.Choices[0], c.Usage)
	}
	a := call(t, http.MethodPost, s.Inference+"/v1/chat/completions",
		chatBody("toychat", "What is a kludge?", fmt.Sprintf(`"max_tokens": %d`, n), `"stream": true`,
			`"stream_options": {"include_usage": true}`))
	cs := readChatStream(t, a.body)
	if cs.usage == nil || cs.usage.CompletionTokens > n || len(cs.chunks) > n+2 {
		t.Errorf("stream of %d chunks, usage %+v", len(cs.chunks), cs.usage)
	}
}

func checkGreedy(t *testing.T, s *Server) {
	body := chatBody("toychat", "Define hack.", `"max_tokens": 30`, `"temperature": 0`)
	first := decodeCompletion(t, call(t, http.MethodPost, s.Inference+"/v1/chat/completions", body))
	second := decodeCompletion(t, call(t, http.MethodPost, s.Inference+"/v1/chat/completions", body))
	if first.Choices[0].Message.Content == "" || first.Choices[0].Message.Content != second.Choices[0].Message.Content {
		t.Errorf("temperature 0 answered %q, then %q", first.Choices[0].Message.Content, second.Choices[0].Message.Content)
	}
	streamed := readChatStream(t, call(t, http.MethodPost, s.Inference+"/v1/chat/completions",
		chatBody("toychat", "Define hack.", `"max_tokens": 30`, `"temperature": 0`, `"stream": true`)).body)
	if streamed.text != first.Choices[0].Message.Content || streamed.finish != first.Choices[0].FinishReason {
		t.Errorf("streamed %q (%s), whole %q (%s)", streamed.text, streamed.finish, first.Choices[0].Message.Content, first.Choices[0].FinishReason)
	}
}

func checkSchemaErrors(t *testing.T, s *Server) {
	chat, gen := s.Inference+"/v1/chat/completions", s.Inference+"/predictions/toychat"
	cases := []struct {
		name, url, body, field string
	}{
		{"no messages or inputs", chat, `{"model": "toychat"}`, "messages"},
		{"messages not a list", chat, `{"model": "toychat", "messages": "hi"}`, "messages"},
		{"bad role", chat, `{"model": "toychat", "messages": [{"role": "robot", "content": "hi"}]}`, "messages[0].role"},
		{"content missing", chat, `{"model": "toychat", "messages": [{"role": "user"}]}`, "messages[0].content"},
		{"max_tokens a string", chat, chatBody("toychat", "hi", `"max_tokens": "ten"`), "max_tokens"},
		{"temperature negative", chat, chatBody("toychat", "hi", `"temperature": -1`), "temperature"},
		{"stream not a boolean", chat, chatBody("toychat", "hi", `"stream": "yes"`), "stream"},
		{"model not a string", chat, `{"model": 5, "messages": [{"role": "user", "content": "hi"}]}`, "model"},
		{"inputs a number", gen, `{"inputs": 5}`, "inputs"},
		{"max_new_tokens zero", gen, `{"inputs": "hi", "parameters": {"max_new_tokens": 0}}`, "parameters.max_new_tokens"},
		{"parameters a list", gen, `{"inputs": "hi", "parameters": []}`, "parameters"},
		{"top_p too large", gen, `{"inputs": "hi", "parameters": {"top_p": 2}}`, "parameters.top_p"},
		{"not JSON", gen, `hi`, "JSON"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := problemOf(t, call(t, http.MethodPost, c.url, c.body), http.StatusBadRequest)
			if !strings.Contains(msg, c.field) {
				t.Errorf("message %q does not name %s", msg, c.field)
			}
		})
	}
}

func checkWarning(t *testing.T, s *Server) {
	for _, stream := range []string{"false", "true"} {
		t.Run("stream "+stream, func(t *testing.T) {
			a := call(t, http.MethodPost, s.Inference+"/v1/chat/completions",
				chatBody("toychat", "What does grok mean?", `"max_tokens": 3`, `"max_new_tokens": 50`, `"stream": `+stream,
					`"stream_options": {"include_usage": true}`))
			if w := a.header.Get("X-Switchyard-Warning"); !strings.Contains(w, "max_new_tokens") {
				t.Errorf("X-Switchyard-Warning = %q", w)
			}
			var used int
			if stream == "true" {
				used = readChatStream(t, a.body).usage.CompletionTokens
			} else {
				used = decodeCompletion(t, a).Usage.CompletionTokens
			}
			if used > 3 {
				t.Errorf("%d tokens: max_new_tokens overrode max_tokens", used)
			}
		})
	}
}

func checkEventStream(t *testing.T, s *Server) {
	body := fmt.Sprintf(`{"inputs": %q, "parameters": {"max_new_tokens": 6}, "stream": true}`, prompt)
	a := call(t, http.MethodPost, s.Inference+"/predictions/toychat", body, "Accept", "text/event-stream")
	if a.code != http.StatusOK || a.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("answer %d %q: %s", a.code, a.header.Get("Content-Type"), a.body)
	}
	var joined []byte
	for _, d := range sseData(t, a.body) {
		joined = append(joined, d+"\n"...)
	}
	checkFinalLine(t, jsonLines(t, joined), 6)
}
