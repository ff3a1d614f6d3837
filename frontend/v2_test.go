package frontend

import (
	"encoding/binary"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
)

// The Open Inference Protocol's routes (frontend/kserve) over HTTP, with
// the fake registry: its echo answers a v2 request's NDList with itself,
// so that the inputs come back as outputs.

var v2Signature = api.Signature{Platform: "Python",
	Inputs:  []api.TensorSpec{{Name: "x", Datatype: "FP32", Shape: []int64{-1, 2}}},
	Outputs: []api.TensorSpec{{Name: "x", Datatype: "FP32", Shape: []int64{-1, 2}}},
}

func TestV2ServerMetadata(t *testing.T) {
	ts := startServer(t, newFake(), func(c *Config) { c.Version = "1.2.3" })
	resp, body := ts.do(t, "GET", ts.inf+"/v2", "", nil)
	var got struct {
		Name       string   `json:"name"`
		Version    string   `json:"version"`
		Extensions []string `json:"extensions"`
	}
	decode(t, resp, body, &got)
	if got.Name != "switchyard" || got.Version != "1.2.3" || strings.Join(got.Extensions, ",") != "binary_tensor_data,model_repository" {
		t.Errorf("GET /v2 = %s", body)
	}
}

func TestV2ModelMetadata(t *testing.T) {
	f := newFake("m", "plain")
	f.sigs = map[string]api.Signature{"m": v2Signature, "plain": {Platform: "Python"}}
	ts := startServer(t, f)
	for _, path := range []string{"/v2/models/m", "/v2/models/m/versions/1"} {
		resp, body := ts.do(t, "GET", ts.inf+path, "", nil)
		want := `{"name":"m","versions":["1"],"platform":"Python","inputs":[{"name":"x","datatype":"FP32","shape":[-1,2]}],` +
			`"outputs":[{"name":"x","datatype":"FP32","shape":[-1,2]}]}`
		if resp.StatusCode != 200 || spaceless(t, body) != want {
			t.Errorf("GET %s = %d %s", path, resp.StatusCode, body)
		}
	}
	_, body := ts.do(t, "GET", ts.inf+"/v2/models/plain", "", nil)
	if got := spaceless(t, body); got != `{"name":"plain","versions":["1"],"platform":"Python","inputs":[],"outputs":[]}` {
		t.Errorf("a model that declares nothing: %s", got)
	}
	resp, body := ts.do(t, "GET", ts.inf+"/v2/models/zz", "", nil)
	mustV2Error(t, resp, body, 404)
	resp, body = ts.do(t, "GET", ts.inf+"/v2/models/m/versions/2", "", nil)
	if msg := mustV2Error(t, resp, body, 404); msg != `Model "m" has no version "2": its one version is 1.` {
		t.Errorf("message %q", msg)
	}
}

func TestV2ModelReady(t *testing.T) {
	f := newFake("ok", "loading", "failed", "lazy")
	f.health["loading"] = api.ModelHealth{Status: api.StatusPending}
	f.health["failed"] = api.ModelHealth{Status: api.StatusFailed, Error: "CUDA error"}
	f.health["lazy"] = api.ModelHealth{Status: api.StatusPending, OnDemand: true}
	ts := startServer(t, f)
	for name, code := range map[string]int{"ok": 200, "lazy": 200, "loading": 503, "failed": 503, "zz": 404} {
		for _, path := range []string{"/v2/models/" + name + "/ready", "/v2/models/" + name + "/versions/1/ready"} {
			resp, body := ts.do(t, "GET", ts.inf+path, "", nil)
			if code != 200 {
				mustV2Error(t, resp, body, code)
				continue
			}
			if resp.StatusCode != 200 || spaceless(t, body) != `{"name":"`+name+`","ready":true}` {
				t.Errorf("GET %s = %d %s", path, resp.StatusCode, body)
			}
		}
	}
	resp, body := ts.do(t, "GET", ts.inf+"/v2/models/failed/ready", "", nil)
	if msg := mustV2Error(t, resp, body, 503); msg != "Model failed is not ready: FAILED: CUDA error" {
		t.Errorf("message %q", msg)
	}
}

