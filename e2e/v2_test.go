package e2e

import (
	bin "encoding/binary"
	"encoding/json"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// The Open Inference Protocol (KServe v2, Triton's HTTP API) with real
// workers: tritonclient.http as it is published, curl against the spec's
// JSON shapes, dynamic batching, and the 400s of bad inputs.

// tritonTexts are the texts e2e/python/tritonclient_v2.py classifies.
var tritonTexts = []string{"the team won the match", "heavy rain is coming tomorrow", "the soup was delicious"}

// tritonReport is what e2e/python/tritonclient_v2.py prints.
type tritonReport struct {
	Live                  bool               `json:"live"`
	Ready                 bool               `json:"ready"`
	ServerMetadata        serverMeta         `json:"server_metadata"`
	NumericReady          bool               `json:"numeric_ready"`
	NumericReadyV1        bool               `json:"numeric_ready_v1"`
	NumericReadyV2        bool               `json:"numeric_ready_v2"`
	NumericMetadata       modelMeta          `json:"numeric_metadata"`
	NumericJSON           numericResult      `json:"numeric_json"`
	NumericBinary         numericResult      `json:"numeric_binary"`
	NumericDefaultOutputs numericResult      `json:"numeric_default_outputs"`
	TextMetadata          modelMeta          `json:"text_metadata"`
	TextJSON              textResult         `json:"text_json"`
	TextBinary            textResult         `json:"text_binary"`
	BadInputs             map[string]failure `json:"bad_inputs"`
	IndexBefore           []indexEntry       `json:"index_before"`
	SpareReadyBefore      bool               `json:"spare_ready_before"`
	SpareReadyLoaded      bool               `json:"spare_ready_loaded"`
	SpareInfer            numericResult      `json:"spare_infer"`
	IndexLoaded           []indexEntry       `json:"index_loaded"`
	SpareReadyUnloaded    bool               `json:"spare_ready_unloaded"`
	IndexUnloaded         []indexEntry       `json:"index_unloaded"`
	LoadMissing           failure            `json:"load_missing"`
}

type serverMeta struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Extensions []string `json:"extensions"`
}

type modelMeta struct {
	Name     string           `json:"name"`
	Versions []string         `json:"versions"`
	Platform string           `json:"platform"`
	Inputs   []api.TensorSpec `json:"inputs"`
	Outputs  []api.TensorSpec `json:"outputs"`
}

type numericResult struct {
	SUM          []float64         `json:"SUM"`
	SCALED       [][]float64       `json:"SCALED"`
	BATCH        []int             `json:"BATCH"`
	Dtypes       map[string]string `json:"dtypes"`
	ID           string            `json:"id"`
	ModelVersion string            `json:"model_version"`
}

type textResult struct {
	Shape   []int `json:"shape"`
	Results []any `json:"results"`
}

type failure struct {
	Status  *string `json:"status"`
	Message string  `json:"message"`
}

type indexEntry struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	State   string `json:"state"`
	Reason  string `json:"reason"`
}

// stateOf returns a model's state in an index, "" when it is not listed.
func stateOf(index []indexEntry, name string) string {
	for _, e := range index {
		if e.Name == name {
			return e.State
		}
	}
	return ""
}

