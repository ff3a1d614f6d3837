package frontend

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/switchyard/switchyard/frontend/awsapi"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/message"
)

// memServer is a Server on an in-memory listener serving both route tables.
type memServer struct {
	*Server
	ln   *fasthttputil.InmemoryListener
	logs *observer.ObservedLogs
}

// fuzzWait is how long roundTrip waits for an answer. Some random requests
// rightly leave the server waiting for more bytes (a Content-Length larger
// than the body, say); those are given up on, not checked.
const fuzzWait = 2 * time.Second

// roundTrip sends req on a new in-memory connection and reads the answer.
// (fasthttp's Client would leave cleaner goroutines behind.)
func (ms *memServer) roundTrip(req *fasthttp.Request, resp *fasthttp.Response) error {
	conn, err := ms.ln.Dial()
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(fuzzWait))
	bw := bufio.NewWriter(conn)
	if err := req.Write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	resp.SkipBody = req.Header.IsHead()
	return resp.Read(bufio.NewReader(conn))
}

func startMemServer(tb testing.TB, m Models) *memServer {
	tb.Helper()
	core, logs := observer.New(zap.ErrorLevel)
	s, err := New(Config{InferenceAddr: "mem", ManagementAddr: "mem", Logger: zap.New(core)}, m)
	if err != nil {
		tb.Fatal(err)
	}
	ln := fasthttputil.NewInmemoryListener()
	s.mu.Lock()
	s.listeners = []*listener{s.newListener(ln, dialect.Inference|dialect.Management)}
	s.state = stateListening
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			tb.Errorf("Serve: %v", err)
		}
	})
	return &memServer{Server: s, ln: ln, logs: logs}
}

// FuzzRequest sends random requests through the whole handler: nothing may
// panic, every answer has a request id, and every non-2xx answer carries a
// well-formed JSON error (the /ping map for /ping).
func FuzzRequest(f *testing.F) {
	seeds := []struct{ method, path, hk, hv, query, body string }{
		{"POST", "/invocations", "X-Amzn-SageMaker-Target-Model", "a.tar.gz", "", "hello"},
		{"POST", "/invocations", "", "", "model_name=b.c&x=1", ""},
		{"POST", "/predictions/a/2", "X-Request-Timeout-Ms", "0", "", "{}"},
		{"POST", "/v1/chat/completions", "Content-Type", "application/json", "", `{"model":"a"}`},
		{"POST", "/v1/chat/completions", "Accept", "text/event-stream", "", `{"model":"a","stream_options":{"include_usage":1}}`},
		{"GET", "/v1/models", "", "", "", ""},
		{"GET", "/v1/models/b.c", "", "", "", ""},
		{"GET", "/models", "", "", "limit=1&next_page_token=1", ""},
		{"GET", "/models/a", "", "", "", ""},
		{"POST", "/models", "", "", "", `{"url":"s3://x/y.tar.gz","batch_size":"z"}`},
		{"PUT", "/models/a", "", "", "min_worker=2&max_worker=1", ""},
		{"DELETE", "/models/nope", "", "", "", ""},
		{"GET", "/ping", "", "", "", ""},
		{"GET", "/v2/health/ready", "", "", "", ""},
		{"OPTIONS", "/metrics", "", "", "", ""},
		{"BREW", "/%zz/../..", "X-Request-Id", "\x7f", "a=%", "\x00"},
		{"POST", "/endpoints/a/invocations", "X-Amzn-SageMaker-Target-Model", "b.c", "", "hi"},
		{"POST", "/endpoints/zz/invocations-response-stream", "", "", "", `{"stream": true}`},
		{"POST", "/model/us.a/converse", "Content-Type", "application/json", "",
			`{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{"maxTokens":3}}`},
		{"POST", "/model/a/converse-stream", "", "", "", `{"messages":[],"toolConfig":{"tools":[]}}`},
	}
	for _, s := range seeds {
		f.Add(s.method, s.path, s.hk, s.hv, s.query, []byte(s.body))
	}
	fake := newFake("a", "b.c")
	fake.health["b.c"] = fakeHealth("FAILED")
	ms := startMemServer(f, fake)
	f.Fuzz(func(t *testing.T, method, path, hk, hv, query string, body []byte) {
		req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
		defer fasthttp.ReleaseRequest(req)
		defer fasthttp.ReleaseResponse(resp)
		req.Header.SetMethod(method)
		req.URI().SetHost("mem")
		req.URI().SetPath(path)
		req.URI().SetQueryString(query)
		if hk != "" {
			req.Header.Set(hk, hv)
		}
		req.SetBody(body)
		if err := ms.roundTrip(req, resp); err != nil {
			return // the client would not send it, or the server hung up on garbage
		}
		checkAnswer(t, ms.routes, req, resp)
		if n := ms.logs.FilterMessage("handler panicked").Len(); n > 0 {
			t.Fatalf("%d handler panics: %v", n, ms.logs.All()[0].ContextMap())
		}
	})
}

