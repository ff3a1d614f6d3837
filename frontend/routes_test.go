package frontend

import (
	"net/http"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/aws"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/frontend/djl"
	"github.com/switchyard/switchyard/frontend/kserve"
	"github.com/switchyard/switchyard/frontend/openai"
)

func TestRoutes(t *testing.T) {
	ts := startServer(t, newFake("m"))
	long := strings.Repeat("x", maxModelName+1)
	cases := []struct {
		name, base, method, path, body string
		code                           int
		allow, kind                    string
	}{
		{"invocations", "inf", "POST", "/invocations", "hi", 200, "", ""},
		{"invoke", "inf", "POST", "/models/m/invoke", "hi", 200, "", ""},
		{"predictions", "inf", "POST", "/predictions/m", "hi", 200, "", ""},
		{"predictions version", "inf", "POST", "/predictions/m/1.0", "hi", 200, "", ""},
		{"chat", "inf", "POST", "/v1/chat/completions", `{"model":"m"}`, 200, "", ""},
		{"ping", "inf", "GET", "/ping", "", 200, "", ""},
		{"ping head", "inf", "HEAD", "/ping", "", 200, "", ""},
		{"live", "inf", "GET", "/v2/health/live", "", 200, "", ""},
		{"ready", "inf", "GET", "/v2/health/ready", "", 200, "", ""},
		{"trailing slash", "inf", "GET", "/ping/", "", 200, "", ""},
		{"invocations GET", "inf", "GET", "/invocations", "", 405, "POST", "MethodNotAllowedException"},
		{"ping DELETE", "inf", "DELETE", "/ping", "", 405, "GET, HEAD", "MethodNotAllowedException"},
		{"invoke PUT", "inf", "PUT", "/models/m/invoke", "", 405, "POST", "MethodNotAllowedException"},
		{"models on inference", "inf", "GET", "/models", "", 404, "", "ResourceNotFoundException"},
		{"metrics on inference", "inf", "GET", "/metrics", "", 404, "", "ResourceNotFoundException"},
		{"unknown", "inf", "GET", "/nope", "", 404, "", "ResourceNotFoundException"},
		{"root", "inf", "GET", "/", "", 404, "", "ResourceNotFoundException"},
		{"too deep", "inf", "POST", "/predictions/m/1/2", "", 404, "", "ResourceNotFoundException"},
		{"v2 other", "inf", "GET", "/v2/health/dead", "", 404, "", ""},
		{"v2 repository on inference", "inf", "POST", "/v2/repository/index", "", 404, "", ""},
		{"v2 infer on management", "mgmt", "POST", "/v2/models/m/infer", "", 404, "", ""},
		{"v2 infer GET", "inf", "GET", "/v2/models/m/infer", "", 405, "POST", ""},
		{"v2 index GET", "mgmt", "GET", "/v2/repository/index", "", 405, "POST", ""},
		{"bad name", "inf", "POST", "/predictions/a%21b", "", 400, "", "BadRequestException"},
		{"bad version", "inf", "POST", "/predictions/m/v%21", "", 400, "", "BadRequestException"},
		{"long name", "inf", "POST", "/models/" + long + "/invoke", "", 400, "", "BadRequestException"},
		{"unknown model", "inf", "POST", "/models/zz/invoke", "", 404, "", "ModelNotFoundException"},
		{"list", "mgmt", "GET", "/models", "", 200, "", ""},
		{"describe", "mgmt", "GET", "/models/m", "", 200, "", ""},
		{"describe slash", "mgmt", "GET", "/models/m/", "", 200, "", ""},
		{"describe unknown", "mgmt", "GET", "/models/zz", "", 404, "", "ModelNotFoundException"},
		{"describe bad name", "mgmt", "GET", "/models/..", "", 404, "", "ResourceNotFoundException"},
		{"describe dots", "mgmt", "GET", "/models/a%2A", "", 400, "", "BadRequestException"},
		{"model PATCH", "mgmt", "PATCH", "/models/m", "", 405, "GET, HEAD, PUT, DELETE", "MethodNotAllowedException"},
		{"model POST", "mgmt", "POST", "/models/m", "", 405, "GET, HEAD, PUT, DELETE", "MethodNotAllowedException"},
		{"models DELETE", "mgmt", "DELETE", "/models", "", 405, "GET, HEAD, POST", "MethodNotAllowedException"},
		{"metrics", "mgmt", "GET", "/metrics", "", 200, "", ""},
		{"invocations on management", "mgmt", "POST", "/invocations", "", 404, "", "ResourceNotFoundException"},
		{"invoke endpoint", "inf", "POST", "/endpoints/m/invocations", "hi", 200, "", ""},
		{"invoke endpoint GET", "inf", "GET", "/endpoints/m/invocations", "", 405, "POST", ""},
		{"converse GET", "inf", "GET", "/model/m/converse", "", 405, "POST", ""},
		{"endpoint on management", "mgmt", "POST", "/endpoints/m/invocations", "", 404, "", ""},
		{"ping on management", "mgmt", "GET", "/ping", "", 404, "", "ResourceNotFoundException"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := ts.inf
			if c.base == "mgmt" {
				base = ts.mgmt
			}
			resp, body := ts.do(t, c.method, base+c.path, c.body, nil)
			if resp.StatusCode != c.code {
				t.Fatalf("status = %d, want %d (body %s)", resp.StatusCode, c.code, body)
			}
			if got := resp.Header.Get("Allow"); got != c.allow {
				t.Errorf("Allow = %q, want %q", got, c.allow)
			}
			if resp.Header.Get("X-Request-Id") == "" {
				t.Error("no x-request-id")
			}
			if strings.HasPrefix(c.path, "/v2/") && c.code >= 400 {
				mustV2Error(t, resp, body, c.code)
			}
			if c.kind != "" {
				if p := mustProblem(t, resp, body); p.Type != c.kind {
					t.Errorf("type = %q, want %q", p.Type, c.kind)
				}
			}
		})
	}
}