// TestV2Tritonclient drives a server with tritonclient.http from the
// package index, untouched: health, metadata, readiness, the repository
// index, load and unload, and infer with JSON and binary data on the
// numeric fixture and on a text model of the transformers handler. One
// listener serves both route tables, as a KServe ServingRuntime has it.
func TestV2Tritonclient(t *testing.T) {
	needE2E(t)
	fx := testutil.Fixtures(t, "bert-cls")
	store := tensorStore(t, nil, "tensorsum", "spare")
	hfFolder(t, store, "topics", "engine=Python", "option.model_id="+absFixture(t, fx, "bert-cls"),
		"option.task=text-classification", "required_memory_mb=1024")
	s := StartServer(t, Options{Store: store, Models: "tensorsum,topics", Shared: true})
	s.WaitStatus(hfLoadLimit, api.StatusHealthy, "tensorsum", "topics")

	var r tritonReport
	runPython(t, &r, os.Environ(), "tritonclient_v2.py", strings.TrimPrefix(s.Inference, "http://"), "tensorsum", "topics", "spare")

	if !r.Live || !r.Ready || r.ServerMetadata.Name != "switchyard" ||
		!slices.Contains(r.ServerMetadata.Extensions, "model_repository") || !slices.Contains(r.ServerMetadata.Extensions, "binary_tensor_data") {
		t.Errorf("server: live %v, ready %v, metadata %+v", r.Live, r.Ready, r.ServerMetadata)
	}
	if !r.NumericReady || !r.NumericReadyV1 || r.NumericReadyV2 {
		t.Errorf("is_model_ready: %v, version 1 %v, version 2 %v", r.NumericReady, r.NumericReadyV1, r.NumericReadyV2)
	}
	wantMeta := modelMeta{Name: "tensorsum", Versions: []string{"1"}, Platform: "Python",
		Inputs: []api.TensorSpec{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{-1, -1}}},
		Outputs: []api.TensorSpec{{Name: "SUM", Datatype: "FP32", Shape: []int64{-1}},
			{Name: "SCALED", Datatype: "FP32", Shape: []int64{-1, -1}}, {Name: "BATCH", Datatype: "INT32", Shape: []int64{1}}}}
	if !reflect.DeepEqual(r.NumericMetadata, wantMeta) {
		t.Errorf("numeric metadata %+v\nwant %+v", r.NumericMetadata, wantMeta)
	}
	want := numericResult{SUM: []float64{6, 15}, SCALED: [][]float64{{0.5, 1, 1.5}, {2, 2.5, 3}}, BATCH: []int{1},
		Dtypes: map[string]string{"SUM": "float32", "SCALED": "float32", "BATCH": "int32"}, ModelVersion: "1"}
	for name, got := range map[string]numericResult{"r-False": r.NumericJSON, "r-True": r.NumericBinary, "spare": r.SpareInfer} {
		w := want
		w.ID = name
		if name == "spare" {
			w.ID = "r-True"
		}
		if !reflect.DeepEqual(got, w) {
			t.Errorf("infer %s = %+v\nwant %+v", name, got, w)
		}
	}
	if d := r.NumericDefaultOutputs; !reflect.DeepEqual(d.SUM, []float64{6}) || !reflect.DeepEqual(d.SCALED, [][]float64{{0, 2, 4, 6}}) {
		t.Errorf("infer with every output as binary data = %+v", d)
	}

	bytesIn := []api.TensorSpec{{Name: "text", Datatype: "BYTES", Shape: []int64{-1}}}
	bytesOut := []api.TensorSpec{{Name: "output", Datatype: "BYTES", Shape: []int64{-1}}}
	if m := r.TextMetadata; !reflect.DeepEqual(m.Inputs, bytesIn) || !reflect.DeepEqual(m.Outputs, bytesOut) {
		t.Errorf("text metadata %+v", m)
	}
	body, _ := json.Marshal(map[string]any{"inputs": tritonTexts})
	code, plain := s.Do(http.MethodPost, s.Inference+"/predictions/topics", "application/json", body)
	var wantTexts []any
	if err := json.Unmarshal(plain, &wantTexts); code != 200 || err != nil {
		t.Fatalf("/predictions/topics: %d %s", code, plain)
	}
	for name, got := range map[string]textResult{"JSON": r.TextJSON, "binary": r.TextBinary} {
		if !reflect.DeepEqual(got.Shape, []int{len(tritonTexts)}) || !reflect.DeepEqual(got.Results, wantTexts) {
			t.Errorf("text infer with %s data = %+v, want the results of /predictions %v", name, got, wantTexts)
		}
	}

	for name, msg := range map[string]string{"wrong_datatype": `Input "INPUT0" has datatype FP64; the model takes FP32.`,
		"unknown_input": `Unknown input "INPUT9": the model takes "INPUT0".`} {
		if f := r.BadInputs[name]; f.Status == nil || *f.Status != "400" || f.Message != msg {
			t.Errorf("%s: %+v, want 400 %q", name, f, msg)
		}
	}
	for _, c := range []struct {
		index                    []indexEntry
		tensorsum, topics, spare string
	}{
		{r.IndexBefore, "READY", "READY", "UNAVAILABLE"},
		{r.IndexLoaded, "READY", "READY", "READY"},
		{r.IndexUnloaded, "READY", "READY", "UNAVAILABLE"},
	} {
		if stateOf(c.index, "tensorsum") != c.tensorsum || stateOf(c.index, "topics") != c.topics || stateOf(c.index, "spare") != c.spare {
			t.Errorf("index %+v, want tensorsum %s, topics %s, spare %s", c.index, c.tensorsum, c.topics, c.spare)
		}
	}
	if r.SpareReadyBefore || !r.SpareReadyLoaded || r.SpareReadyUnloaded {
		t.Errorf("spare ready: before load %v, loaded %v, unloaded %v", r.SpareReadyBefore, r.SpareReadyLoaded, r.SpareReadyUnloaded)
	}
	if f := r.LoadMissing; f.Status == nil || *f.Status != "404" || !strings.Contains(f.Message, "no-such-folder") {
		t.Errorf("load of a folder the store lacks: %+v", f)
	}
}

