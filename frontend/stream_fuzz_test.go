package frontend

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// splitAt cuts b into chunks at the positions cuts gives (each byte of
// cuts is a chunk length, 0 meaning an empty chunk).
func splitAt(b, cuts []byte) [][]byte {
	var out [][]byte
	for _, c := range cuts {
		n := min(int(c), len(b))
		out = append(out, b[:n])
		b = b[n:]
	}
	return append(out, b)
}

// FuzzLineBuf checks that cutting a stream anywhere yields the same lines
// as splitting it whole.
func FuzzLineBuf(f *testing.F) {
	f.Add([]byte("a\nb\r\nc"), []byte{1, 0, 3})
	f.Add([]byte("\n\n\r"), []byte{2})
	f.Fuzz(func(t *testing.T, stream, cuts []byte) {
		var lb lineBuf
		var got []string
		emit := func(l []byte) { got = append(got, string(l)) }
		for _, c := range splitAt(stream, cuts) {
			lb.feed(c, emit)
		}
		lb.flush(emit)
		var want []string
		parts := strings.Split(string(stream), "\n")
		for i, p := range parts {
			if i == len(parts)-1 && p == "" {
				break
			}
			want = append(want, strings.TrimSuffix(p, "\r"))
		}
		if strings.Join(got, "\x00") != strings.Join(want, "\x00") || len(got) != len(want) {
			t.Fatalf("lines %q, want %q", got, want)
		}
	})
}

func FuzzAcceptsEventStream(f *testing.F) {
	for _, s := range []string{"text/event-stream", "a/b;q=1, text/event-stream;q=0.1", "text/event-stream;q=0", ";;,,=", "text/event-stream;q=NaN"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, accept string) {
		got := acceptsEventStream([]byte(accept))
		if got && !strings.Contains(strings.ToLower(accept), contentTypeSSE) {
			t.Fatalf("%q accepted without naming %s", accept, contentTypeSSE)
		}
	})
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
			if _, ok := err.(*httpError); !ok {
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
		fr := newChatFramer(shape{chat: true, includeUsage: usage, model: "m", id: "1", created: 1})
		var out []byte
		for _, c := range splitAt(stream, cuts) {
			out = append(out, fr.chunk(c)...)
		}
		if broken {
			tail, ok := fr.fail(problem{Code: 503, Type: kindUnavailable, Message: "gone"})
			if !ok {
				t.Fatal("the chat framer cut a stream off")
			}
			out = append(out, tail...)
		} else {
			out = append(out, fr.end()...)
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
		var c chatChunk
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

// FuzzSSEFramer checks that every non-blank line of a worker's stream
// becomes one event, in order, with [DONE] last.
func FuzzSSEFramer(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n\n{\"b\":2}"), []byte{4}, false)
	f.Add([]byte("x\ry\n"), []byte{1}, true)
	f.Fuzz(func(t *testing.T, stream, cuts []byte, broken bool) {
		fr := &sseFramer{}
		var out []byte
		for _, c := range splitAt(stream, cuts) {
			out = append(out, fr.chunk(c)...)
		}
		var want []string
		for _, l := range strings.Split(string(stream), "\n") {
			if l = strings.TrimSuffix(l, "\r"); strings.TrimSpace(l) != "" {
				want = append(want, strings.ReplaceAll(l, "\r", "\n"))
			}
		}
		if broken {
			tail, _ := fr.fail(problem{Message: "gone"})
			out = append(out, tail...)
			want = append(want, string(errorLine("gone")))
		} else {
			out = append(out, fr.end()...)
		}
		want = append(want, "[DONE]")
		if got := events(t, string(out)); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("events %q, want %q", got, want)
		}
	})
}
