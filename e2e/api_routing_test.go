package e2e

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"

	"github.com/switchyard/switchyard/api"
)

// routeCase is one request of the routing table and where it must land.
type routeCase struct {
	name    string
	method  string
	path    string
	headers []string
	code    int    // wanted status
	model   string // the model that must answer a 200: "langid" or "probe"
	errType string // the error type of an error answer
	message string // the exact error message, when it matters
}

// routingCases covers the model selection of DESIGN 4.1 with the example
// langid and a probe loaded side by side.
var routingCases = []routeCase{
	{name: "sagemaker header with .tar.gz", method: "POST", path: "/invocations", headers: []string{"X-Amzn-SageMaker-Target-Model", "langid.tar.gz"}, code: 200, model: "langid"},
	{name: "sagemaker header plain", method: "POST", path: "/invocations", headers: []string{"X-Amzn-SageMaker-Target-Model", "probe"}, code: 200, model: "probe"},
	{name: "x-target-model", method: "POST", path: "/invocations", headers: []string{"X-Target-Model", "probe.tar.gz"}, code: 200, model: "probe"},
	{name: "sagemaker header wins over query", method: "POST", path: "/invocations?model_name=probe", headers: []string{"X-Amzn-SageMaker-Target-Model", "langid.tar.gz"}, code: 200, model: "langid"},
	{name: "query model_name", method: "POST", path: "/invocations?model_name=probe", code: 200, model: "probe"},
	{name: "query wins over header model_name", method: "POST", path: "/invocations?model_name=langid", headers: []string{"model_name", "probe"}, code: 200, model: "langid"},
	{name: "header model_name", method: "POST", path: "/invocations", headers: []string{"model_name", "langid"}, code: 200, model: "langid"},
	{name: "no model with two loaded", method: "POST", path: "/invocations", code: 400, errType: "BadRequestException", message: "Parameter model_name is required."},
	{name: "unknown target model", method: "POST", path: "/invocations", headers: []string{"X-Amzn-SageMaker-Target-Model", "nope.tar.gz"}, code: 404, errType: "ModelNotFoundException"},
	{name: "unknown query model", method: "POST", path: "/invocations?model_name=nope", code: 404, errType: "ModelNotFoundException"},
	{name: "predictions", method: "POST", path: "/predictions/langid", code: 200, model: "langid"},
	{name: "predictions with version", method: "POST", path: "/predictions/probe/1", code: 200, model: "probe"},
	{name: "predictions unknown", method: "POST", path: "/predictions/nope", code: 404, errType: "ModelNotFoundException"},
	{name: "sagemaker invoke path", method: "POST", path: "/models/probe/invoke", code: 200, model: "probe"},
	{name: "sagemaker invoke path unknown", method: "POST", path: "/models/nope/invoke", code: 404, errType: "ModelNotFoundException"},
	{name: "unknown route", method: "POST", path: "/nowhere", code: 404, errType: "ResourceNotFoundException"},
	{name: "wrong method", method: "GET", path: "/invocations", code: 405, errType: "MethodNotAllowedException"},
	{name: "management route on the inference listener", method: "GET", path: "/models", code: 404, errType: "ResourceNotFoundException"},
}

// TestAPIRouting starts the example langid next to a probe model and sends
// each request of routingCases to the inference listener.
func TestAPIRouting(t *testing.T) {
	langid, err := filepath.Abs("../examples/models/langid")
	if err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	probe := probeModel(t, store, "probe", "minWorkers=1", "maxWorkers=1")
	s := StartServer(t, Options{Store: store, Models: "langid=" + langid + ",probe=" + probe})
	s.WaitStatus(waitLimit, api.StatusHealthy, "langid", "probe")
	c := newClient(4)
	for _, tc := range routingCases {
		t.Run(tc.name, func(t *testing.T) {
			h := append([]string{"Content-Type", "application/json", "x-request-id", "route-test"}, tc.headers...)
			r := send(c, tc.method, s.Inference+tc.path, []byte(`{"inputs": "Bonjour tout le monde"}`), h...)
			checkRoute(t, tc, r)
		})
	}
}

// checkRoute checks one answer against its case.
func checkRoute(t *testing.T, tc routeCase, r reply) {
	t.Helper()
	if r.err != nil || r.code != tc.code {
		t.Fatalf("%s %s: %d %s %v, want %d", tc.method, tc.path, r.code, r.body, r.err, tc.code)
	}
	if id := r.header.Get("x-request-id"); id != "route-test" {
		t.Errorf("x-request-id = %q, want the request's own", id)
	}
	if tc.code == http.StatusMethodNotAllowed && r.header.Get("Allow") != "POST" {
		t.Errorf("Allow = %q, want POST", r.header.Get("Allow"))
	}
	if tc.code != http.StatusOK {
		e, err := r.problem()
		if err != nil || e.Type != tc.errType || (tc.message != "" && e.Message != tc.message) {
			t.Errorf("error body %s (%v), want type %s message %q", r.body, err, tc.errType, tc.message)
		}
		return
	}
	if got := answeredBy(r.body); got != tc.model {
		t.Errorf("answered by %q (%s), want %q", got, r.body, tc.model)
	}
}

// answeredBy tells the probe's answer from langid's: the probe names
// itself, langid ranks languages (French first for the test sentence).
func answeredBy(body []byte) string {
	var p probeAnswer
	if json.Unmarshal(body, &p) == nil && p.Model != "" {
		return p.Model
	}
	var ranked []struct {
		Label string  `json:"label"`
		Score float64 `json:"score"`
	}
	if json.Unmarshal(body, &ranked) == nil && len(ranked) > 0 && ranked[0].Label == "fra" {
		return "langid"
	}
	return ""
}

// TestAPIOnlyModel checks the last rule of the /invocations order: with a
// single model loaded, a request that names none goes to it.
func TestAPIOnlyModel(t *testing.T) {
	store := t.TempDir()
	probeModel(t, store, "solo", "minWorkers=1", "maxWorkers=1")
	s := StartServer(t, Options{Store: store, Shared: true})
	s.WaitStatus(waitLimit, api.StatusHealthy, "solo")
	r := send(newClient(1), http.MethodPost, s.Inference+"/invocations", []byte(`{}`), "x-probe-tag", "only")
	if a, err := r.probe(); err != nil || a.Model != "solo" || a.Tag != "only" {
		t.Fatalf("invocations without a model name: %+v, %v", a, err)
	}
	code, body := s.Get(s.Inference + "/models")
	if code != http.StatusOK {
		t.Errorf("GET /models on the shared listener: %d %s", code, body)
	}
}
