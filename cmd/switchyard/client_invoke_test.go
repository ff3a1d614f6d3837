package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestInvoke(t *testing.T) {
	dir := t.TempDir()
	textFile := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(textFile, []byte("bonjour tout le monde\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	post := func(body string, header http.Header) []seen {
		return []seen{{Method: "POST", Path: "/predictions/langid", Body: body, Header: header}}
	}
	ct := func(v string) http.Header { return http.Header{"Content-Type": {v}} }
	ok := reply{status: 200, body: `{"language": "fr"}`, header: map[string]string{"Content-Type": "application/json"}}
	tests := []struct {
		name  string
		args  []string
		reply reply
		want  want
	}{
		{"json literal", []string{"--data", `{"inputs": "bonjour"}`}, ok,
			want{stdout: `{"language": "fr"}`, reqs: post(`{"inputs": "bonjour"}`, ct("application/json"))}},
		{"file", []string{"--data", "@" + textFile}, ok,
			want{stdout: `{"language": "fr"}`, reqs: post("bonjour tout le monde\n", ct("text/plain; charset=utf-8"))}},
		{"given content type", []string{"--data", "bonjour", "--content-type", "text/x-words"}, ok,
			want{stdout: `{"language": "fr"}`, reqs: post("bonjour", ct("text/x-words"))}},
		{"no body", nil, ok,
			want{stdout: `{"language": "fr"}`, reqs: post("", http.Header{"Content-Type": nil})}},
		{"headers", []string{"--data", "{}", "--header", "X-Amzn-SageMaker-Custom-Attributes: a=b",
			"--header", "x-two:2", "--header", "X-Two: 3", "--header", "Content-Type: application/x-ndjson"}, ok,
			want{stdout: `{"language": "fr"}`, reqs: post("{}", http.Header{
				"X-Amzn-Sagemaker-Custom-Attributes": {"a=b"}, "X-Two": {"2", "3"},
				"Content-Type": {"application/x-ndjson"}})}},
		{"stream flag on a whole answer", []string{"--stream"}, reply{status: 200, body: "a\nb\n"},
			want{stdout: "a\nb\n", reqs: post("", nil)}},
		{"model error", []string{"--data", "{}"},
			reply{status: 424, body: `{"code": 424, "type": "PredictionException", "message": "boom"}`},
			want{code: 1, stderr: "switchyard invoke: 424 PredictionException: boom\n", reqs: post("{}", nil)}},
		{"queue full", []string{"--data", "{}"},
			reply{status: 503, body: `{"code": 503, "type": "ServiceUnavailableException", "message": "queue full"}`,
				header: map[string]string{"Retry-After": "1"}},
			want{code: 1, stderr: "switchyard invoke: 503 ServiceUnavailableException: queue full\n", reqs: post("{}", nil)}},
		{"error from a proxy", []string{"--data", "{}"}, reply{status: 502, body: "<html>\n<h1>Bad Gateway</h1>\n</html>"},
			want{code: 1, stderr: "switchyard invoke: 502 Bad Gateway: <html> <h1>Bad Gateway</h1> </html>\n", reqs: post("{}", nil)}},
		{"missing file", []string{"--data", "@" + filepath.Join(dir, "nope")}, ok,
			want{code: 1, has: "switchyard invoke: --data: open " + filepath.Join(dir, "nope")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t, tt.reply)
			args := append([]string{"invoke", "langid", "--inference-url", f.URL}, tt.args...)
			code, stdout, stderr := cli(t, args...)
			tt.want.check(t, f, code, stdout, stderr)
		})
	}
}

