package deploytest

import (
	"bytes"
	"slices"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

// kserveCRDs are the KServe CRDs the manifests of deploy/kserve are
// validated against.
var kserveCRDs = []string{"serving.kserve.io_clusterservingruntimes.yaml",
	"serving.kserve.io_inferenceservices.yaml.gz", "serving.kserve.io_trainedmodels.yaml"}

// kserveRuntime is what the tests read of a ClusterServingRuntime.
type kserveRuntime struct {
	Metadata struct{ Name string }
	Spec     struct {
		MultiModel            bool
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

// kserveISVC is what the tests read of an InferenceService.
type kserveISVC struct {
	Metadata struct{ Name string }
	Spec     struct {
		Predictor struct {
			Model struct {
				ModelFormat     struct{ Name string }
				Runtime         string
				ProtocolVersion string
				StorageURI      *string `json:"storageUri"`
			}
		}
	}
}

// TestKServe validates the single-model runtime and its InferenceService
// against KServe v0.20.0's CRDs and checks that they fit together and
// follow the server's contract.
func TestKServe(t *testing.T) {
	runtime, svc := readKServe(t, "../kserve/clusterservingruntime.yaml", "../kserve/inferenceservice.yaml")
	if runtime.Spec.MultiModel || svc.Spec.Predictor.Model.StorageURI == nil {
		t.Errorf("multiModel %v, storageUri %v: want a single-model runtime and a storageUri", runtime.Spec.MultiModel, svc.Spec.Predictor.Model.StorageURI)
	}
	c := runtime.Spec.Containers[0]
	if p := c.ReadinessProbe.HTTPGet; p.Path != "/ping" || p.Port != 8080 {
		t.Errorf("readiness probe = %+v, want /ping on 8080", p)
	}
	checkEnv(t, c.Env, svc, map[string]string{
		"SERVING_MODEL_STORE":        "/mnt/models",
		"SERVING_LOAD_MODELS":        "topics=/mnt/models",
		"SERVING_MANAGEMENT_ADDRESS": "http://0.0.0.0:8084",
	})
}

// TestKServeMultiModel validates the multi-model runtime, its
// InferenceService and the TrainedModel, and checks what KServe's model
// agent needs: the repository routes on localhost:8080 without a token
// (one listener for inference and management), /mnt/models as the store,
// no model at start, and no storageUri (which makes KServe inject the
// agent).
func TestKServeMultiModel(t *testing.T) {
	runtime, svc := readKServe(t, "../kserve/clusterservingruntime-multimodel.yaml", "../kserve/inferenceservice-multimodel.yaml")
	if !runtime.Spec.MultiModel || svc.Spec.Predictor.Model.StorageURI != nil {
		t.Errorf("multiModel %v, storageUri %v: want a multi-model runtime and no storageUri", runtime.Spec.MultiModel, svc.Spec.Predictor.Model.StorageURI)
	}
	c := runtime.Spec.Containers[0]
	checkEnv(t, c.Env, svc, map[string]string{
		"SERVING_MODEL_STORE":        "/mnt/models",
		"SERVING_LOAD_MODELS":        "NONE",
		"SERVING_INFERENCE_ADDRESS":  "http://0.0.0.0:8080",
		"SERVING_MANAGEMENT_ADDRESS": "http://0.0.0.0:8080",
		"SERVING_MANAGEMENT_TOKEN":   "",
	})

	tm := readManifest(t, "../kserve/trainedmodel.yaml")
	checkObjects(t, tm, crdSchemas(t, kserveCRDs...))
	var model struct {
		Spec struct {
			InferenceService string
			Model            struct{ Framework string }
		}
	}
	if len(tm) != 1 {
		t.Fatalf("%d TrainedModels, want 1", len(tm))
	}
	if err := yaml.Unmarshal(tm[0].raw, &model); err != nil {
		t.Fatal(err)
	}
	if model.Spec.InferenceService != svc.Metadata.Name || model.Spec.Model.Framework != svc.Spec.Predictor.Model.ModelFormat.Name {
		t.Errorf("TrainedModel %+v does not name InferenceService %q and format %q", model.Spec, svc.Metadata.Name, svc.Spec.Predictor.Model.ModelFormat.Name)
	}
}

// readKServe reads and validates a runtime and an InferenceService, and
// checks what both kinds share: protocol v2, the runtime named, the model
// format supported, one container serving on 8080.
func readKServe(t *testing.T, runtimeFile, isvcFile string) (kserveRuntime, kserveISVC) {
	t.Helper()
	rt := readManifest(t, runtimeFile)
	isvc := readManifest(t, isvcFile)
	checkObjects(t, append(rt, isvc...), crdSchemas(t, kserveCRDs...))
	if len(rt) != 1 || len(isvc) != 1 {
		t.Fatalf("%d runtimes and %d InferenceServices, want one each", len(rt), len(isvc))
	}
	var runtime kserveRuntime
	var svc kserveISVC
	if err := yaml.Unmarshal(rt[0].raw, &runtime); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(isvc[0].raw, &svc); err != nil {
		t.Fatal(err)
	}
	// v2 inference is served: KServe may send /v2/models/{name}/infer.
	if !slices.Equal(runtime.Spec.ProtocolVersions, []string{"v2"}) || svc.Spec.Predictor.Model.ProtocolVersion != "v2" {
		t.Errorf("protocolVersions = %v, InferenceService protocolVersion %q, want v2", runtime.Spec.ProtocolVersions, svc.Spec.Predictor.Model.ProtocolVersion)
	}
	m := svc.Spec.Predictor.Model
	if m.Runtime != runtime.Metadata.Name {
		t.Errorf("InferenceService names runtime %q, the runtime is %q", m.Runtime, runtime.Metadata.Name)
	}
	if !slices.ContainsFunc(runtime.Spec.SupportedModelFormats, func(f struct{ Name string }) bool { return f.Name == m.ModelFormat.Name }) {
		t.Errorf("model format %q is not among the runtime's %v", m.ModelFormat.Name, runtime.Spec.SupportedModelFormats)
	}
	if len(runtime.Spec.Containers) != 1 {
		t.Fatalf("%d containers, want 1", len(runtime.Spec.Containers))
	}
	c := runtime.Spec.Containers[0]
	// Knative routes to one declared port, 8080: the entrypoint's default,
	// and the port KServe's model agent calls.
	if len(c.Ports) != 1 || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("ports = %+v, want 8080 alone", c.Ports)
	}
	if c.Name != "kserve-container" || !slices.Equal(c.Args, []string{"serve"}) {
		t.Errorf("container %q args %v, want kserve-container with [serve]", c.Name, c.Args)
	}
	return runtime, svc
}

// checkEnv checks a container's environment as KServe fills it in: it
// fills {{.Name}} and the like from the InferenceService's metadata with
// text/template (ReplacePlaceholders). A wanted value "" means unset.
func checkEnv(t *testing.T, env []struct{ Name, Value string }, svc kserveISVC, want map[string]string) {
	t.Helper()
	envs := map[string]string{}
	for _, e := range env {
		var b bytes.Buffer
		if err := template.Must(template.New(e.Name).Parse(e.Value)).Execute(&b, svc.Metadata); err != nil {
			t.Fatal(err)
		}
		envs[e.Name] = b.String()
	}
	for k, v := range want {
		if envs[k] != v {
			t.Errorf("%s = %q, want %q", k, envs[k], v)
		}
	}
}