// TestMatchRoute checks which dialect of the route table takes a path, and
// the path's variable segments; each dialect's own TestMatch checks which of
// its routes.
func TestMatchRoute(t *testing.T) {
	s := newServer(t, newFake())
	cases := []struct {
		path, owner   string
		name, version string
	}{
		{"/invocations", "djl", "", ""},
		{"/models", "djl", "", ""},
		{"/models/", "djl", "", ""},
		{"/models/a", "djl", "a", ""},
		{"/models/a/invoke", "djl", "a", ""},
		{"/models/a/other", "", "", ""},
		{"/predictions/a/2", "djl", "a", "2"},
		{"/predictions", "", "", ""},
		{"/ping", "djl", "", ""},
		{"/v1/chat/completions", "openai", "", ""},
		{"/v1/chat", "openai", "", ""}, // no route, OpenAI's 404
		{"/v1/models", "openai", "", ""},
		{"/v1/models/a", "openai", "a", ""},
		{"/v1/models/a/b", "openai", "", ""},
		{"/v1", "", "", ""},
		{"/v2/health/live", "kserve", "", ""},
		{"/v2/health/ready/x", "kserve", "", ""}, // no route, the protocol's 404
		{"/v2", "kserve", "", ""},
		{"/v2/models/a/versions/1/infer", "kserve", "a", "1"},
		{"/v2/models/a/versions/1", "kserve", "a", "1"},
		{"/v2/models/a/ready", "kserve", "a", ""},
		{"/v2/repository/models/a/load", "kserve", "a", ""},
		{"/v2x", "", "", ""},
		{"/endpoints/e/invocations", "aws", "e", ""},
		{"/endpoints/e/invocations-response-stream", "aws", "e", ""},
		{"/endpoints/e", "", "", ""},
		{"/endpoints/e/other", "", "", ""},
		{"/model/us.m/converse", "aws", "us.m", ""},
		{"/model/m/converse-stream/", "aws", "m", ""},
		{"/model/arn:aws:bedrock:us-east-1:1:inference-profile/us.m/converse", "aws",
			"arn:aws:bedrock:us-east-1:1:inference-profile/us.m", ""},
		{"/model/m/invoke", "", "", ""},
		{"/model/converse", "", "", ""},
		{"/metrics", "core", "", ""},
		{"//ping", "", "", ""},
		{"/a/b/c/d/e", "", "", ""},
		{"", "", "", ""},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			r, args := s.routes.match([]byte(c.path))
			owner := ownerOf(s.routes, []byte(c.path))
			if owner != c.owner || (r != nil) != (c.owner != "") || string(args.Name) != c.name || string(args.Version) != c.version {
				t.Errorf("match(%q) = %s %q %q, want %s %q %q", c.path, owner, args.Name, args.Version, c.owner, c.name, c.version)
			}
		})
	}
}

// ownerOf names the dialect of routes that takes path, "" for none.
func ownerOf(routes routeTable, path []byte) string {
	p := dialect.SplitPath(path)
	for _, d := range routes {
		if _, _, ok := d.Match(p); !ok {
			continue
		}
		switch d.(type) {
		case *djl.Dialect:
			return "djl"
		case *openai.Dialect:
			return "openai"
		case *aws.Dialect:
			return "aws"
		case *kserve.Dialect:
			return "kserve"
		case *coreRoutes:
			return "core"
		}
		return "?"
	}
	return ""
}