func TestInvokeStdin(t *testing.T) {
	f := newFakeAPI(t, reply{status: 200, body: "ok"})
	body := "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"
	e := clientEnv{getenv: func(string) string { return "" }, stdin: strings.NewReader(body)}
	var out, errb bytes.Buffer
	err := e.invoke(t.Context(), []string{"--data", "@-", "--inference-url", f.URL, "img"}, &out, &errb)
	if err != nil || out.String() != "ok" || errb.Len() != 0 {
		t.Errorf("invoke: %v, stdout %q, stderr %q", err, out.String(), errb.String())
	}
	checkRequests(t, f.requests(), []seen{{Method: "POST", Path: "/predictions/img", Body: body,
		Header: http.Header{"Content-Type": {"image/png"}}}})
}

// chunkWriter passes each write on to a channel, so a test sees when the
// command printed a piece.
type chunkWriter chan string

func (w chunkWriter) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

func TestInvokeStreamsPiecesAsTheyArrive(t *testing.T) {
	noLeaks(t)
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/jsonlines")
		_, _ = io.WriteString(w, `{"token": "Bon"}`+"\n")
		w.(http.Flusher).Flush()
		select { // the second piece leaves only once the first was printed
		case <-release:
		case <-r.Context().Done():
			return
		}
		_, _ = io.WriteString(w, `{"token": "jour"}`+"\n")
	}))
	defer srv.Close()
	out := make(chunkWriter, 16)
	done := make(chan error, 1)
	e := clientEnv{getenv: func(string) string { return "" }, stdin: strings.NewReader("")}
	go func() {
		done <- e.invoke(t.Context(), []string{"chat", "--stream", "--inference-url", srv.URL, "--data", "{}"}, out, io.Discard)
	}()
	if first := <-out; first != `{"token": "Bon"}`+"\n" {
		t.Errorf("first piece %q", first)
	}
	once.Do(func() { close(release) })
	if err := <-done; err != nil {
		t.Fatalf("invoke: %v", err)
	}
	close(out)
	var rest strings.Builder
	for s := range out {
		rest.WriteString(s)
	}
	if rest.String() != `{"token": "jour"}`+"\n" {
		t.Errorf("rest %q", rest.String())
	}
}

// brokenStream answers with a chunked body whose connection closes after
// the first chunk, without the final empty chunk.
func brokenStream(w http.ResponseWriter, _ *http.Request) {
	conn, buf, err := w.(http.Hijacker).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprint(buf, "HTTP/1.1 200 OK\r\nContent-Type: application/jsonlines\r\nTransfer-Encoding: chunked\r\n\r\n")
	fmt.Fprint(buf, "5\r\ntok1\n\r\n")
	_ = buf.Flush()
}

func TestInvokeBrokenAnswer(t *testing.T) {
	tests := []struct {
		name   string
		stream bool
		stdout string
	}{
		{"streamed: what came is printed", true, "tok1\n"},
		{"whole: nothing is printed", false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			noLeaks(t)
			srv := httptest.NewServer(http.HandlerFunc(brokenStream))
			defer srv.Close()
			args := []string{"invoke", "m", "--inference-url", srv.URL}
			if tt.stream {
				args = append(args, "--stream")
			}
			code, stdout, stderr := cli(t, args...)
			want{code: 1, stdout: tt.stdout, stderr: "switchyard invoke: the answer broke off: unexpected EOF\n"}.
				check(t, nil, code, stdout, stderr)
		})
	}
}

func TestContentType(t *testing.T) {
	tests := []struct {
		name, body, given, want string
	}{
		{"given wins", `{"a": 1}`, "text/csv", "text/csv"},
		{"empty body", "", "", ""},
		{"json object", `{"inputs": "x"}`, "", "application/json"},
		{"json string", `"x"`, "", "application/json"},
		{"text", "bonjour", "", "text/plain; charset=utf-8"},
		{"jsonlines is not one value", "{}\n{}\n", "", "text/plain; charset=utf-8"},
		{"bytes", "\x00\x01\x02", "", "application/octet-stream"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := contentType([]byte(tt.body), tt.given); got != tt.want {
				t.Errorf("contentType = %q, want %q", got, tt.want)
			}
		})
	}
}
