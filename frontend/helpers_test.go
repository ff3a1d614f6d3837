package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/frontend/genstream"
)

// Two fasthttp goroutines are not ours to own: the process-wide one that
// refreshes the Date header and never stops, and each worker pool's cleaner,
// which notices a closed listener only when its sleep of
// MaxIdleWorkerDuration (10 s) ends. The accept loop and the connection
// goroutines, which a missing shutdown would leave behind, stay checked.
var leakOptions = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.updateServerDate.func1"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"),
}

func TestMain(m *testing.M) { goleak.VerifyTestMain(m, leakOptions...) }

// Names the tests share with the packages that own them now.
type (
	problem       = dialect.Problem
	plane         = dialect.Plane
	chatUsage     = genstream.Usage
	toolCallDelta = genstream.ToolCallDelta
)

const (
	contentTypeJSON = dialect.ContentTypeJSON
	contentTypeSSE  = genstream.ContentTypeSSE
	sseDone         = genstream.SSEDone
	planeInference  = dialect.Inference
	planeManagement = dialect.Management
	maxModelName    = dialect.MaxModelName
	maxPage         = 100 // djl's largest page of GET /models
)

// statusBody is the answer of the management calls that change something.
type statusBody struct {
	Status string `json:"status"`
}

// openAIErrorDetail is the "error" member of OpenAI's error body.
type openAIErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// testServer is a running Server on 127.0.0.1 with a fake registry.
type testServer struct {
	*Server
	reg    *prometheus.Registry
	inf    string // base URL of the inference listener
	mgmt   string // base URL of the management listener
	client *http.Client
	logs   *observer.ObservedLogs
}

// startServer serves f on two loopback listeners ("127.0.0.1:" also asks
// for a free port but is a different address string) until the test ends.
func startServer(t *testing.T, f Models, opts ...func(*Config)) *testServer {
	t.Helper()
	core, logs := observer.New(zap.DebugLevel)
	cfg := Config{
		InferenceAddr: "127.0.0.1:0", ManagementAddr: "127.0.0.1:",
		Logger: zap.New(core), Registry: prometheus.NewRegistry(),
	}
	for _, o := range opts {
		o(&cfg)
	}
	s, err := New(cfg, f)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	if err := s.Listen(); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx) }()
	ts := &testServer{
		Server: s, reg: cfg.Registry, logs: logs,
		inf: "http://" + s.InferenceAddr(), mgmt: "http://" + s.ManagementAddr(),
		client: &http.Client{Transport: &http.Transport{}},
	}
	t.Cleanup(func() {
		ts.client.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return ts
}

// do sends one request and returns the answer with its whole body.
func (ts *testServer) do(t *testing.T, method, url, body string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatalf("NewRequest: %v", err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, b
}

// mustProblem decodes an error body and checks that its code matches the
// status.
func mustProblem(t *testing.T, resp *http.Response, body []byte) problem {
	t.Helper()
	var p problem
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("error body %q is not JSON: %v", body, err)
	}
	if p.Code != resp.StatusCode || p.Type == "" || p.Message == "" {
		t.Fatalf("error body %+v does not fit status %d", p, resp.StatusCode)
	}
	if ct := resp.Header.Get("Content-Type"); ct != contentTypeJSON {
		t.Fatalf("error Content-Type = %q", ct)
	}
	return p
}

// errorAPI names the API whose error shape answers path: "openai" or
// "aws" for the paths those dialects take (a dialect's routes, and OpenAI's
// claim of /v1/...), "" for switchyard's own.
func errorAPI(routes routeTable, path []byte) string {
	if o := ownerOf(routes, path); o == "openai" || o == "aws" || o == "kserve" {
		return o
	}
	return ""
}

// checkErrorShape checks an error body against the shape of its API (see
// errorAPI): switchyard's {"code", "type", "message"} (code equal to the
// status), OpenAI's {"error": {...}}, and an AWS error code header with a
// JSON message on the AWS routes.
func checkErrorShape(api string, code int, awsType string, body []byte) error {
	switch api {
	case "openai":
		var e struct {
			Error *openAIErrorDetail `json:"error"`
		}
		if err := json.Unmarshal(body, &e); err != nil || e.Error == nil || e.Error.Message == "" || e.Error.Type == "" {
			return fmt.Errorf("not an OpenAI error (%v)", err)
		}
	case "kserve":
		if _, err := v2Error(body); err != nil {
			return err
		}
	case "aws":
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil || awsType == "" || (m["Message"] == nil && m["message"] == nil) {
			return fmt.Errorf("not an AWS error: type %q (%v)", awsType, err)
		}
	default:
		var p problem
		d := json.NewDecoder(bytes.NewReader(body))
		d.DisallowUnknownFields()
		if err := d.Decode(&p); err != nil || p.Code != code || p.Type == "" || p.Message == "" {
			return fmt.Errorf("not a problem body (%v)", err)
		}
	}
	return nil
}

// v2Error returns the message of an error body in the Open Inference
// Protocol's shape, {"error": "..."} and nothing else.
func v2Error(body []byte) (string, error) {
	var e struct {
		Error *string `json:"error"`
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.DisallowUnknownFields()
	if err := d.Decode(&e); err != nil || e.Error == nil || *e.Error == "" {
		return "", fmt.Errorf("not an Open Inference Protocol error (%v)", err)
	}
	return *e.Error, nil
}

// mustV2Error checks an error answer in the Open Inference Protocol's
// shape and returns its message.
func mustV2Error(t *testing.T, resp *http.Response, body []byte, code int) string {
	t.Helper()
	if resp.StatusCode != code {
		t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, code, body)
	}
	msg, err := v2Error(body)
	if err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != contentTypeJSON {
		t.Fatalf("error Content-Type = %q", ct)
	}
	return msg
}

// mustOpenAIError decodes an error body in OpenAI's shape.
func mustOpenAIError(t *testing.T, resp *http.Response, body []byte) openAIErrorDetail {
	t.Helper()
	var e struct {
		Error openAIErrorDetail `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
		t.Fatalf("error body %s is not OpenAI's shape (%v)", body, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != contentTypeJSON {
		t.Fatalf("error Content-Type = %q", ct)
	}
	return e.Error
}

// panics counts logged handler panics.
func (ts *testServer) panics() int {
	return ts.logs.FilterMessage("handler panicked").Len()
}
