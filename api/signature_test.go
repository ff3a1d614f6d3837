package api

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseTensors(t *testing.T) {
	got, err := ParseTensors(` [{"name": "x", "datatype": "FP32", "shape": [-1, 3]}, {"name": "s", "datatype": "BYTES", "shape": []}]`)
	want := []TensorSpec{{Name: "x", Datatype: "FP32", Shape: []int64{-1, 3}}, {Name: "s", Datatype: "BYTES", Shape: []int64{}}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseTensors = %+v, %v", got, err)
	}
	if got, err := ParseTensors("  "); got != nil || err != nil {
		t.Errorf("an empty text = %+v, %v", got, err)
	}
	for text, msg := range map[string]string{
		`{"name": "x"}`:                        "cannot unmarshal object",
		`[{"datatype": "FP32", "shape": [1]}]`: "tensor 0 has no name",
		`[{"name": "x", "datatype": "FP32", "shape": [1]}, {"name": "x", "datatype": "FP32", "shape": [1]}]`: `tensor "x" is listed twice`,
		`[{"name": "x", "datatype": "float", "shape": [1]}]`:                                                 `tensor "x" has datatype "float", not one of BOOL`,
		`[{"name": "x", "datatype": "FP32"}]`:                                                                `tensor "x" has no shape`,
		`[{"name": "x", "datatype": "FP32", "shape": [-2]}]`:                                                 `tensor "x" has dimension -2 (use -1 for any size)`,
	} {
		if _, err := ParseTensors(text); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseTensors(%s) = %v, want %q", text, err, msg)
		}
	}
}