func TestV2InferJSON(t *testing.T) {
	f := newFake("m")
	f.sigs = map[string]api.Signature{"m": v2Signature}
	var worker message.Input
	f.respond = func(model string, j *batching.Job) {
		worker = j.Input
		echo(model, j)
	}
	ts := startServer(t, f)
	body := `{"id": "r1", "inputs": [{"name": "x", "shape": [2, 2], "datatype": "FP32", "data": [[1, 2], [3, 4.5]]}],
		"parameters": {"top_k": 3}}`
	for _, path := range []string{"/v2/models/m/infer", "/v2/models/m/versions/1/infer"} {
		resp, got := ts.do(t, "POST", ts.inf+path, body, map[string]string{"Content-Type": "application/json"})
		want := `{"model_name":"m","model_version":"1","id":"r1","outputs":[{"name":"x","datatype":"FP32","shape":[2,2],"data":[1,2,3,4.5]}]}`
		if resp.StatusCode != 200 || string(got) != want || resp.Header.Get("Content-Type") != contentTypeJSON {
			t.Errorf("POST %s = %d %s %s", path, resp.StatusCode, resp.Header.Get("Content-Type"), got)
		}
		if resp.Header.Get("Inference-Header-Content-Length") != "" {
			t.Error("a JSON answer has Inference-Header-Content-Length")
		}
	}
	if ct := propOf(worker.Props, "content-type"); ct != "tensor/ndlist" {
		t.Errorf("the worker's content-type = %q", ct)
	}
	if len(worker.Content) != 2 || worker.Content[1].Key != "parameters" || spaceless(t, worker.Content[1].Value) != `{"top_k":3}` {
		t.Errorf("the worker's content = %q", worker.Content)
	}
	if !strings.HasPrefix(string(worker.Content[0].Value), "\x00\x00\x00\x01\x00\x04NDAR") {
		t.Errorf("the worker's data is no NDList: %q", worker.Content[0].Value)
	}
}

func TestV2InferBinary(t *testing.T) {
	f := newFake("m")
	ts := startServer(t, f)
	head := `{"inputs": [{"name": "a", "shape": [2], "datatype": "FP32", "parameters": {"binary_data_size": 8}},
		{"name": "b", "shape": [1], "datatype": "BYTES", "data": ["hi"]}], "parameters": {"binary_data_output": true}}`
	data := binary.LittleEndian.AppendUint32(nil, math.Float32bits(1.5))
	data = binary.LittleEndian.AppendUint32(data, math.Float32bits(-2))
	resp, got := ts.do(t, "POST", ts.inf+"/v2/models/m/infer", head+string(data), map[string]string{
		"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": strconv.Itoa(len(head))})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d %s", resp.StatusCode, got)
	}
	n, err := strconv.Atoi(resp.Header.Get("Inference-Header-Content-Length"))
	if err != nil || n > len(got) || resp.Header.Get("Content-Type") != "application/octet-stream" {
		t.Fatalf("headers %v", resp.Header)
	}
	want := `{"model_name":"m","model_version":"1","outputs":[` +
		`{"name":"a","datatype":"FP32","shape":[2],"parameters":{"binary_data_size":8}},` +
		`{"name":"b","datatype":"BYTES","shape":[1],"parameters":{"binary_data_size":6}}]}`
	if string(got[:n]) != want || string(got[n:]) != string(data)+"\x02\x00\x00\x00hi" {
		t.Errorf("answer %q", got)
	}
}

