package genstream

import (
	"strings"
	"testing"

	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/internal/testutil"
)

func TestLineBuf(t *testing.T) {
	long := strings.Repeat("x", MaxLine)
	cases := []struct {
		name   string
		chunks []string
		want   []string // lines emitted by feed, then "|" and those by flush
	}{
		{"one per chunk", []string{"a\n", "b\n"}, []string{"a", "b", "|"}},
		{"split lines", []string{"a", "b\nc", "d\n"}, []string{"ab", "cd", "|"}},
		{"several in one chunk", []string{"a\nb\n\nc"}, []string{"a", "b", "", "|", "c"}},
		{"crlf", []string{"a\r", "\nb\r\n"}, []string{"a", "b", "|"}},
		{"overlong", []string{long[:10], long[10:], "y\n"}, []string{long, "y", "|"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var lb LineBuf
			var got []string
			emit := func(l []byte) { got = append(got, string(l)) }
			for _, ch := range c.chunks {
				lb.Feed([]byte(ch), emit)
			}
			got = append(got, "|")
			lb.Flush(emit)
			if strings.Join(got, ",") != strings.Join(c.want, ",") {
				t.Errorf("lines %q, want %q", got, c.want)
			}
		})
	}
}

func TestIsJSONLines(t *testing.T) {
	cases := map[string]bool{
		"application/jsonlines": true, "application/jsonlines; charset=utf-8": true, "Application/X-NDJSON": true,
		"application/jsonl": true, "application/json": false, "text/plain": false, "": false, "application/jsonlines;;": false,
	}
	for ct, want := range cases {
		t.Run(ct, func(t *testing.T) {
			if got := IsJSONLines(ct); got != want {
				t.Errorf("IsJSONLines(%q) = %v", ct, got)
			}
		})
	}
}

func TestAcceptsEventStream(t *testing.T) {
	cases := map[string]bool{
		"text/event-stream": true, "application/json, text/event-stream;q=0.5": true, "TEXT/Event-Stream": true,
		"text/event-stream;q=0": false, "text/event-stream;q=x": false, "*/*": false, "": false,
		"application/json": false, "text/event-streams": false,
	}
	for accept, want := range cases {
		t.Run(accept, func(t *testing.T) {
			if got := AcceptsEventStream(accept); got != want {
				t.Errorf("AcceptsEventStream(%q) = %v", accept, got)
			}
		})
	}
}

func TestAppendEvent(t *testing.T) {
	cases := []struct{ line, want string }{
		{`{"a":1}`, "data: {\"a\":1}\n\n"},
		{"", "data: \n\n"},
		{"a\rb", "data: a\ndata: b\n\n"},
	}
	for _, c := range cases {
		t.Run(c.line, func(t *testing.T) {
			if got := string(AppendEvent(nil, []byte(c.line))); got != c.want {
				t.Errorf("AppendEvent(%q) = %q, want %q", c.line, got, c.want)
			}
		})
	}
}

func TestChatFinish(t *testing.T) {
	cases := map[string]string{
		"eos": "stop", "stop": "stop", "": "stop", "length": "length",
		"error": "error", "canceled": "error", "tool_calls": "tool_calls",
	}
	for in, want := range cases {
		t.Run(in, func(t *testing.T) {
			if got := ChatFinish(in); got != want {
				t.Errorf("ChatFinish(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

// events cuts an event-stream body into the data of its events.
func events(t *testing.T, body string) []string { return testutil.SSEData(t, body) }

// FuzzLineBuf checks that cutting a stream anywhere yields the same lines
// as splitting it whole.
func FuzzLineBuf(f *testing.F) {
	f.Add([]byte("a\nb\r\nc"), []byte{1, 0, 3})
	f.Add([]byte("\n\n\r"), []byte{2})
	f.Fuzz(func(t *testing.T, stream, cuts []byte) {
		var lb LineBuf
		var got []string
		emit := func(l []byte) { got = append(got, string(l)) }
		for _, c := range testutil.SplitAt(stream, cuts) {
			lb.Feed(c, emit)
		}
		lb.Flush(emit)
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
		got := AcceptsEventStream(accept)
		if got && !strings.Contains(strings.ToLower(accept), ContentTypeSSE) {
			t.Fatalf("%q accepted without naming %s", accept, ContentTypeSSE)
		}
	})
}

// FuzzSSEFramer checks that every non-blank line of a worker's stream
// becomes one event, in order, with [DONE] last.
func FuzzSSEFramer(f *testing.F) {
	f.Add([]byte("{\"a\":1}\n\n{\"b\":2}"), []byte{4}, false)
	f.Add([]byte("x\ry\n"), []byte{1}, true)
	f.Fuzz(func(t *testing.T, stream, cuts []byte, broken bool) {
		fr := &SSE{}
		var out []byte
		for _, c := range testutil.SplitAt(stream, cuts) {
			out = append(out, fr.Chunk(c)...)
		}
		var want []string
		for _, l := range strings.Split(string(stream), "\n") {
			if l = strings.TrimSuffix(l, "\r"); strings.TrimSpace(l) != "" {
				want = append(want, strings.ReplaceAll(l, "\r", "\n"))
			}
		}
		if broken {
			tail, _ := fr.Fail(dialect.Problem{Message: "gone"})
			out = append(out, tail...)
			want = append(want, string(ErrorLine("gone")))
		} else {
			out = append(out, fr.End()...)
		}
		want = append(want, "[DONE]")
		if got := events(t, string(out)); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
			t.Fatalf("events %q, want %q", got, want)
		}
	})
}
