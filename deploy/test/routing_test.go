package deploytest

import (
	"os"
	"regexp"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	routev3 "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/router/v3"
	hcmv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	_ "github.com/envoyproxy/go-control-plane/envoy/extensions/retry/host/previous_hosts/v3"
	"google.golang.org/protobuf/encoding/protojson"
	networkingv1 "k8s.io/api/networking/v1"
	"sigs.k8s.io/yaml"
)

// affinityCases are requests as clients send them and the model each names
// (docs/api.md); "" when the request names none.
var affinityCases = []struct {
	method, path string
	header       map[string]string
	body         string
	model        string
}{
	{"POST", "/invocations", map[string]string{"X-Amzn-SageMaker-Target-Model": "langid.tar.gz"}, "{}", "langid"},
	{"POST", "/invocations", map[string]string{"X-Amzn-SageMaker-Target-Model": "model-a"}, "{}", "model-a"},
	{"POST", "/invocations", map[string]string{"X-Target-Model": "model-b"}, "{}", "model-b"},
	{"POST", "/invocations?model_name=model-c", nil, "{}", "model-c"},
	{"POST", "/invocations", map[string]string{"model_name": "model-d"}, "{}", "model-d"},
	{"POST", "/predictions/model-a", nil, "{}", "model-a"},
	{"POST", "/predictions/model-a/v1", nil, "{}", "model-a"},
	{"POST", "/predictions/model-e?x=1", nil, "{}", "model-e"},
	{"POST", "/models/model-b/invoke", nil, "{}", "model-b"},
	{"POST", "/endpoints/model-c/invocations", nil, "{}", "model-c"},
	{"POST", "/endpoints/ep/invocations", map[string]string{"X-Amzn-SageMaker-Target-Model": "model-f"}, "{}", "model-f"},
	{"POST", "/model/model-d/converse", nil, "{}", "model-d"},
	{"POST", "/v2/models/model-e/infer", nil, "{}", "model-e"},
	{"POST", "/v1/chat/completions", nil, `{"model": "model-f", "messages": []}`, "model-f"},
	{"GET", "/ping", nil, "", ""},
}

