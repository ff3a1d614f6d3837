package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestV2KServeAgent makes the calls KServe's model agent makes
// (pkg/agent/puller.go in kserve/kserve, v0.20.0) to a server set up as
// deploy/kserve/clusterservingruntime-multimodel.yaml sets it up: one
// listener for inference and management, no token, an empty store, no
// model at start. For a TrainedModel the agent puts the model's folder in
// the store and posts .../load with the body {}; when the TrainedModel
// goes away it deletes the folder first, then posts .../unload.
func TestV2KServeAgent(t *testing.T) {
	needE2E(t)
	store := t.TempDir()
	s := StartServer(t, Options{Store: store, Models: "NONE", Shared: true})
	agent := func(op, name string) (int, string) {
		t.Helper()
		resp, err := (&http.Client{Timeout: 2 * time.Minute}).Post(s.Inference+"/v2/repository/models/"+name+"/"+op,
			"application/json", bytes.NewBufferString("{}"))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	// The agent's download: the folder appears in the store.
	src := tensorStore(t, nil, "topics")
	if err := os.Rename(filepath.Join(src, "topics"), filepath.Join(store, "topics")); err != nil {
		t.Fatal(err)
	}
	if code, body := agent("load", "topics"); code != 200 {
		t.Fatalf("load: %d %s", code, body)
	}
	infer := `{"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "FP32", "data": [1, 2]}], "outputs": [{"name": "SUM"}]}`
	code, body := s.Do(http.MethodPost, s.Inference+"/v2/models/topics/infer", "application/json", []byte(infer))
	var got struct {
		Outputs []struct {
			Data []float64 `json:"data"`
		} `json:"outputs"`
	}
	if code != 200 || json.Unmarshal(body, &got) != nil || len(got.Outputs) != 1 || len(got.Outputs[0].Data) != 1 || got.Outputs[0].Data[0] != 3 {
		t.Errorf("infer after load: %d %s", code, body)
	}

	// The agent's removal: the folder goes, then the model.
	if err := os.RemoveAll(filepath.Join(store, "topics")); err != nil {
		t.Fatal(err)
	}
	if code, body := agent("unload", "topics"); code != 200 {
		t.Fatalf("unload after the folder was deleted: %d %s", code, body)
	}
	if code, body := s.Do(http.MethodGet, s.Inference+"/v2/models/topics/ready", "", nil); code != 404 {
		t.Errorf("ready after unload: %d %s", code, body)
	}
}