// TestV2Batch sends 8 inference requests at once to a model with
// batch_size 8 (and a long max_batch_delay): the handler sees them as one
// batch, which each answer's BATCH output says.
func TestV2Batch(t *testing.T) {
	needE2E(t)
	store := tensorStore(t, []string{"max_batch_delay=60000"}, "tensorsum")
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(loadLimit, api.StatusHealthy, "tensorsum")
	c := newClient(8)
	calls := make([]func() reply, 8)
	for i := range calls {
		body := `{"inputs": [{"name": "INPUT0", "shape": [1, 2], "datatype": "FP32", "data": [` + strconv.Itoa(i) + `, 1]}]}`
		calls[i] = func() reply {
			return send(c, http.MethodPost, s.Inference+"/v2/models/tensorsum/infer", []byte(body), "Content-Type", "application/json")
		}
	}
	sums := map[float64]bool{}
	for _, r := range collect(t, async(calls...), len(calls)) {
		var got struct {
			Outputs []struct {
				Name string    `json:"name"`
				Data []float64 `json:"data"`
			} `json:"outputs"`
		}
		if r.err != nil || r.code != 200 || json.Unmarshal(r.body, &got) != nil || len(got.Outputs) != 3 {
			t.Fatalf("%d %s %v", r.code, r.body, r.err)
		}
		if b := got.Outputs[2]; b.Name != "BATCH" || len(b.Data) != 1 || b.Data[0] != 8 {
			t.Errorf("BATCH = %+v, want [8]: the 8 requests did not reach the handler as one batch", b)
		}
		sums[got.Outputs[0].Data[0]] = true
	}
	if len(sums) != 8 {
		t.Errorf("the answers' sums %v are not one per request", sums)
	}
}

