package frontend

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
)

// capture makes f keep the jobs it answers and returns them.
func capture(f *fakeModels) chan *batching.Job {
	jobs := make(chan *batching.Job, 16)
	f.respond = func(model string, j *batching.Job) {
		jobs <- j
		echo(model, j)
	}
	return jobs
}

func TestJobInput(t *testing.T) {
	f := newFake("m")
	jobs := capture(f)
	ts := startServer(t, f)
	hdr := map[string]string{"Content-Type": "application/json", "X-Custom-Thing": "v1", "X-Request-Id": "abc-123"}
	resp, body := ts.do(t, "POST", ts.inf+"/predictions/m?top_k=3&lang=en", `{"inputs":"hi"}`, hdr)
	if resp.StatusCode != 200 || string(body) != `{"inputs":"hi"}` {
		t.Fatalf("answer %d %q", resp.StatusCode, body)
	}
	j := <-jobs
	props := map[string]string{}
	for _, p := range j.Input.Props {
		props[p.Key] = p.Value
	}
	for k, want := range map[string]string{
		"content-type": "application/json", "x-custom-thing": "v1", "request_id": "abc-123", "x-request-id": "abc-123",
	} {
		if props[k] != want {
			t.Errorf("prop %q = %q, want %q (all: %v)", k, props[k], want, props)
		}
	}
	if j.ID != "abc-123" {
		t.Errorf("job id = %q", j.ID)
	}
	var items []string
	for _, c := range j.Input.Content {
		items = append(items, c.Key+"="+string(c.Value))
	}
	if got := strings.Join(items, " "); got != `data={"inputs":"hi"} top_k=3 lang=en` {
		t.Errorf("content = %s", got)
	}
	if _, ok := j.Deadline(); ok {
		t.Error("job has a deadline without X-Request-Timeout-Ms")
	}
}

// TestBodyKept checks that the job's bytes, taken out of fasthttp's
// request, survive the connection's next request, which reuses the
// request's buffers.
func TestBodyKept(t *testing.T) {
	f := newFake("m")
	jobs := capture(f)
	ts := startServer(t, f)
	bodies := []string{strings.Repeat("a", 1000), strings.Repeat("b", 1000)}
	for _, b := range bodies {
		ts.do(t, "POST", ts.inf+"/predictions/m?q="+b[:3], b, nil)
	}
	for _, b := range bodies {
		j := <-jobs
		if string(j.Input.Content[0].Value) != b || string(j.Input.Content[1].Value) != b[:3] {
			t.Errorf("job content changed: %.10q... %q", j.Input.Content[0].Value, j.Input.Content[1].Value)
		}
	}
}

func TestRequestTimeoutHeader(t *testing.T) {
	f := newFake("m")
	jobs := capture(f)
	ts := startServer(t, f)
	cases := []struct {
		value string
		code  int
		after time.Duration
	}{
		{"1500", 200, 1500 * time.Millisecond},
		{"1", 200, time.Millisecond},
		{"0", 400, 0},
		{"-5", 400, 0},
		{"1.5", 400, 0},
		{"soon", 400, 0},
		{"99999999999", 400, 0},
	}
	for _, c := range cases {
		t.Run(c.value, func(t *testing.T) {
			resp, body := ts.do(t, "POST", ts.inf+"/predictions/m", "", map[string]string{headerTimeout: c.value})
			if resp.StatusCode != c.code {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, c.code, body)
			}
			if c.code != 200 {
				mustProblem(t, resp, body)
				return
			}
			j := <-jobs
			d, ok := j.Deadline()
			if !ok || d.Sub(j.Created()) != c.after {
				t.Errorf("deadline %v after creation, want %v", d.Sub(j.Created()), c.after)
			}
		})
	}
}

