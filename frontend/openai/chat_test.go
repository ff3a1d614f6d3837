package openai

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/frontend/genstream"
	"github.com/switchyard/switchyard/internal/testutil"
)

func TestParseChatRequest(t *testing.T) {
	cases := []struct {
		name, body string
		model      string
		usage      bool
		bad        string // part of the 400 message, "" for none
	}{
		{"model and usage", `{"model":"m","stream":true,"stream_options":{"include_usage":true}}`, "m", true, ""},
		{"no model", `{"messages":[]}`, "", false, ""},
		{"null fields", `{"model":null,"stream_options":null}`, "", false, ""},
		{"usage false", `{"stream_options":{"include_usage":false}}`, "", false, ""},
		{"model not a string", `{"model":5}`, "", false, "Field model"},
		{"usage not a boolean", `{"stream_options":{"include_usage":"yes"}}`, "", false, "include_usage"},
		{"options not an object", `{"stream_options":[]}`, "", false, "stream_options"},
		{"not JSON", `nope`, "", false, "not a JSON object"},
		{"null body", `null`, "", false, "not a JSON object"},
		{"array body", `[]`, "", false, "not a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := parseChatRequest([]byte(c.body))
			if c.bad != "" {
				if !errors.Is(err, api.ErrBadRequest) || !strings.Contains(err.Error(), c.bad) {
					t.Fatalf("err = %v, want a 400 naming %q", err, c.bad)
				}
				return
			}
			if err != nil || req.model != c.model || req.includeUsage != c.usage {
				t.Fatalf("parseChatRequest = %+v, %v", req, err)
			}
		})
	}
}

func TestWithModel(t *testing.T) {
	cases := []struct {
		name, body, want string
		ok               bool
	}{
		{"replaced in place", `{"id":"x", "model":"hub/id","choices":[{"a":1}]}`, `{"id":"x","model":"m","choices":[{"a":1}]}`, true},
		{"added", `{"id":"x"}`, `{"id":"x","model":"m"}`, true},
		{"empty object", ` {} `, `{"model":"m"}`, true},
		{"escaped keys kept", `{"a\"b":1,"model":{"deep":true}}`, `{"a\"b":1,"model":"m"}`, true},
		{"array", `[1]`, "", false},
		{"trailing data", `{"a":1}{"b":2}`, "", false},
		{"broken", `{"a":`, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := withModel([]byte(c.body), "m")
			if ok != c.ok || string(got) != c.want {
				t.Errorf("withModel(%s) = %s, %v; want %s, %v", c.body, got, ok, c.want, c.ok)
			}
		})
	}
}

// TestChatFramerWholeCalls: a last line's whole calls go out as
// delta.tool_calls, numbered, when no delta did.
func TestChatFramerWholeCalls(t *testing.T) {
	f := newChatFramer(genstream.ChunkHead{}, false)
	out := string(f.Chunk([]byte(`{"token":null,"generated_text":"","finish_reason":"tool_calls","tool_calls":[` +
		`{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]}` + "\n")))
	if !strings.Contains(out, `"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"index":1,"id":"b"`) {
		t.Errorf("whole calls on the last line: %s", out)
	}
}

// FuzzParseChatRequest checks that a body is either refused with a 400 or
// read as a generic decode of it reads (keys match exactly).
func FuzzParseChatRequest(f *testing.F) {
	for _, s := range []string{`{"model":"m","stream_options":{"include_usage":true}}`, `{"model":1}`, `null`, `{"stream_options":{}}`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := parseChatRequest(body)
		if err != nil {
			if _, ok := err.(*dialect.Error); !ok {
				t.Fatalf("error %T %v is not a 400", err, err)
			}
			return
		}
		var m map[string]any
		if json.Unmarshal(body, &m) != nil {
			t.Fatalf("%s accepted but encoding/json refuses it", body)
		}
		model, _ := m["model"].(string)
		opts, _ := m["stream_options"].(map[string]any)
		usage, _ := opts["include_usage"].(bool)
		if model != req.model || usage != req.includeUsage {
			t.Fatalf("%s read as %+v", body, req)
		}
	})
}

// FuzzWithModel checks that the rewritten body is a JSON object equal to
// the original with model set, and that only non-objects are refused.
func FuzzWithModel(f *testing.F) {
	for _, s := range []string{`{"model":"x","a":[1,{"model":2}]}`, `{}`, ` {"a":1} `, `[]`, `{"a":1}x`, `{"a":1,"a":2}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out, ok := withModel(body, "m")
		var orig map[string]any
		isObject := json.Unmarshal(body, &orig) == nil && orig != nil
		if !ok {
			if isObject {
				t.Fatalf("refused the object %s", body)
			}
			return
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil || !isObject {
			t.Fatalf("%s became %s (%v)", body, out, err)
		}
		orig["model"] = "m"
		a, _ := json.Marshal(orig)
		b, _ := json.Marshal(got)
		if !bytes.Equal(a, b) {
			t.Fatalf("%s became %s", body, out)
		}
	})
}

// FuzzChatFramer feeds random worker streams, cut anywhere, to the chat
// framer: the output is a well-formed event stream of chunks with exactly
// one finish chunk, ending with [DONE].
func FuzzChatFramer(f *testing.F) {
	f.Add([]byte(tokenLine(1, "a")+`{"token":null,"finish_reason":"length","usage":{"prompt_tokens":1}}`+"\n"), []byte{3}, true, false)
	f.Add([]byte("plain\r\ntext"), []byte{0, 2}, false, true)
	f.Add([]byte(`{"error":{"message":"x"},"finish_reason":"error"}`), []byte{}, true, true)
	f.Fuzz(func(t *testing.T, stream, cuts []byte, usage, broken bool) {
		fr := newChatFramer(genstream.ChunkHead{ID: "chatcmpl-1", Model: "m", Created: 1}, usage)
		var out []byte
		for _, c := range testutil.SplitAt(stream, cuts) {
			out = append(out, fr.Chunk(c)...)
		}
		if broken {
			tail, ok := fr.Fail(dialect.Problem{Code: 503, Type: dialect.TypeUnavailable, Message: "gone"})
			if !ok {
				t.Fatal("the chat framer cut a stream off")
			}
			out = append(out, tail...)
		} else {
			out = append(out, fr.End()...)
		}
		checkChatEvents(t, out, usage)
	})
}

func checkChatEvents(t *testing.T, out []byte, usage bool) {
	t.Helper()
	data := events(t, string(out))
	if data[len(data)-1] != "[DONE]" {
		t.Fatalf("no [DONE] at the end of %q", out)
	}
	finishes, usages := 0, 0
	for _, d := range data[:len(data)-1] {
		var c genstream.ChatChunk
		if err := json.Unmarshal([]byte(d), &c); err != nil || c.Object != "chat.completion.chunk" {
			t.Fatalf("event %q: %v", d, err)
		}
		if c.Usage != nil {
			usages++
		}
		if len(c.Choices) == 1 && c.Choices[0].FinishReason != nil {
			finishes++
		}
	}
	if finishes != 1 || usage != (usages == 1) || usages > 1 {
		t.Fatalf("%d finish chunks, %d usage chunks in %q", finishes, usages, out)
	}
}

// events cuts an event-stream body into the data of its events.
func events(t *testing.T, body string) []string { return testutil.SSEData(t, body) }

// tokenLine is a worker's JSON line for one token.
func tokenLine(id int, text string) string {
	return fmt.Sprintf("{\"token\": {\"id\": %d, \"text\": %q}}\n", id, text)
}
