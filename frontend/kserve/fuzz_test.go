package kserve

import (
	"errors"
	"testing"

	"github.com/switchyard/switchyard/api"
)

// FuzzInferRequest feeds arbitrary bodies and binary header lengths to
// the inference request's parser and the NDList encoder: each either
// refuses the request as a bad one or yields an NDList that decodes back
// into one array per input, with the input's name and element count.
func FuzzInferRequest(f *testing.F) {
	f.Add(`{"inputs": [{"name": "x", "shape": [1, 2], "datatype": "FP32", "data": [[1, 2]]}]}`, "")
	f.Add(`{"inputs": [{"name": "s", "shape": [2], "datatype": "BYTES", "data": ["a", "\u00e9"]}], "outputs": [{"name": "y"}]}`, "")
	f.Add(`{"inputs": [{"name": "b", "shape": [3], "datatype": "BOOL", "data": [true, false, true]}]}`, "")
	f.Add(`{"inputs": [{"name": "x", "shape": [1], "datatype": "INT64", "parameters": {"binary_data_size": 8}}]}12345678`, "80")
	f.Add(`{"inputs": [{"name": "h", "shape": [2], "datatype": "FP16", "data": [1e9, -0.5]}]}`, "")
	f.Add(`{"inputs": []}`, "100")
	f.Fuzz(func(t *testing.T, body, hlen string) {
		r, bin, err := parseRequest([]byte(body), hlen)
		if err != nil {
			badOnly(t, err)
			return
		}
		if _, err := r.binaryOutput(); err != nil {
			badOnly(t, err)
		}
		nd, err := encodeInputs(r, bin, nil)
		if err != nil {
			badOnly(t, err)
			return
		}
		arrays, err := decodeNDList(nd)
		if err != nil || len(arrays) != len(r.Inputs) {
			t.Fatalf("the NDList of %q does not decode into %d arrays: %v", body, len(r.Inputs), err)
		}
		for i, a := range arrays {
			want, _ := elements(r.Inputs[i].Shape)
			if a.name != r.Inputs[i].Name || a.count != want {
				t.Errorf("array %d: %q with %d elements, want %q with %d", i, a.name, a.count, r.Inputs[i].Name, want)
			}
		}
	})
}

// badOnly fails unless err is a bad request, the only error a body may
// cause.
func badOnly(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, api.ErrBadRequest) {
		t.Fatalf("error %v is not a bad request", err)
	}
}
