package e2e

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
)

// tickerModel is a handler that streams JSON lines slowly, so that a test
// can act in the middle of a stream. The body's "tokens" (default 3000)
// bounds the stream; "fail_after": n raises after n lines. When its
// generator is closed before the end (the worker canceled the request), it
// writes closed-<tag> into the model folder.
const tickerModel = `import json
import time

from djl_python import Output


def handle(inputs):
    if inputs.is_empty():
        return None
    req = json.loads(inputs.get_as_bytes() or b"{}")
    out = Output()
    out.add_property("content-type", "application/jsonlines")
    out.add_stream_content(lines(req))
    return out


def lines(req):
    tag, n, fail = str(req.get("tag", "x")), int(req.get("tokens", 3000)), req.get("fail_after")
    finished = False
    try:
        for i in range(n):
            if fail is not None and i == fail:
                finished = True
                raise RuntimeError("ticker broke after %d tokens" % i)
            yield json.dumps({"token": {"id": i, "text": "t%d " % i}}) + "\n"
            time.sleep(0.02)
        finished = True
        usage = {"prompt_tokens": 1, "completion_tokens": n, "total_tokens": n + 1}
        yield json.dumps({"token": None, "generated_text": "", "finish_reason": "length", "usage": usage}) + "\n"
    finally:
        if not finished:
            open("closed-" + tag, "w").close()
`

// startTicker serves the ticker model as a rolling-batch model, whose
// requests the worker tracks and can cancel.
func startTicker(t *testing.T) (*Server, string) {
	t.Helper()
	needE2E(t)
	store := t.TempDir()
	dir := WriteModel(t, store, "ticker", map[string]string{
		"model.py":           tickerModel,
		"serving.properties": "engine=Python\noption.rolling_batch=scheduler\noption.max_rolling_batch_size=4\n",
	})
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(loadLimit, api.StatusHealthy, "ticker")
	return s, dir
}

// TestGenerativeStreams checks what happens in the middle of a stream:
// a client that leaves, and a handler that fails after its first tokens.
func TestGenerativeStreams(t *testing.T) {
	s, dir := startTicker(t)
	t.Run("client gone cancels the generation", func(t *testing.T) { checkClientGone(t, s, dir) })
	t.Run("error after the first token", func(t *testing.T) { checkStreamError(t, s) })
}

// checkClientGone reads two lines of a long stream, hangs up, and waits for
// the worker to close the generator: the front-end noticed and the worker
// got the cancel.
func checkClientGone(t *testing.T, s *Server, dir string) {
	for _, route := range []string{"/predictions/ticker", "/v1/chat/completions"} {
		t.Run(route, func(t *testing.T) {
			tag := strings.ReplaceAll(strings.Trim(route, "/"), "/", "-")
			body := fmt.Sprintf(`{"model": "ticker", "messages": [], "stream": true, "tag": %q}`, tag)
			conn, br := openStream(t, s, route, body)
			for range 2 {
				if _, err := br.ReadString('\n'); err != nil {
					t.Fatalf("reading the stream: %v", err)
				}
			}
			conn.Close()
			waitFile(t, filepath.Join(dir, "closed-"+tag))
		})
	}
}

// openStream sends a request on a raw connection and reads the answer's
// headers; the body is left to read from the returned reader.
func openStream(t *testing.T, s *Server, path, body string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.Inference, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(time.Minute))
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("answer: %v %v", resp, err)
	}
	return conn, bufio.NewReader(resp.Body)
}

// waitFile waits up to a minute for path to exist.
func waitFile(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear: the worker did not stop the generation", filepath.Base(path))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func checkStreamError(t *testing.T, s *Server) {
	const broke = "ticker broke after 2 tokens"
	body := `{"model": "ticker", "messages": [], "stream": true, "fail_after": 2}`
	t.Run("jsonlines", func(t *testing.T) {
		lines := jsonLines(t, call(t, http.MethodPost, s.Inference+"/predictions/ticker", body).body)
		// two token lines, then the error line the front-end adds
		if len(lines) != 3 {
			t.Fatalf("lines %+v", lines)
		}
		for i, l := range lines[:2] {
			if l.Token == nil || l.Token.ID != i || l.Token.Text != fmt.Sprintf("t%d ", i) || l.FinishReason != nil {
				t.Errorf("line %d: %+v", i, l)
			}
		}
		last := lines[2]
		if last.Token != nil || last.FinishReason == nil || *last.FinishReason != "error" || !strings.Contains(last.Error, broke) {
			t.Errorf("last line %+v", last)
		}
	})
	t.Run("chat event stream", func(t *testing.T) {
		cs := readChatStream(t, call(t, http.MethodPost, s.Inference+"/v1/chat/completions", body).body)
		if cs.text != "t0 t1 " || cs.finish != "error" || !strings.Contains(cs.err, broke) {
			t.Errorf("stream %+v", cs)
		}
	})
	t.Run("openai sdk raises it", func(t *testing.T) {
		node := needNode(t)
		t.Setenv("CHAT_EXTRA", `{"fail_after": 2}`)
		r := runSDK(t, node, s, "ticker", "hi", "8", "--stream-only")
		if r.Stream.Chunks < 1 || r.Stream.Text != "t0 t1 " || !strings.Contains(r.Stream.Error, broke) {
			t.Errorf("stream %+v", r.Stream)
		}
	})
}