func TestV2InferErrors(t *testing.T) {
	f := newFake("m", "json", "failing")
	f.sigs = map[string]api.Signature{"m": v2Signature}
	f.respond = func(model string, j *batching.Job) {
		switch model {
		case "json":
			j.Finish(&message.Response{Code: 200, Body: []byte(`{"not": "tensors"}`)})
		case "failing":
			j.Finish(&message.Response{Code: 424, Body: []byte(`{"code": 424, "message": "prediction failure", "error": "boom"}`)})
		default:
			echo(model, j)
		}
	}
	ts := startServer(t, f)
	x := func(fields string) string { return `{"inputs": [{"name": "x", ` + fields + `}]}` }
	cases := []struct {
		name, model, body, hlen string
		code                    int
		msg                     string
	}{
		{"wrong datatype", "m", x(`"shape": [1, 2], "datatype": "INT32", "data": [1, 2]`), "", 400,
			`Input "x" has datatype INT32; the model takes FP32.`},
		{"unknown datatype", "json", x(`"shape": [1], "datatype": "FP8", "data": [1]`), "", 400,
			`Input "x" has datatype "FP8", which is not one of BOOL, UINT8, UINT16, UINT32, UINT64, INT8, INT16, INT32, INT64, FP16, FP32, FP64, BYTES.`},
		{"shape and data", "m", x(`"shape": [2, 2], "datatype": "FP32", "data": [1, 2]`), "", 400,
			`Input "x" has shape [2,2], which holds 4 elements, but its data has 2.`},
		{"unknown input", "m", `{"inputs": [{"name": "y", "shape": [1], "datatype": "FP32", "data": [1]}]}`, "", 400,
			`Unknown input "y": the model takes "x".`},
		{"header beyond body", "m", x(`"shape": [1, 2], "datatype": "FP32", "data": [1, 2]`), "9999", 400,
			"Header Inference-Header-Content-Length is 9999, beyond the body's 80 bytes."},
		{"not JSON", "m", "[1]", "", 400, "The body is not an inference request: the request must be a JSON object, not a JSON array."},
		{"unknown model", "zz", x(`"shape": [1], "datatype": "FP32", "data": [1]`), "", 404, "model not found: zz"},
		{"answer is no NDList", "json", x(`"shape": [1], "datatype": "FP32", "data": [1]`), "", 502,
			"Model json answered no tensors (not an NDList: no NDAR header): a handler answers an inference request of the Open Inference Protocol with Output.add_as_numpy()."},
		{"the handler failed", "failing", x(`"shape": [1], "datatype": "FP32", "data": [1]`), "", 424, "boom"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{"Content-Type": "application/json"}
			if c.hlen != "" {
				hdr["Inference-Header-Content-Length"] = c.hlen
			}
			resp, body := ts.do(t, "POST", ts.inf+"/v2/models/"+c.model+"/infer", c.body, hdr)
			if msg := mustV2Error(t, resp, body, c.code); msg != c.msg {
				t.Errorf("message %q, want %q", msg, c.msg)
			}
		})
	}
}

func TestV2RepositoryIndex(t *testing.T) {
	f := newFake("ok", "loading", "failed", "outside")
	f.store = []string{"failed", "loading", "ok", "unloaded"}
	f.health["loading"] = api.ModelHealth{Status: api.StatusPending}
	f.health["failed"] = api.ModelHealth{Status: api.StatusFailed, Error: "CUDA error"}
	ts := startServer(t, f)
	for body, want := range map[string]string{
		"": `[{"name":"failed","version":"1","state":"UNAVAILABLE","reason":"FAILED: CUDA error"},` +
			`{"name":"loading","version":"1","state":"LOADING","reason":""},` +
			`{"name":"ok","version":"1","state":"READY","reason":""},` +
			`{"name":"outside","version":"1","state":"READY","reason":""},` +
			`{"name":"unloaded","version":"1","state":"UNAVAILABLE","reason":"unloaded"}]`,
		`{"ready": true}`: `[{"name":"ok","version":"1","state":"READY","reason":""},{"name":"outside","version":"1","state":"READY","reason":""}]`,
	} {
		resp, got := ts.do(t, "POST", ts.mgmt+"/v2/repository/index", body, nil)
		if resp.StatusCode != 200 || spaceless(t, got) != want {
			t.Errorf("index %q = %d %s", body, resp.StatusCode, got)
		}
	}
	resp, got := ts.do(t, "POST", ts.mgmt+"/v2/repository/index", `{"ready": 1}`, nil)
	mustV2Error(t, resp, got, 400)
	f.set(func(f *fakeModels) { f.storeErr = errors.New("worker: read model store: permission denied") })
	resp, got = ts.do(t, "POST", ts.mgmt+"/v2/repository/index", "", nil)
	if msg := mustV2Error(t, resp, got, 500); msg != "read model store: permission denied" {
		t.Errorf("message %q", msg)
	}
}