func checkAnswer(t *testing.T, routes routeTable, req *fasthttp.Request, resp *fasthttp.Response) {
	code := resp.StatusCode()
	if code < 100 || code > 599 {
		t.Fatalf("status %d", code)
	}
	if len(resp.Header.Peek(headerRequestID)) == 0 {
		t.Fatal("no x-request-id")
	}
	if code < 300 || req.Header.IsHead() {
		return
	}
	body := resp.Body()
	if dialect.SplitPath(req.URI().Path()).Is(1, "ping") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("/ping body %q: %v", body, err)
		}
		return
	}
	path := req.URI().Path()
	if code == 400 && bytes.Contains(body, []byte("Malformed HTTP request")) {
		path = nil // the server could not read the path: switchyard's own shape
	}
	if err := checkErrorShape(errorAPI(routes, path), code, string(resp.Header.Peek(awsapi.HeaderErrorType)), body); err != nil {
		t.Fatalf("status %d with body %q: %v", code, body, err)
	}
}

// FuzzMatchRoute checks the route table: a route that a listener serves
// takes a method and has a handler, and a path's variable segments are
// never empty and hold no slash (but in a Converse model id, which the aws
// dialect's FuzzMatch checks).
func FuzzMatchRoute(f *testing.F) {
	for _, p := range []string{"/models/a/invoke", "/predictions/a/b", "/v2/health/live", "//x", "/a/b/c/d/e/",
		"/endpoints/e/invocations", "/model/arn:aws:bedrock:us-east-1:1:inference-profile/us.m/converse-stream", "/v1/x"} {
		f.Add(p)
	}
	s, err := New(Config{InferenceAddr: "x", ManagementAddr: "x"}, newFake())
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, path string) {
		r, a := s.routes.match([]byte(path))
		if r == nil {
			return
		}
		if r.Plane != 0 && (r.Methods == 0 || (r.Serve == nil) == (r.Decode == nil)) {
			t.Fatalf("%q: route %+v takes no method or has not one handler", path, r)
		}
		if errorAPI(s.routes, []byte(path)) == "aws" {
			return
		}
		for _, seg := range [][]byte{a.Name, a.Version} {
			if seg != nil && (len(seg) == 0 || bytes.IndexByte(seg, '/') >= 0) {
				t.Fatalf("%q: segment %q", path, seg)
			}
		}
	})
}

// FuzzWorkerFailure feeds random worker error answers to the code that
// reads them: the status survives, and the message is never empty.
func FuzzWorkerFailure(f *testing.F) {
	f.Add(424, []byte(`{"error":"x"}`), "")
	f.Add(422, []byte(`{"code":1,"type":"t","message":"m"}`), "")
	f.Add(500, []byte(""), "boom")
	f.Add(599, []byte("\xff\xfe"), "")
	f.Fuzz(func(t *testing.T, code int, body []byte, msg string) {
		if code < 400 || code > 599 {
			return
		}
		w := workerFailure(context.Background(), &message.Response{Code: code, Body: body, Message: msg}, code)
		if w.Code != code || w.Msg == "" {
			t.Fatalf("workerFailure = %#v", w)
		}
		if w.Raw != nil && !isProblem(w.Raw) {
			t.Fatalf("passed through %q", w.Raw)
		}
	})
}

// FuzzGuard feeds random raw headers and Authorization values to the
// checks that run before a handler: no panic, and a token is accepted only
// when it is exactly the one configured.
func FuzzGuard(f *testing.F) {
	f.Add("Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "Bearer s3cret")
	f.Add("Host: x\r\n", "bearer  s3cret ")
	f.Add("Transfer-Encoding : chunked\r\nContent-length:1\r\n", "Basic czNjcmV0")
	f.Add("\r\n:\r\n", "Bearer s3cret\x00")
	tok := newToken("s3cret", false)
	f.Fuzz(func(t *testing.T, head, auth string) {
		var h fasthttp.RequestHeader
		raw := "POST /models HTTP/1.1\r\n" + head + "\r\n"
		if err := h.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
			return // fasthttp refuses it before any check of ours
		}
		_ = checkFraming(&h)
		h.Set(fasthttp.HeaderAuthorization, auth)
		err := tok.check(&h)
		cred, ok := bearer(h.Peek(fasthttp.HeaderAuthorization))
		if (err == nil) != (ok && string(cred) == "s3cret") {
			t.Fatalf("Authorization %q: check = %v", h.Peek(fasthttp.HeaderAuthorization), err)
		}
		if err != nil && !errors.Is(err, errUnauthorized) {
			t.Fatalf("check = %v, want errUnauthorized", err)
		}
	})
}