// TestEnvoyConfig decodes envoy.yaml into Envoy's bootstrap API (unknown
// fields and unknown typed configs refused), runs the API's validation
// rules, and checks the hash keys its regular expressions make.
func TestEnvoyConfig(t *testing.T) {
	data, err := os.ReadFile("../routing/envoy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON([]byte(fillPlaceholders(string(data))))
	if err != nil {
		t.Fatal(err)
	}
	var b bootstrapv3.Bootstrap
	if err := protojson.Unmarshal(js, &b); err != nil {
		t.Fatalf("envoy.yaml: %v", err)
	}
	if err := b.ValidateAll(); err != nil {
		t.Fatalf("envoy.yaml: %v", err)
	}
	var hcm hcmv3.HttpConnectionManager
	if err := b.StaticResources.Listeners[0].FilterChains[0].Filters[0].GetTypedConfig().UnmarshalTo(&hcm); err != nil {
		t.Fatal(err)
	}
	if err := hcm.ValidateAll(); err != nil {
		t.Fatal(err)
	}
	routes := hcm.GetRouteConfig().VirtualHosts[0].Routes
	for _, c := range affinityCases {
		if c.body != "{}" || c.method != "POST" {
			continue // Envoy does not hash on bodies; GET /ping names no model
		}
		got, ok := envoyKey(t, routes, c.path, c.header)
		if !ok || got != c.model {
			t.Errorf("%s %s %v: hash key %q (found %v), want %q", c.method, c.path, c.header, got, ok, c.model)
		}
	}
}

// envoyKey plays Envoy's route match and hash policy for one request: the
// first route whose path and header matchers match, then its hash policies
// in order, the first that yields a value (enough for these routes, whose
// policies are alternatives).
func envoyKey(t *testing.T, routes []*routev3.Route, path string, header map[string]string) (string, bool) {
	t.Helper()
	h := map[string]string{":path": path}
	for k, v := range header {
		h[strings.ToLower(k)] = v
	}
	bare, query, _ := strings.Cut(path, "?")
	for _, r := range routes {
		m := r.GetMatch()
		switch {
		case m.GetPrefix() != "" && !strings.HasPrefix(bare, m.GetPrefix()):
			continue
		case m.GetPath() != "" && bare != m.GetPath():
			continue
		case m.GetSafeRegex() != nil && !regexp.MustCompile(`^(?:`+m.GetSafeRegex().GetRegex()+`)$`).MatchString(bare):
			continue
		}
		if !headersMatch(m, h) {
			continue
		}
		for _, hp := range r.GetRoute().GetHashPolicy() {
			switch {
			case hp.GetHeader() != nil:
				v, ok := h[hp.GetHeader().GetHeaderName()]
				if !ok {
					continue
				}
				if rw := hp.GetHeader().GetRegexRewrite(); rw != nil {
					sub := regexp.MustCompile(`\\(\d)`).ReplaceAllString(rw.GetSubstitution(), "$${$1}")
					v = regexp.MustCompile(rw.GetPattern().GetRegex()).ReplaceAllString(v, sub)
				}
				return v, true
			case hp.GetQueryParameter() != nil:
				for _, kv := range strings.Split(query, "&") {
					if k, v, _ := strings.Cut(kv, "="); k == hp.GetQueryParameter().GetName() {
						return v, true
					}
				}
			}
		}
		return "", false
	}
	return "", false
}

func headersMatch(m *routev3.RouteMatch, h map[string]string) bool {
	for _, hm := range m.GetHeaders() {
		if _, ok := h[hm.GetName()]; ok != hm.GetPresentMatch() {
			return false
		}
	}
	return true
}

// TestGatewayAPI validates the HTTPRoute against Gateway API v1.6.1's
// standard CRD and the BackendTrafficPolicy against Envoy Gateway v1.9.0's,
// CEL rules included.
func TestGatewayAPI(t *testing.T) {
	crds := crdSchemas(t, "gateway.networking.k8s.io_httproutes.yaml", "gateway.envoyproxy.io_backendtrafficpolicies.yaml")
	objs := readManifest(t, "../routing/gateway-api.yaml")
	if len(objs) != 2 {
		t.Fatalf("%d objects, want an HTTPRoute and a BackendTrafficPolicy", len(objs))
	}
	checkObjects(t, objs, crds)
	// The policy applies to the route this file defines.
	ref := objs[1].fields["spec"].(map[string]any)["targetRefs"].([]any)[0].(map[string]any)
	if ref["kind"] != "HTTPRoute" || ref["name"] != objs[0].name() {
		t.Errorf("policy targets %v, want HTTPRoute %s", ref, objs[0].name())
	}
}

// TestIngressNginx decodes the Ingress strictly and checks the annotations
// that carry the affinity and the retries.
func TestIngressNginx(t *testing.T) {
	objs := readManifest(t, "../routing/ingress-nginx.yaml")
	typed := checkObjects(t, objs, nil)
	ing, ok := typed["Ingress/switchyard"].(*networkingv1.Ingress)
	if !ok {
		t.Fatalf("no Ingress switchyard among %v", keys(typed))
	}
	want := map[string]string{
		"nginx.ingress.kubernetes.io/upstream-hash-by":    "$http_x_amzn_sagemaker_target_model$http_x_target_model$uri",
		"nginx.ingress.kubernetes.io/proxy-next-upstream": "error timeout http_503 non_idempotent",
	}
	for k, v := range want {
		if ing.Annotations[k] != v {
			t.Errorf("%s = %q, want %q", k, ing.Annotations[k], v)
		}
	}
	if b := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service; b.Name != "rel-switchyard" || b.Port.Number != 8080 {
		t.Errorf("backend = %+v, want the chart's Service on 8080", b)
	}
}
