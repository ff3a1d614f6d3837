package deploytest

import (
	"bytes"
	"slices"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

// TestKServe validates the runtime and the InferenceService against
// KServe v0.20.0's CRDs and checks that they fit together and follow the
// server's contract.
func TestKServe(t *testing.T) {
	crds := crdSchemas(t, "serving.kserve.io_clusterservingruntimes.yaml", "serving.kserve.io_inferenceservices.yaml.gz")
	rt := readManifest(t, "../kserve/clusterservingruntime.yaml")
	isvc := readManifest(t, "../kserve/inferenceservice.yaml")
	checkObjects(t, append(rt, isvc...), crds)
	if len(rt) != 1 || len(isvc) != 1 {
		t.Fatalf("%d runtimes and %d InferenceServices, want one each", len(rt), len(isvc))
	}

	var runtime struct {
		Metadata struct{ Name string }
		Spec     struct {
			SupportedModelFormats []struct{ Name string }
			ProtocolVersions      []string
			Containers            []struct {
				Name  string
				Image string
				Args  []string
				Env   []struct{ Name, Value string }
				Ports []struct {
					ContainerPort int
				}
				ReadinessProbe struct {
					HTTPGet struct {
						Path string
						Port int
					}
				}
			}
		}
	}
	if err := yaml.Unmarshal(rt[0].raw, &runtime); err != nil {
		t.Fatal(err)
	}
	var svc struct {
		Metadata struct{ Name string }
		Spec     struct {
			Predictor struct {
				Model struct {
					ModelFormat     struct{ Name string }
					Runtime         string
					ProtocolVersion *string
				}
			}
		}
	}
	if err := yaml.Unmarshal(isvc[0].raw, &svc); err != nil {
		t.Fatal(err)
	}

	if !slices.Equal(runtime.Spec.ProtocolVersions, []string{"v2"}) {
		t.Errorf("protocolVersions = %v, want [v2]", runtime.Spec.ProtocolVersions)
	}
	m := svc.Spec.Predictor.Model
	if m.Runtime != runtime.Metadata.Name {
		t.Errorf("InferenceService names runtime %q, the runtime is %q", m.Runtime, runtime.Metadata.Name)
	}
	if !slices.ContainsFunc(runtime.Spec.SupportedModelFormats, func(f struct{ Name string }) bool { return f.Name == m.ModelFormat.Name }) {
		t.Errorf("model format %q is not among the runtime's %v", m.ModelFormat.Name, runtime.Spec.SupportedModelFormats)
	}
	// Until v2 inference lands, KServe must not take the predictor for a
	// v2 server (it would send /v2/models/{name}/infer).
	if m.ProtocolVersion != nil {
		t.Errorf("InferenceService sets protocolVersion %q; leave it unset until v2 inference is served", *m.ProtocolVersion)
	}

	if len(runtime.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(runtime.Spec.Containers))
	}
	c := runtime.Spec.Containers[0]
	// Knative routes to one declared port, 8080: the entrypoint's default.
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("ports = %+v, want 8080 alone", c.Ports)
	}
	if c.Name != "kserve-container" || !slices.Equal(c.Args, []string{"serve"}) {
		t.Errorf("container %q args %v, want kserve-container with [serve]", c.Name, c.Args)
	}
	if p := c.ReadinessProbe.HTTPGet; p.Path != "/ping" || p.Port != 8080 {
		t.Errorf("readiness probe = %+v, want /ping on 8080", p)
	}

	// KServe fills {{.Name}} and the like from the InferenceService's
	// metadata with text/template (ReplacePlaceholders): the model is
	// named after the InferenceService.
	envs := map[string]string{}
	for _, e := range c.Env {
		var b bytes.Buffer
		if err := template.Must(template.New(e.Name).Parse(e.Value)).Execute(&b, svc.Metadata); err != nil {
			t.Fatal(err)
		}
		envs[e.Name] = b.String()
	}
	want := map[string]string{
		"SERVING_MODEL_STORE":        "/mnt/models",
		"SERVING_LOAD_MODELS":        "langid=/mnt/models",
		"SERVING_MANAGEMENT_ADDRESS": "http://0.0.0.0:8084",
	}
	for k, v := range want {
		if envs[k] != v {
			t.Errorf("%s = %q, want %q", k, envs[k], v)
		}
	}
}
