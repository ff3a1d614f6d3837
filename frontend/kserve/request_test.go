package kserve

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
)

// declared is a model's declared inputs in the tests.
var declared = []api.TensorSpec{
	{Name: "x", Datatype: "FP32", Shape: []int64{-1, 2}},
	{Name: "s", Datatype: "BYTES", Shape: []int64{-1}},
}

// encode parses a request and encodes its inputs as the worker gets them.
func encode(body, hlen string, specs []api.TensorSpec) ([]ndArray, error) {
	r, bin, err := parseRequest([]byte(body), hlen)
	if err != nil {
		return nil, err
	}
	nd, err := encodeInputs(r, bin, specs)
	if err != nil {
		return nil, err
	}
	return decodeNDList(nd)
}

func le32(vs ...uint32) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint32(b, v)
	}
	return b
}

func TestEncodeInputs(t *testing.T) {
	body := `{"id": "7", "inputs": [{"name": "x", "shape": [1, 2], "datatype": "FP32", "data": [[1, 2]]},
		{"name": "s", "shape": [1], "datatype": "BYTES", "data": ["hé"]}], "parameters": {"k": 1}}`
	arrays, err := encode(body, "", declared)
	if err != nil {
		t.Fatal(err)
	}
	if len(arrays) != 2 {
		t.Fatalf("%d arrays", len(arrays))
	}
	x, s := arrays[0], arrays[1]
	if x.name != "x" || x.t.name != "FP32" || shapeText(x.shape) != "[1,2]" || x.count != 2 ||
		string(x.data) != string(le32(math.Float32bits(1), math.Float32bits(2))) {
		t.Errorf("x = %+v", x)
	}
	if s.name != "s" || s.t.nd != "STRING" || string(s.data) != string(le32(3))+"hé" {
		t.Errorf("s = %+v", s)
	}
}

func TestEncodeBinaryInputs(t *testing.T) {
	head := `{"inputs": [{"name": "x", "shape": [2, 2], "datatype": "FP32", "parameters": {"binary_data_size": 16}},
		{"name": "s", "shape": [2], "datatype": "BYTES", "parameters": {"binary_data_size": 11}}]}`
	x := le32(math.Float32bits(1), math.Float32bits(2), math.Float32bits(3), math.Float32bits(4))
	s := append(append(le32(1), 'a'), append(le32(2), "bc"...)...)
	body := head + string(x) + string(s)
	arrays, err := encode(body, strconv.Itoa(len(head)), declared)
	if err != nil {
		t.Fatal(err)
	}
	if string(arrays[0].data) != string(x) || string(arrays[1].data) != string(s) || arrays[1].count != 2 {
		t.Errorf("arrays = %+v", arrays)
	}
	// The JSON and binary data mix: JSON inputs take no binary bytes.
	head = `{"inputs": [{"name": "a", "shape": [1], "datatype": "INT8", "data": [5]},
		{"name": "b", "shape": [3], "datatype": "UINT8", "parameters": {"binary_data_size": 3}}]}`
	arrays, err = encode(head+"\x01\x02\x03", strconv.Itoa(len(head)), nil)
	if err != nil || string(arrays[0].data) != "\x05" || string(arrays[1].data) != "\x01\x02\x03" {
		t.Errorf("mixed = %+v %v", arrays, err)
	}
}

