package frontend

import (
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
)

// v2BenchBody is the request of the Open Inference Protocol's benchmarks
// (and of bench/bench_v2.sh): one FP32 tensor of 16 elements.
const v2BenchBody = `{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"FP32",` +
	`"data":[0.5,1.5,2.5,3.5,4.5,5.5,6.5,7.5,8.5,9.5,10.5,11.5,12.5,13.5,14.5,15.5]}]}`

// BenchmarkV2Infer compares the handler path of one v2 JSON inference
// (routing, the JSON decoded into an NDList, the answer's NDList encoded
// as JSON) with /invocations carrying the same body to the same model,
// whose body goes through as it is. The registry answers at once with the
// job's own content (for v2, the request's NDList, whose tensor comes back
// as an output), so the difference between the two is what the v2 parsing
// and encoding cost per request: compare their ns/op, B/op and allocs/op.
func BenchmarkV2Infer(b *testing.B) {
	for _, c := range []struct{ name, uri string }{
		{"invocations", "/invocations"},
		{"v2-json", "/v2/models/m/infer"},
	} {
		b.Run(c.name, func(b *testing.B) {
			f := instant(false)
			f.sigs = map[string]api.Signature{"m": {Platform: "Python",
				Inputs:  []api.TensorSpec{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{-1, -1}}},
				Outputs: []api.TensorSpec{{Name: "INPUT0", Datatype: "FP32", Shape: []int64{-1, -1}}}}}
			s, err := New(Config{InferenceAddr: "x", ManagementAddr: "x"}, f)
			if err != nil {
				b.Fatal(err)
			}
			req := benchRequest()
			req.SetRequestURI(c.uri)
			req.SetBodyString(v2BenchBody)
			handleAll(b, s, req)
		})
	}
}

// TestV2BenchBody checks that the benchmark's request is answered with its
// tensor, so that BenchmarkV2Infer measures a successful inference.
func TestV2BenchBody(t *testing.T) {
	f := newFake("m")
	ts := startServer(t, f)
	resp, body := ts.do(t, "POST", ts.inf+"/v2/models/m/infer", v2BenchBody, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"name":"INPUT0","datatype":"FP32","shape":[1,16],"data":[0.5,1.5,`) {
		t.Errorf("%d %s", resp.StatusCode, body)
	}
}
