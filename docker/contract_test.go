package docker

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/internal/testutil"
)

// TestImageServesSingleModel runs the entrypoint as "docker run IMAGE
// serve" does on a single-model endpoint: the model folder mounted at
// /opt/ml/model, nothing configured. /ping, /invocations and the
// management routes answer on the one port; SIGTERM to the container's
// process stops the server and its workers, with exit status 0.
func TestImageServesSingleModel(t *testing.T) {
	needServer(t)
	s := newSandbox(t)
	testutil.CopyDir(t, exampleModel, s.expand("$ROOT/model"))
	l := startImage(t, s)
	l.waitFor("model Healthy in /ping", func() bool { return l.healthy("model") })

	body := l.mustCall(http.StatusOK, "POST", "/invocations", germanText, nil)
	if got := topLabel(t, body); got != "deu" {
		t.Errorf("/invocations: top label %q, want deu", got)
	}
	if got := l.modelNames(); !slices.Equal(got, []string{"model"}) {
		t.Errorf("GET /models on the inference port lists %q, want [model]", got)
	}
	pids := l.workerPIDs("model")
	if len(pids) == 0 {
		t.Fatal("the model has no worker")
	}
	if err := l.stop(); err != nil {
		t.Errorf("exit after SIGTERM: %v, want status 0\n%s", err, l.out)
	}
	for _, pid := range pids {
		if !testutil.ProcessGone(pid) {
			t.Errorf("worker %d still runs after the server stopped", pid)
		}
	}
}

// TestImageServesMultiModelEndpoint runs the entrypoint as a SageMaker
// multi-model endpoint does (SAGEMAKER_MULTI_MODEL=true) and drives the
// container contract on the one port: load with POST /models from
// /opt/ml/models/<name>/model, invoke both ways, list, describe, unload.
func TestImageServesMultiModelEndpoint(t *testing.T) {
	needServer(t)
	s := newSandbox(t)
	const name = "0d4a9c1e8f27b3c6" // SageMaker's model_name is an opaque id
	testutil.CopyDir(t, exampleModel, s.expand("$ROOT/models/"+name+"/model"))
	l := startImage(t, s, "SAGEMAKER_MULTI_MODEL=true")

	if body := l.mustCall(http.StatusOK, "GET", "/ping", "", nil); strings.TrimSpace(string(body)) != "{}" {
		t.Errorf("/ping before any load: %s, want {} (nothing loaded at start)", body)
	}
	load := `{"model_name": "` + name + `", "url": "` + s.expand("$ROOT/models/"+name+"/model") + `"}`
	l.mustCall(http.StatusOK, "POST", "/models", load, nil)
	l.mustCall(http.StatusConflict, "POST", "/models", load, nil)
	if got := l.modelNames(); !slices.Equal(got, []string{name}) {
		t.Errorf("GET /models lists %q, want [%s]", got, name)
	}
	l.waitFor("the loaded model Healthy in /ping", func() bool { return l.healthy(name) })

	target := map[string]string{"X-Amzn-SageMaker-Target-Model": "langid.tar.gz"}
	body := l.mustCall(http.StatusOK, "POST", "/models/"+name+"/invoke", germanText, target)
	if got := topLabel(t, body); got != "deu" {
		t.Errorf("invoke: top label %q, want deu", got)
	}
	target["X-Amzn-SageMaker-Target-Model"] = name
	body = l.mustCall(http.StatusOK, "POST", "/invocations", germanText, target)
	if got := topLabel(t, body); got != "deu" {
		t.Errorf("/invocations with the target header: top label %q, want deu", got)
	}
	if pids := l.workerPIDs(name); len(pids) == 0 {
		t.Error("the loaded model has no worker")
	}
	l.mustCall(http.StatusOK, "DELETE", "/models/"+name, "", nil)
	if got := l.modelNames(); len(got) != 0 {
		t.Errorf("GET /models after unload lists %q, want none", got)
	}
	if err := l.stop(); err != nil {
		t.Errorf("exit after SIGTERM: %v, want status 0\n%s", err, l.out)
	}
	if logs := l.out.String(); !slices.ContainsFunc(strings.Split(logs, "\n"), func(line string) bool {
		return strings.Contains(line, "switchyard-entrypoint: multi-model endpoint")
	}) {
		t.Errorf("the entrypoint did not say it chose the multi-model layout:\n%s", logs)
	}
}