func TestModelSelection(t *testing.T) {
	two := startServer(t, newFake("a", "langid", "odd.tar.gz", "odd"))
	one := startServer(t, newFake("solo"))
	none := startServer(t, newFake())
	cases := []struct {
		name  string
		ts    *testServer
		query string
		hdr   map[string]string
		code  int
		model string
	}{
		{"sagemaker header, archive suffix", two, "", map[string]string{"X-Amzn-SageMaker-Target-Model": "langid.tar.gz"}, 200, "langid"},
		{"a name ending in .tar.gz", two, "", map[string]string{"X-Amzn-SageMaker-Target-Model": "odd.tar.gz"}, 200, "odd.tar.gz"},
		{"target header, a name ending in .tar.gz", two, "", map[string]string{"X-Target-Model": "odd.tar.gz"}, 200, "odd.tar.gz"},
		{"archive suffix of an unknown model", two, "", map[string]string{"X-Amzn-SageMaker-Target-Model": "zz.tar.gz"}, 404, ""},
		{"target header", two, "", map[string]string{"X-Target-Model": "a"}, 200, "a"},
		{"sagemaker header beats query", two, "?model_name=a", map[string]string{"X-Amzn-SageMaker-Target-Model": "langid"}, 200, "langid"},
		{"query", two, "?model_name=a", nil, 200, "a"},
		{"model_name header", two, "", map[string]string{"model_name": "langid"}, 200, "langid"},
		{"query beats model_name header", two, "?model_name=a", map[string]string{"model_name": "langid"}, 200, "a"},
		{"two models, none named", two, "", nil, 400, ""},
		{"unknown model", two, "?model_name=zz", nil, 404, ""},
		{"invalid name", two, "", map[string]string{"X-Target-Model": "a/b"}, 400, ""},
		{"the only model", one, "", nil, 200, "solo"},
		{"no models", none, "", nil, 400, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := c.ts.do(t, "POST", c.ts.inf+"/invocations"+c.query, "x", c.hdr)
			if resp.StatusCode != c.code {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, c.code, body)
			}
			if c.code != 200 {
				mustProblem(t, resp, body)
				return
			}
			if got := resp.Header.Get("X-Model"); got != c.model {
				t.Errorf("model = %q, want %q", got, c.model)
			}
		})
	}
	t.Run("message", func(t *testing.T) {
		resp, body := two.do(t, "POST", two.inf+"/invocations", "", nil)
		if p := mustProblem(t, resp, body); p.Message != "Parameter model_name is required." {
			t.Errorf("message = %q", p.Message)
		}
	})
}

func TestChatModel(t *testing.T) {
	ts := startServer(t, newFake("a", "b"))
	cases := []struct {
		name, body, query string
		code              int
		model             string
	}{
		{"body model", `{"model":"b","messages":[]}`, "", 200, "b"},
		{"hub id falls back to query", `{"model":"org/llama"}`, "?model_name=a", 200, "a"},
		{"no model, two registered", `{"messages":[]}`, "", 400, ""},
		{"not JSON", `nope`, "", 400, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := ts.do(t, "POST", ts.inf+"/v1/chat/completions"+c.query, c.body, nil)
			if resp.StatusCode != c.code {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, c.code, body)
			}
			if c.code == http.StatusOK && resp.Header.Get("X-Model") != c.model {
				t.Errorf("model = %q, want %q", resp.Header.Get("X-Model"), c.model)
			}
		})
	}
}

// panicky is a registry whose Health panics.
type panicky struct{ *fakeModels }

func (panicky) Health() map[string]api.ModelHealth { panic("registry bug") }

func TestPanicBecomes500(t *testing.T) {
	f := panicky{newFake("m")}
	core, logs := observer.New(zap.ErrorLevel)
	ts := startServer(t, f, func(c *Config) { c.Logger = zap.New(core) })
	ts.logs = logs
	resp, body := ts.do(t, "GET", ts.inf+"/ping", "", map[string]string{"X-Request-Id": "p-1"})
	if p := mustProblem(t, resp, body); p.Code != 500 || !strings.Contains(p.Message, "registry bug") {
		t.Errorf("problem = %+v", p)
	}
	if resp.Header.Get("X-Request-Id") != "p-1" || ts.panics() != 1 {
		t.Errorf("x-request-id %q, %d panics logged", resp.Header.Get("X-Request-Id"), ts.panics())
	}
	if resp, _ := ts.do(t, "POST", ts.inf+"/invocations", "x", nil); resp.StatusCode != 200 {
		t.Errorf("server unusable after a panic: %d", resp.StatusCode)
	}
}
