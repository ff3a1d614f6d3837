package deploytest

import (
	"fmt"
	"strings"
	"testing"

	bootstrapv3 "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"
)

// TestChecksRefuse checks the checks: each object below has one mistake of
// the kind an API server refuses, and must be refused for it.
func TestChecksRefuse(t *testing.T) {
	crds := crdSchemas(t, append(chartCRDs, "gateway.envoyproxy.io_backendtrafficpolicies.yaml")...)
	cases := map[string]struct{ doc, want string }{
		"unknown field": {`
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: a}
spec:
  scaleTargetRef: {name: d}
  triggers: [{type: prometheus, metdata: {query: x}}]`, "unknown field spec.triggers[0].metdata"},
		"wrong type": {`
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: a}
spec:
  scaleTargetRef: {name: d}
  minReplicaCount: two
  triggers: [{type: prometheus, metadata: {query: x}}]`, "spec.minReplicaCount"},
		"missing required": {`
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: a}
spec:
  triggers: [{type: prometheus, metadata: {query: x}}]`, "spec.scaleTargetRef: Required value"},
		"CEL rule": {`
apiVersion: gateway.envoyproxy.io/v1alpha1
kind: BackendTrafficPolicy
metadata: {name: a}
spec:
  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]
  loadBalancer: {type: ConsistentHash, consistentHash: {type: Headers}}`, "the headers field must be set"},
		"bad name": {`
apiVersion: keda.sh/v1alpha1
kind: ScaledObject
metadata: {name: Not_A_Name}
spec:
  scaleTargetRef: {name: d}
  triggers: [{type: prometheus, metadata: {query: x}}]`, "metadata.name"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			objs := splitDocs(t, name, []byte(c.doc))
			s := crds[objs[0].key()]
			problems := strings.Join(s.check(objs[0].fields), "\n")
			if !strings.Contains(problems, c.want) {
				t.Errorf("problems %q, want one with %q", problems, c.want)
			}
		})
	}

	t.Run("strict built-in type", func(t *testing.T) {
		ft := &fakeT{TB: t}
		checkObjects(ft, splitDocs(t, "deployment", []byte(`
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers: [{name: c, image: i, livenessprobe: {}}]`)), nil)
		if !strings.Contains(ft.errors, `unknown field "spec.template.spec.containers[0].livenessprobe"`) {
			t.Errorf("errors %q, want the unknown field", ft.errors)
		}
	})

	t.Run("two volume sources", func(t *testing.T) {
		ft := &fakeT{TB: t}
		checkObjects(ft, render(t, "modelStore.volume.emptyDir.medium=Memory", "modelStore.volume.hostPath.path=/models"), nil)
		if !strings.Contains(ft.errors, "volume models has 2 sources") {
			t.Errorf("errors %q, want the volume with two sources", ft.errors)
		}
	})

	t.Run("envoy", func(t *testing.T) {
		for doc, want := range map[string]string{
			"static_resources: {clusters: [{name: c, conect_timeout: 1s}]}":   "unknown field",
			"static_resources: {clusters: [{name: c, connect_timeout: -1s}]}": "ConnectTimeout",
		} {
			js, err := yaml.YAMLToJSON([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			var b bootstrapv3.Bootstrap
			err = protojson.Unmarshal(js, &b)
			if err == nil {
				err = b.ValidateAll()
			}
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: error %v, want %q", doc, err, want)
			}
		}
	})
}

// fakeT collects the errors checkObjects reports instead of failing.
type fakeT struct {
	testing.TB
	errors string
}

func (f *fakeT) Errorf(format string, args ...any) {
	f.errors += strings.TrimSpace(fmt.Sprintf(format, args...)) + "\n"
}
