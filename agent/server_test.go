package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/internal/testutil"
)

// runnerFunc answers prompts with functions, for the server's own tests.
type runnerFunc struct {
	run    func(ctx context.Context, prompt string) (string, error)
	stream func(ctx context.Context, prompt string, emit func(string) error) (string, error)
}

func (r runnerFunc) Run(ctx context.Context, prompt string) (string, error) {
	return r.run(ctx, prompt)
}
func (r runnerFunc) Stream(ctx context.Context, prompt string, emit func(string) error) (string, error) {
	return r.stream(ctx, prompt, emit)
}

// testServer serves runner on a free loopback port until the test ends.
type testServer struct {
	base   string
	client *http.Client
}

func startServer(t *testing.T, runner Runner) testServer {
	t.Helper()
	s := NewServer(ServerConfig{Runner: runner, Log: zap.NewNop(), Grace: 5 * time.Second})
	if err := s.Listen("127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	tr := &http.Transport{}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return testServer{base: "http://" + s.Addr(), client: &http.Client{Transport: tr}}
}

// do sends one request and returns the answer with its body read.
func (s testServer) do(t *testing.T, method, path, body string, header ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, s.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// TestInvocations is the contract end to end on the fake services.
func TestInvocations(t *testing.T) {
	f := newFakeCloud(t)
	s := startServer(t, f.agent(t, "classification"))
	resp, body := s.do(t, http.MethodPost, "/invocations", `{"prompt": "Which language is 'Hallo'?"}`)
	var out struct{ Result string }
	if err := json.Unmarshal([]byte(body), &out); err != nil || resp.StatusCode != 200 ||
		out.Result != "The tool answered: German (deu)" || resp.Header.Get("Content-Type") != "application/json" {
		t.Errorf("%d %s %q", resp.StatusCode, resp.Header.Get("Content-Type"), body)
	}
}

// TestRefusals: what a caller sent wrong, with the status it can act on.
func TestRefusals(t *testing.T) {
	s := startServer(t, runnerFunc{run: func(context.Context, string) (string, error) { return "ok", nil }})
	big := `{"prompt": "` + strings.Repeat("a", MaxBody) + `"}`
	cases := []struct {
		name, method, path, body string
		code                     int
		kind, says, allow        string
	}{
		{"not JSON", "POST", "/invocations", "prompt=hi", 400, "BadRequest", "not a JSON object", ""},
		{"an array", "POST", "/invocations", `["hi"]`, 400, "BadRequest", "not a JSON object", ""},
		{"null", "POST", "/invocations", `null`, 400, "BadRequest", "not a JSON object", ""},
		{"prompt a number", "POST", "/invocations", `{"prompt": 5}`, 400, "BadRequest", "prompt must be a string", ""},
		{"prompt missing", "POST", "/invocations", `{"input": "hi"}`, 400, "BadRequest", "prompt is missing or empty", ""},
		{"prompt blank", "POST", "/invocations", `{"prompt": " \n"}`, 400, "BadRequest", "prompt is missing or empty", ""},
		{"too large", "POST", "/invocations", big, 413, "PayloadTooLarge", "larger than", ""},
		{"GET invocations", "GET", "/invocations", "", 405, "MethodNotAllowed", "use POST", "POST"},
		{"POST ping", "POST", "/ping", "{}", 405, "MethodNotAllowed", "use GET", "GET, HEAD"},
		{"no route", "GET", "/v1/nope", "", 404, "NotFound", "/invocations", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, body := s.do(t, tc.method, tc.path, tc.body)
			var e errorBody
			if err := json.Unmarshal([]byte(body), &e); err != nil || resp.StatusCode != tc.code || e.Code != tc.code ||
				e.Type != tc.kind || !strings.Contains(e.Error, tc.says) || resp.Header.Get("Allow") != tc.allow {
				t.Errorf("%d %q (Allow %q)", resp.StatusCode, body, resp.Header.Get("Allow"))
			}
		})
	}
	resp, body := s.do(t, "POST", "/invocations", `{"prompt": "hi", "session": 1}`)
	if resp.StatusCode != 200 || strings.TrimSpace(body) != `{"result":"ok"}` {
		t.Errorf("other fields are ignored: %d %q", resp.StatusCode, body)
	}
}

// TestUpstreamErrorAnswers: an upstream failure is JSON with its status,
// and a retryable one says when to come back.
func TestUpstreamErrorAnswers(t *testing.T) {
	f := newFakeCloud(t)
	f.planner = func(converseBody) plannerReply {
		return plannerReply{status: 503, errType: "ServiceUnavailableException"}
	}
	s := startServer(t, f.agent(t, "extraction"))
	for _, accept := range []string{"application/json", "text/event-stream"} {
		resp, body := s.do(t, "POST", "/invocations", `{"prompt": "hi"}`, "Accept", accept)
		var e errorBody
		if json.Unmarshal([]byte(body), &e) != nil || resp.StatusCode != 503 || e.Type != "ReasoningModelUnavailable" ||
			resp.Header.Get("Retry-After") != "1" || !strings.Contains(e.Error, "ServiceUnavailableException") {
			t.Errorf("Accept %s: %d %q", accept, resp.StatusCode, body)
		}
	}
}

// TestStreamLeavesBeforeTheAnswerExists: with the reasoning model held
// after the first word of its answer, the first event reaches the client
// and /ping says HealthyBusy; the rest follows once it is let go.
func TestStreamLeavesBeforeTheAnswerExists(t *testing.T) {
	f := newFakeCloud(t)
	f.hold = make(chan struct{})
	s := startServer(t, f.agent(t, "classification"))
	req, _ := http.NewRequestWithContext(t.Context(), "POST", s.base+"/invocations", strings.NewReader(`{"prompt": "Hallo"}`))
	req.Header.Set("Accept", "text/event-stream")
	resp, err := s.client.Do(req)
	if err != nil {
		close(f.hold)
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	first, err := r.ReadString('\n')
	busy := ping(t, s)
	close(f.hold)
	if err != nil || first != "data: \"The \"\n" || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("first line %q (%v), %s", first, err, resp.Header.Get("Content-Type"))
	}
	if busy.Status != StatusHealthyBusy {
		t.Errorf("ping while held: %+v", busy)
	}
	text := "The "
	err = ReadStream(r, func(s string) error { text += s; return nil })
	if err != nil || text != "The tool answered: German (deu)" {
		t.Errorf("streamed %q, %v", text, err)
	}
	resp.Body.Close()
	testutil.WaitFor(t, time.Minute, "ping Healthy", func() bool { return ping(t, s).Status == StatusHealthy })
}

// TestStreamBreaksOff: an error after the first text ends the stream with
// an error event; the status was already sent.
func TestStreamBreaksOff(t *testing.T) {
	s := startServer(t, runnerFunc{stream: func(_ context.Context, _ string, emit func(string) error) (string, error) {
		_ = emit("partial")
		return "", fmt.Errorf("%w: endpoint %q: gone", ErrTool, "langid")
	}})
	resp, body := s.do(t, "POST", "/invocations", `{"prompt": "hi"}`, "Accept", "text/plain, text/event-stream;q=0.5")
	want := "data: \"partial\"\n\n" +
		`data: {"error":"the tool's endpoint failed: endpoint \"langid\": gone","error_type":"ToolError","code":502,"message":"the answer broke off"}` + "\n\n"
	if resp.StatusCode != 200 || body != want {
		t.Errorf("%d %q", resp.StatusCode, body)
	}
	var text string
	err := ReadStream(strings.NewReader(body), func(s string) error { text += s; return nil })
	var se *StreamError
	if text != "partial" || !errors.As(err, &se) || se.Type != "ToolError" || !strings.HasPrefix(se.Message, "the tool's endpoint failed") {
		t.Errorf("ReadStream: %q, %v", text, err)
	}
	if err := ReadStream(strings.NewReader("data: [DONE]\n\n"), func(string) error { return nil }); err == nil {
		t.Error("ReadStream took an event that is neither text nor an error")
	}
}

// TestAcceptsEvents reads Accept headers.
func TestAcceptsEvents(t *testing.T) {
	for accept, want := range map[string]bool{
		"text/event-stream": true, "application/json, text/event-stream": true, "TEXT/EVENT-STREAM; q=0.1": true,
		"text/event-stream;q=0": false, "": false, "*/*": false, "application/json": false, "text/event-stream;q=x": false,
	} {
		if got := acceptsEvents(accept); got != want {
			t.Errorf("acceptsEvents(%q) = %v", accept, got)
		}
	}
}

func ping(t *testing.T, s testServer) Ping {
	t.Helper()
	resp, body := s.do(t, "GET", "/ping", "")
	var p Ping
	if err := json.Unmarshal([]byte(body), &p); err != nil || resp.StatusCode != 200 || p.TimeOfLastUpdate == 0 {
		t.Fatalf("ping: %d %q", resp.StatusCode, body)
	}
	return p
}

// TestClientLeaves: a client that closes its connection mid-stream cancels
// the invocation.
func TestClientLeaves(t *testing.T) {
	canceled := make(chan error, 1)
	s := startServer(t, runnerFunc{stream: func(ctx context.Context, _ string, emit func(string) error) (string, error) {
		_ = emit("first")
		<-ctx.Done()
		canceled <- ctx.Err()
		return "", ctx.Err()
	}})
	req, _ := http.NewRequestWithContext(t.Context(), "POST", s.base+"/invocations", strings.NewReader(`{"prompt": "hi"}`))
	req.Header.Set("Accept", "text/event-stream")
	resp, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil || line != "data: \"first\"\n" {
		t.Fatalf("first line %q, %v", line, err)
	}
	resp.Body.Close()
	select {
	case err := <-canceled:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("the invocation ended with %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the invocation went on after its client left")
	}
}