// TestV2Curl checks every route with curl against the protocol's JSON
// shapes (testdata/oip/schemas.json, from open_inference_rest.yaml), on
// two listeners with a management token, and the 400s of bad inputs.
func TestV2Curl(t *testing.T) {
	needE2E(t)
	schemas := loadSchemas(t)
	store := tensorStore(t, nil, "tensorsum", "spare")
	const token = "v2-token"
	s := StartServer(t, Options{Store: store, Models: "tensorsum", Config: map[string]string{"management_token": token}})
	s.WaitStatus(loadLimit, api.StatusHealthy, "tensorsum")
	inf, mgmt := s.Inference, s.Management
	auth := []string{"-H", "Authorization: Bearer " + token}
	fits := func(what, schema string, r curlReply, code int) {
		t.Helper()
		if r.code != code {
			t.Fatalf("%s: status %d, want %d: %s", what, r.code, code, r.body)
		}
		if err := schemas.check(schema, r.body); err != nil {
			t.Errorf("%s: %s does not fit %s: %v", what, r.body, schema, err)
		}
	}

	fits("GET /v2", "metadata_server_response", curl(t, inf+"/v2"), 200)
	for _, path := range []string{"/v2/health/live", "/v2/health/ready", "/v2/models/tensorsum/ready", "/v2/models/tensorsum/versions/1/ready"} {
		if r := curl(t, inf+path); r.code != 200 {
			t.Errorf("GET %s = %d %s", path, r.code, r.body)
		}
	}
	for _, path := range []string{"/v2/models/tensorsum", "/v2/models/tensorsum/versions/1"} {
		fits("GET "+path, "metadata_model_response", curl(t, inf+path), 200)
	}
	fits("GET an unknown model", "metadata_model_error_response", curl(t, inf+"/v2/models/nope"), 404)
	fits("GET another version", "metadata_model_error_response", curl(t, inf+"/v2/models/tensorsum/versions/2"), 404)

	req := `{"id": "c1", "inputs": [{"name": "INPUT0", "shape": [2, 2], "datatype": "FP32", "data": [[1, 2], [3, 4]]}],
		"outputs": [{"name": "SUM"}, {"name": "SCALED"}]}`
	infer := func(body string, headers ...string) curlReply {
		args := []string{"-X", "POST", "-H", "Content-Type: application/json", "--data-binary", body}
		for _, h := range headers {
			args = append(args, "-H", h)
		}
		return curl(t, append(args, inf+"/v2/models/tensorsum/infer")...)
	}
	r := infer(req)
	fits("infer", "inference_response", r, 200)
	var resp struct {
		ID      string `json:"id"`
		Outputs []struct {
			Name string    `json:"name"`
			Data []float64 `json:"data"`
		} `json:"outputs"`
	}
	if json.Unmarshal(r.body, &resp) != nil || resp.ID != "c1" || len(resp.Outputs) != 2 ||
		!reflect.DeepEqual(resp.Outputs[0].Data, []float64{3, 7}) || !reflect.DeepEqual(resp.Outputs[1].Data, []float64{2, 4, 6, 8}) {
		t.Errorf("infer answered %s", r.body)
	}

	// The binary tensor extension: INPUT0's data after the JSON, SUM back as
	// binary data. A binary output has no "data" (the extension's rule), so
	// the header is checked with each binary output's data taken as [].
	head := `{"inputs": [{"name": "INPUT0", "shape": [1, 3], "datatype": "FP32", "parameters": {"binary_data_size": 12}}],
		"outputs": [{"name": "SUM", "parameters": {"binary_data": true}}, {"name": "BATCH"}]}`
	var data []byte
	for _, f := range []float32{1.5, 2, 3} {
		data = bin.LittleEndian.AppendUint32(data, math.Float32bits(f))
	}
	file := filepath.Join(t.TempDir(), "request")
	if err := os.WriteFile(file, append([]byte(head), data...), 0o644); err != nil {
		t.Fatal(err)
	}
	r = curl(t, "-X", "POST", "-H", "Content-Type: application/octet-stream", "-H",
		"Inference-Header-Content-Length: "+strconv.Itoa(len(head)), "--data-binary", "@"+file, inf+"/v2/models/tensorsum/infer")
	n, err := strconv.Atoi(r.header["inference-header-content-length"])
	if r.code != 200 || err != nil || n > len(r.body) || r.header["content-type"] != "application/octet-stream" {
		t.Fatalf("binary infer: %d %v %q", r.code, r.header, r.body)
	}
	if got := math.Float32frombits(bin.LittleEndian.Uint32(r.body[n:])); len(r.body) != n+4 || got != 6.5 {
		t.Errorf("binary SUM = %v (%d bytes of binary data)", got, len(r.body)-n)
	}
	header := strings.Replace(string(r.body[:n]), `"parameters":{"binary_data_size":4}`, `"parameters":{"binary_data_size":4},"data":[]`, 1)
	if err := schemas.check("inference_response", []byte(header)); err != nil {
		t.Errorf("binary answer's header %s: %v", r.body[:n], err)
	}

	for _, c := range []struct{ name, body, hlen, msg string }{
		{"wrong datatype", `{"inputs": [{"name": "INPUT0", "shape": [1, 1], "datatype": "INT32", "data": [1]}]}`, "",
			`Input "INPUT0" has datatype INT32; the model takes FP32.`},
		{"shape and data", `{"inputs": [{"name": "INPUT0", "shape": [2, 2], "datatype": "FP32", "data": [1, 2, 3]}]}`, "",
			`Input "INPUT0" has shape [2,2], which holds 4 elements, but its data has 3.`},
		{"unknown input", `{"inputs": [{"name": "IN", "shape": [1], "datatype": "FP32", "data": [1]}]}`, "",
			`Unknown input "IN": the model takes "INPUT0".`},
		{"binary header beyond the body", `{"inputs": []}`, "100",
			"Header Inference-Header-Content-Length is 100, beyond the body's 14 bytes."},
		{"unknown output", `{"inputs": [{"name": "INPUT0", "shape": [1, 1], "datatype": "FP32", "data": [1]}], "outputs": [{"name": "MAX"}]}`, "",
			`Unknown output "MAX": the model answers "SUM", "SCALED", "BATCH".`},
	} {
		var hdr []string
		if c.hlen != "" {
			hdr = append(hdr, "Inference-Header-Content-Length: "+c.hlen)
		}
		r := infer(c.body, hdr...)
		fits(c.name, "inference_error_response", r, 400)
		var e struct{ Error string }
		if json.Unmarshal(r.body, &e) != nil || e.Error != c.msg {
			t.Errorf("%s: %s, want %q", c.name, r.body, c.msg)
		}
	}

	// The repository, on the management listener, with the token.
	if r := curl(t, "-X", "POST", mgmt+"/v2/repository/index"); r.code != 401 {
		t.Errorf("index without the token: %d %s", r.code, r.body)
	}
	if r := curl(t, "-X", "POST", inf+"/v2/repository/index"); r.code != 404 {
		t.Errorf("index on the inference listener: %d %s", r.code, r.body)
	}
	index := func() []indexEntry {
		r := curl(t, append(auth, "-X", "POST", "-d", "{}", mgmt+"/v2/repository/index")...)
		fits("index", "repository_index_response", r, 200)
		var out []indexEntry
		_ = json.Unmarshal(r.body, &out)
		return out
	}
	if got := index(); stateOf(got, "tensorsum") != "READY" || stateOf(got, "spare") != "UNAVAILABLE" {
		t.Errorf("index %+v", got)
	}
	if r := curl(t, append(auth, "-X", "POST", mgmt+"/v2/repository/models/spare/load")...); r.code != 200 {
		t.Fatalf("load: %d %s", r.code, r.body)
	}
	if got := index(); stateOf(got, "spare") != "READY" {
		t.Errorf("index after load %+v", got)
	}
	r = curl(t, append(auth, "-X", "POST", "-d", `{"parameters": {"config": "{}"}}`, mgmt+"/v2/repository/models/spare/load")...)
	fits("load with a config", "repository_error_response", r, 400)
	if r := curl(t, append(auth, "-X", "POST", "-d", `{"parameters": {"unload_dependents": false}}`,
		mgmt+"/v2/repository/models/spare/unload")...); r.code != 200 {
		t.Fatalf("unload: %d %s", r.code, r.body)
	}
	if got := index(); stateOf(got, "spare") != "UNAVAILABLE" {
		t.Errorf("index after unload %+v", got)
	}
	fits("unload of a model that is nowhere", "repository_error_response",
		curl(t, append(auth, "-X", "POST", mgmt+"/v2/repository/models/nowhere/unload")...), 404)
}