func TestBadRequests(t *testing.T) {
	in := func(fields string) string { return `{"inputs": [{` + fields + `}]}` }
	cases := []struct {
		name, body, hlen string
		specs            []api.TensorSpec
		want             string
	}{
		{"not JSON", "{", "", nil, "The body is not an inference request: unexpected end of JSON input."},
		{"no inputs", `{"inputs": []}`, "", nil, "The request has no inputs."},
		{"inputs not a list", `{"inputs": {}}`, "", nil, "field inputs must not be a JSON object"},
		{"no name", in(`"shape": [1], "datatype": "FP32", "data": [1]`), "", nil, "An input has no name."},
		{"wrong datatype", in(`"name": "x", "shape": [1], "datatype": "FP33", "data": [1]`), "", nil,
			`Input "x" has datatype "FP33", which is not one of BOOL, UINT8`},
		{"BF16", in(`"name": "x", "shape": [1], "datatype": "BF16", "data": [1]`), "", nil, `datatype "BF16", which is not one of`},
		{"declared datatype", in(`"name": "x", "shape": [1, 2], "datatype": "FP64", "data": [1, 2]`), "", declared,
			`Input "x" has datatype FP64; the model takes FP32.`},
		{"declared shape", in(`"name": "x", "shape": [1, 3], "datatype": "FP32", "data": [1, 2, 3]`), "", declared,
			`Input "x" has shape [1,3]; the model takes [-1,2].`},
		{"unknown input", in(`"name": "y", "shape": [1], "datatype": "FP32", "data": [1]`), "", declared,
			`Unknown input "y": the model takes "x", "s".`},
		{"missing input", in(`"name": "x", "shape": [1, 2], "datatype": "FP32", "data": [1, 2]`), "", declared,
			`Missing input "s": the model takes "x", "s".`},
		{"twice", `{"inputs": [{"name": "a", "shape": [1], "datatype": "INT8", "data": [1]},
			{"name": "a", "shape": [1], "datatype": "INT8", "data": [1]}]}`, "", nil, `Input "a" is given twice.`},
		{"shape and data", in(`"name": "x", "shape": [2, 2], "datatype": "FP32", "data": [1, 2, 3]`), "", nil,
			`Input "x" has shape [2,2], which holds 4 elements, but its data has 3.`},
		{"negative shape", in(`"name": "x", "shape": [-1], "datatype": "FP32", "data": []`), "", nil, `Input "x" has shape [-1]: dimensions`},
		{"no shape", in(`"name": "x", "datatype": "FP32", "data": [1]`), "", nil, `Input "x" has no shape.`},
		{"no data", in(`"name": "x", "shape": [1], "datatype": "FP32"`), "", nil, `Input "x" has no data.`},
		{"bad element", in(`"name": "x", "shape": [1], "datatype": "INT32", "data": ["a"]`), "", nil,
			`Input "x": element 0, "a", is a string; INT32 data are an integer that fits INT32`},
		{"header beyond body", in(`"name": "x", "shape": [1], "datatype": "FP32", "data": [1]`), "4096", nil,
			"Header Inference-Header-Content-Length is 4096, beyond the body's"},
		{"header not a number", "{}", "x", nil, `Header Inference-Header-Content-Length must be a byte count, got "x".`},
		{"raw binary", "abcd", "0", nil, "Raw binary requests"},
		{"binary beyond body", in(`"name": "x", "shape": [1], "datatype": "FP32", "parameters": {"binary_data_size": 4}`), "", nil,
			`Input "x" has binary_data_size 4, beyond the 0 bytes of binary data left in the body.`},
		{"binary size", in(`"name": "x", "shape": [2], "datatype": "FP32", "parameters": {"binary_data_size": 4}`) + "\x00\x00\x00\x00",
			"", nil, "(set below)"},
		{"shared memory", in(`"name": "x", "shape": [1], "datatype": "FP32", "parameters": {"shared_memory_region": "r"}`), "", nil,
			"the shared-memory extensions are not supported"},
		{"both data", in(`"name": "x", "shape": [1], "datatype": "FP32", "data": [1], "parameters": {"binary_data_size": 4}`), "", nil,
			`Input "x" has both data and binary_data_size.`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body, hlen, want := c.body, c.hlen, c.want
			if want == "(set below)" { // the header's length is the JSON's
				hlen = strconv.Itoa(len(body) - 4)
				want = `Input "x" has shape [2], which holds 2 elements, but its 4 bytes of binary FP32 data do not.`
			}
			_, err := encode(body, hlen, c.specs)
			if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, api.ErrBadRequest) {
				t.Errorf("error %v, want a 400 with %q", err, want)
			}
		})
	}
}

func TestLeftoverBinary(t *testing.T) {
	head := `{"inputs": [{"name": "x", "shape": [1], "datatype": "UINT8", "parameters": {"binary_data_size": 1}}]}`
	_, err := encode(head+"ab", strconv.Itoa(len(head)), nil)
	if err == nil || !strings.Contains(err.Error(), "1 bytes of binary data that no input's binary_data_size claims") {
		t.Errorf("error %v", err)
	}
	head = `{"inputs": [{"name": "s", "shape": [1], "datatype": "BYTES", "parameters": {"binary_data_size": 6}}]}`
	_, err = encode(head+string(le32(9))+"ab", strconv.Itoa(len(head)), nil)
	if err == nil || !strings.Contains(err.Error(), "6 bytes of binary BYTES data do not") {
		t.Errorf("a BYTES length beyond its data: error %v", err)
	}
}

func TestCheckOutputs(t *testing.T) {
	outs := []api.TensorSpec{{Name: "y", Datatype: "FP32", Shape: []int64{-1}}}
	cases := []struct {
		body, want string
		specs      []api.TensorSpec
	}{
		{`[{"name": "y"}]`, "", outs},
		{`[{"name": "z"}]`, "", nil},
		{`[{"name": "z"}]`, `Unknown output "z": the model answers "y".`, outs},
		{`[{"name": "y"}, {"name": "y"}]`, `Output "y" is requested twice.`, outs},
		{`[{}]`, "A requested output has no name.", nil},
	}
	for _, c := range cases {
		r, _, err := parseRequest([]byte(`{"inputs": [{"name": "x", "shape": [], "datatype": "INT8", "data": [1]}], "outputs": `+c.body+`}`), "")
		if err != nil {
			t.Fatal(err)
		}
		err = checkOutputs(r.Outputs, c.specs)
		if (c.want == "") != (err == nil) || err != nil && err.Error() != c.want {
			t.Errorf("outputs %s: error %v, want %q", c.body, err, c.want)
		}
	}
}

func TestBinaryOutput(t *testing.T) {
	for body, want := range map[string]bool{
		`{"inputs": [], "parameters": {"binary_data_output": true}}`: true,
		`{"inputs": [], "parameters": {"other": 1}}`:                 false,
		`{"inputs": []}`: false,
	} {
		r := &inferRequest{}
		if err := json.Unmarshal([]byte(body), r); err != nil {
			t.Fatal(err)
		}
		if got, err := r.binaryOutput(); got != want || err != nil {
			t.Errorf("%s: %v %v", body, got, err)
		}
	}
	r := &inferRequest{Parameters: []byte(`{"binary_data_output": "yes"}`)}
	if _, err := r.binaryOutput(); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("a binary_data_output that is no boolean: %v", err)
	}
}