func TestSubmitErrors(t *testing.T) {
	cases := []struct {
		name  string
		err   error
		code  int
		kind  string
		retry bool
	}{
		{"queue full", fmt.Errorf("%w: m holds 1000", batching.ErrQueueFull), 503, "ServiceUnavailableException", true},
		{"closed", batching.ErrClosed, 503, "ServiceUnavailableException", false},
		{"not ready", fmt.Errorf("%w: loading", api.ErrNotReady), 503, "ServiceUnavailableException", false},
		{"failed", api.ErrModelFailed, 503, "ServiceUnavailableException", false},
		{"other", errors.New("boom"), 500, "InternalServerException", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake("m")
			f.submitErr = c.err
			ts := startServer(t, f)
			resp, body := ts.do(t, "POST", ts.inf+"/invocations", "x", nil)
			if resp.StatusCode != c.code {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, c.code, body)
			}
			p := mustProblem(t, resp, body)
			if p.Type != c.kind {
				t.Errorf("type = %q, want %q", p.Type, c.kind)
			}
			if got := resp.Header.Get("Retry-After"); (got == "1") != c.retry {
				t.Errorf("Retry-After = %q", got)
			}
			if c.code >= 500 && ts.logs.FilterMessage("request failed").FilterField(zap.String("request_id", resp.Header.Get("X-Request-Id"))).Len() != 1 {
				t.Error("5xx not logged with its request id")
			}
		})
	}
}

func TestThrottleCode(t *testing.T) {
	f := newFake("m")
	f.submitErr = batching.ErrQueueFull
	ts := startServer(t, f, func(c *Config) { c.ThrottleCode = 429 })
	resp, body := ts.do(t, "POST", ts.inf+"/invocations", "x", nil)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("status = %d, Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if p := mustProblem(t, resp, body); p.Type != "TooManyRequestsException" || p.Message != "queue full" {
		t.Errorf("problem = %+v", p)
	}
}

func TestJobFailures(t *testing.T) {
	cases := []struct {
		err  error
		code int
	}{
		{batching.ErrExpired, 503},
		{api.ErrWorkerDied, 503},
		{api.ErrPredictTimeout, 500},
		{api.ErrInsufficientMemory, 507},
		{batching.ErrClosed, 503},
	}
	for _, c := range cases {
		t.Run(c.err.Error(), func(t *testing.T) {
			f := newFake("m")
			f.respond = func(_ string, j *batching.Job) { j.Fail(fmt.Errorf("worker 3: %w", c.err)) }
			ts := startServer(t, f)
			resp, body := ts.do(t, "POST", ts.inf+"/invocations", "x", nil)
			if resp.StatusCode != c.code {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, c.code, body)
			}
			if p := mustProblem(t, resp, body); !strings.Contains(p.Message, "worker 3") {
				t.Errorf("message %q lost the detail", p.Message)
			}
		})
	}
}

func TestWorkerAnswers(t *testing.T) {
	problemBody := `{"code":422,"type":"ValidationError","message":"bad prompt"}`
	cases := []struct {
		name    string
		resp    message.Response
		code    int
		message string // for error answers
		raw     string // the exact body, when it passes through
	}{
		{"ok", message.Response{Code: 200, Body: []byte("fine")}, 200, "", "fine"},
		{"zero code is 200", message.Response{Body: []byte("fine")}, 200, "", "fine"},
		{"204", message.Response{Code: 204}, 204, "", ""},
		{"error field", message.Response{Code: 424, Body: []byte(`{"code":424,"error":"division by zero"}`)}, 424, "division by zero", ""},
		{"message field", message.Response{Code: 400, Body: []byte(`{"message":"need inputs"}`)}, 400, "need inputs", ""},
		{"plain text", message.Response{Code: 500, Body: []byte("Traceback ...\n")}, 500, "Traceback ...", ""},
		{"response message", message.Response{Code: 507, Message: "CUDA out of memory"}, 507, "CUDA out of memory", ""},
		{"status text", message.Response{Code: 503}, 503, "Service Unavailable", ""},
		{"4xx problem passes", message.Response{Code: 422, Body: []byte(problemBody)}, 422, "", problemBody},
		{"5xx problem reshaped", message.Response{Code: 500, Body: []byte(problemBody)}, 500, "bad prompt", ""},
		{"invalid status", message.Response{Code: 42}, 500, "the model answered with an invalid status: 42", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake("m")
			f.respond = func(_ string, j *batching.Job) { r := c.resp; j.Finish(&r) }
			ts := startServer(t, f)
			resp, body := ts.do(t, "POST", ts.inf+"/invocations", "x", nil)
			if resp.StatusCode != c.code {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, c.code, body)
			}
			switch {
			case c.raw != "" || c.code < 400:
				if string(body) != c.raw {
					t.Errorf("body = %q, want %q", body, c.raw)
				}
			default:
				if p := mustProblem(t, resp, body); p.Message != c.message {
					t.Errorf("message = %q, want %q", p.Message, c.message)
				}
			}
		})
	}
}