func TestV2RepositoryLoad(t *testing.T) {
	f := newFake("ok", "failed")
	f.store = []string{"failed", "new", "ok"}
	f.health["failed"] = api.ModelHealth{Status: api.StatusFailed}
	ts := startServer(t, f)
	load := func(name, body string) (int, []byte) {
		resp, got := ts.do(t, "POST", ts.mgmt+"/v2/repository/models/"+name+"/load", body, nil)
		return resp.StatusCode, got
	}
	if code, body := load("new", ""); code != 200 || len(body) != 0 {
		t.Fatalf("load new = %d %s", code, body)
	}
	if r := f.lastRegister(); r.URL != "new" || r.ModelName != "new" || !r.Synchronous {
		t.Errorf("register %+v", r)
	}
	if code, _ := load("ok", "{}"); code != 200 || len(f.registers) != 1 {
		t.Errorf("load of a loaded model = %d, %d registrations", code, len(f.registers))
	}
	if code, _ := load("failed", `{"parameters": {"unload_dependents": false}}`); code != 200 || len(f.registers) != 2 {
		t.Errorf("load of a failed model = %d, %d registrations", code, len(f.registers))
	}
	if code, body := load("elsewhere", `{"parameters": {"url": "/srv/models/x"}}`); code != 200 || f.lastRegister().URL != "/srv/models/x" {
		t.Errorf("load with url = %d %s %+v", code, body, f.lastRegister())
	}
	for body, msg := range map[string]string{
		`{"parameters": {"config": "{}"}}`:           `Load parameter "config" is not supported: switchyard loads model folders as they are.`,
		`{"parameters": {"file:1/model.onnx": "x"}}`: `Load parameter "file:1/model.onnx" is not supported: switchyard loads model folders as they are.`,
		`{"parameters": {"url": 5}}`:                 "Load parameter url must be a folder's path or file:// URL.",
		`[]`:                                         "The body must be a JSON object.",
	} {
		resp, got := ts.do(t, "POST", ts.mgmt+"/v2/repository/models/other/load", body, nil)
		if m := mustV2Error(t, resp, got, 400); m != msg {
			t.Errorf("load %s: %q, want %q", body, m, msg)
		}
	}
	f.set(func(f *fakeModels) { f.opErr = api.ErrModelURL })
	resp, got := ts.do(t, "POST", ts.mgmt+"/v2/repository/models/absent/load", "", nil)
	mustV2Error(t, resp, got, 404)
	resp, got = ts.do(t, "POST", ts.mgmt+"/v2/repository/models/a%21/load", "", nil)
	mustV2Error(t, resp, got, 400)
}

func TestV2RepositoryUnload(t *testing.T) {
	f := newFake("ok")
	f.store = []string{"ok", "idle"}
	ts := startServer(t, f)
	for name, code := range map[string]int{"ok": 200, "idle": 200, "zz": 404} {
		resp, body := ts.do(t, "POST", ts.mgmt+"/v2/repository/models/"+name+"/unload", `{"parameters": {"unload_dependents": false}}`, nil)
		if code != 200 {
			mustV2Error(t, resp, body, code)
			continue
		}
		if resp.StatusCode != 200 {
			t.Errorf("unload %s = %d %s", name, resp.StatusCode, body)
		}
	}
	if _, err := f.Describe("ok"); !errors.Is(err, api.ErrModelNotFound) {
		t.Error("unload left the model registered")
	}
}

func TestV2RepositoryToken(t *testing.T) {
	f := newFake()
	ts := startServer(t, f, func(c *Config) { c.ManagementToken = "s3cret" })
	resp, body := ts.do(t, "POST", ts.mgmt+"/v2/repository/index", "", nil)
	mustV2Error(t, resp, body, 401)
	resp, body = ts.do(t, "POST", ts.mgmt+"/v2/repository/index", "", map[string]string{"Authorization": "Bearer s3cret"})
	if resp.StatusCode != 200 || spaceless(t, body) != "[]" {
		t.Errorf("index with the token = %d %s", resp.StatusCode, body)
	}
}

// spaceless returns body without the spaces between its tokens.
func spaceless(t *testing.T, body []byte) string {
	t.Helper()
	b, err := compactJSON(body)
	if err != nil {
		t.Fatalf("%q is not JSON: %v", body, err)
	}
	return string(b)
}