func TestAnswerHeaders(t *testing.T) {
	f := newFake("m")
	f.respond = func(_ string, j *batching.Job) {
		j.Finish(&message.Response{Code: 201, Body: []byte("ok"), Props: []message.Prop{
			{Key: "Content-Type", Value: "application/jsonlines"}, {Key: "X-Tokens", Value: "12"}, {Key: "Connection", Value: "close"},
			{Key: "Transfer-Encoding", Value: "gzip"}, {Key: "Content-Length", Value: "99"}, {Key: "X-Request-Id", Value: "forged"},
			{Key: "Bad Name", Value: "x"}, {Key: "X-Split", Value: "a\r\nInjected: yes"}, {Key: "request_tracking_id", Value: "7"},
		}})
	}
	ts := startServer(t, f)
	resp, body := ts.do(t, "POST", ts.inf+"/invocations", "x", map[string]string{"X-Request-Id": "mine"})
	if resp.StatusCode != 201 || string(body) != "ok" {
		t.Fatalf("answer %d %q", resp.StatusCode, body)
	}
	want := http.Header{"Content-Type": {"application/jsonlines"}, "X-Tokens": {"12"}, "X-Request-Id": {"mine"}, "Content-Length": {"2"}}
	for k, v := range want {
		if got := resp.Header.Values(k); len(got) != 1 || got[0] != v[0] {
			t.Errorf("%s = %q, want %q", k, got, v)
		}
	}
	for _, k := range []string{"Injected", "X-Split", "Bad Name", "Request_tracking_id"} {
		if resp.Header.Get(k) != "" {
			t.Errorf("header %s passed through", k)
		}
	}
	if resp.Close {
		t.Error("worker's Connection: close reached the client")
	}
}

func TestRequestID(t *testing.T) {
	ts := startServer(t, newFake("m"))
	cases := []struct {
		name, sent string
		echoed     bool
	}{
		{"echoed", "req-42", true},
		{"longest", strings.Repeat("z", maxRequestIDLen), true},
		{"too long", strings.Repeat("z", maxRequestIDLen+1), false},
		{"not ASCII", "café", false},
		{"absent", "", false},
	}
	seen := map[string]bool{}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{}
			if c.sent != "" {
				hdr["X-Request-Id"] = c.sent
			}
			for _, path := range []string{"/invocations", "/nowhere"} {
				resp, _ := ts.do(t, "POST", ts.inf+path, "", hdr)
				got := resp.Header.Get("X-Request-Id")
				if c.echoed && got != c.sent {
					t.Errorf("%s: id = %q, want %q", path, got, c.sent)
				}
				if !c.echoed && (len(got) != 36 || strings.Count(got, "-") != 4 || seen[got]) {
					t.Errorf("%s: generated id %q is not a fresh UUID-shaped id", path, got)
				}
				seen[got] = true
			}
		})
	}
}

func TestIDSourceUnique(t *testing.T) {
	g := newIDSource()
	seen := map[string]bool{}
	for range 10000 {
		id := g.next()
		if seen[id] {
			t.Fatalf("id %s repeated", id)
		}
		seen[id] = true
	}
}

func TestBodyTooLarge(t *testing.T) {
	ts := startServer(t, newFake("m"), func(c *Config) { c.MaxRequestSize = 1024 })
	resp, body := ts.do(t, "POST", ts.inf+"/invocations", strings.Repeat("x", 1025), map[string]string{"X-Request-Id": "big-1"})
	if resp.StatusCode != 413 {
		t.Fatalf("status = %d (%s)", resp.StatusCode, body)
	}
	if p := mustProblem(t, resp, body); p.Type != "PayloadTooLargeException" || !strings.Contains(p.Message, strconv.Itoa(1024)) {
		t.Errorf("problem = %+v", p)
	}
	if resp.Header.Get("X-Request-Id") != "big-1" {
		t.Errorf("x-request-id = %q", resp.Header.Get("X-Request-Id"))
	}
	resp, body = ts.do(t, "POST", ts.inf+"/invocations", strings.Repeat("x", 1024), nil)
	if resp.StatusCode != 200 || !bytes.Equal(body, bytes.Repeat([]byte("x"), 1024)) {
		t.Errorf("body at the limit: status %d", resp.StatusCode)
	}
}
