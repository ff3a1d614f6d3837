package kserve

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// parseRequestJSON is parseRequest as it was before the scanner: the body
// decoded by encoding/json alone, the reference the scanner must match.
func parseRequestJSON(body []byte, hlen string) (*inferRequest, []byte, error) {
	body, bin, err := splitBody(body, hlen)
	if err != nil {
		return nil, nil, err
	}
	r := &inferRequest{}
	if err := json.Unmarshal(body, r); err != nil {
		return nil, nil, dialect.BadRequestf("The body is not an inference request: %s.", jsonProblem(err))
	}
	if len(r.Inputs) == 0 {
		return nil, nil, dialect.BadRequest("The request has no inputs.")
	}
	return r, bin, nil
}

// outcome is everything decodeInfer makes of a request, as text, with
// and without declared tensors.
func outcome(parse func([]byte, string) (*inferRequest, []byte, error), body, hlen string) string {
	r, bin, err := parse([]byte(body), hlen)
	if err != nil {
		return "parse: " + err.Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "id %q parameters %q\n", r.ID, r.Parameters)
	for _, in := range r.Inputs {
		fmt.Fprintf(&b, "input %q %v (nil %v) %q %s data %q\n", in.Name, in.Shape, in.Shape == nil, in.Datatype, paramsText(in.Parameters), in.Data)
	}
	fmt.Fprintf(&b, "outputs nil %v\n", r.Outputs == nil)
	for _, o := range r.Outputs {
		fmt.Fprintf(&b, "output %q %s\n", o.Name, paramsText(o.Parameters))
	}
	all, err := r.binaryOutput()
	fmt.Fprintf(&b, "binary output %v %v\n", all, err)
	outs := []api.TensorSpec{{Name: "y"}, {Name: "x"}}
	fmt.Fprintf(&b, "outputs %v %v\n", checkOutputs(r.Outputs, nil), checkOutputs(r.Outputs, outs))
	for _, specs := range [][]api.TensorSpec{nil, declared, {{Name: "x", Datatype: "INT64", Shape: []int64{-1}}}} {
		nd, err := encodeInputs(r, bin, specs)
		fmt.Fprintf(&b, "nd %q %v\n", nd, err)
	}
	return b.String()
}

func paramsText(p *tensorParams) string {
	if p == nil {
		return "no parameters"
	}
	s := "parameters"
	if p.BinaryDataSize != nil {
		s += fmt.Sprintf(" size %d", *p.BinaryDataSize)
	}
	if p.BinaryData != nil {
		s += fmt.Sprintf(" binary %v", *p.BinaryData)
	}
	if p.SharedMemoryRegion != nil {
		s += fmt.Sprintf(" region %q", *p.SharedMemoryRegion)
	}
	return s
}

// scanBodies are requests the scanner reads itself, and some it leaves
// to encoding/json; the fuzz tests start from them.
var scanBodies = []string{
	`{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"FP32","data":[0.5,1.5,2.5,3.5,4.5,5.5,6.5,7.5,8.5,9.5,10.5,11.5,12.5,13.5,14.5,15.5]}]}`,
	" \t\r\n{ \"id\" : \"r1\" , \"inputs\" : [ { \"name\" : \"x\" , \"shape\" : [ 2 , 2 ] , \"datatype\" : \"FP32\" , \"data\" : [ [ 1 , 2 ] , \n [ 3 , 4 ] ] } ] } \n",
	`{"inputs": [{"name": "x\u00e9\n\"q\"", "shape": [2], "datatype": "FP64", "data": [1e3, -0]}]}`,
	`{"inputs": [{"name": "hé", "shape": [2], "datatype": "INT64", "data": [9223372036854775807, -9223372036854775808]}]}`,
	`{"inputs": [{"name": "u", "shape": [2], "datatype": "UINT64", "data": [18446744073709551615, 0]}]}`,
	`{"inputs": [{"name": "b", "shape": [3], "datatype": "BOOL", "data": [true, false, true]}]}`,
	`{"inputs": [{"name": "s", "shape": [3], "datatype": "BYTES", "data": ["a", "\u00e9\t", ""]}]}`,
	"{\"inputs\": [{\"name\": \"s\xff\", \"shape\": [1], \"datatype\": \"BYTES\", \"data\": [\"\xff\xfe\"]}]}",
	`{"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [1], "extra": {"a": [1, {"b": null}], "c": "\\"}}], "other": true}`,
	`{"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [1]}], "inputs": [{"name": "y"}]}`,
	`{"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [1], "name": "z"}]}`,
	`{"Inputs": [{"NAME": "x", "shape": [1], "datatype": "FP32", "data": [1]}]}`,
	`{"inputs": [{"name": "x", "data": [1, 2], "shape": [2], "datatype": "INT8"}]}`,
	`{"inputs": [{"name": "x", "shape": [1], "datatype": "INT8", "data": [1.5]}]}`,
	`{"inputs": [{"name": "x", "shape": [1], "datatype": "FP16", "data": [null]}]}`,
	`{"inputs": [{"name": "x", "shape": [1e3], "datatype": "FP16", "data": [1]}]}`,
	`{"inputs": [{"name": "x", "shape": null, "datatype": null, "data": null, "parameters": null}], "outputs": null, "id": null, "parameters": null}`,
	`{"inputs": [{"name": "x", "shape": [], "datatype": "UINT8", "data": [7]}], "outputs": [], "parameters": {"binary_data_output": true}}`,
	`{"inputs": [{"name": "x", "shape": [1], "datatype": "UINT8", "parameters": {"binary_data_size": 1, "binary_data": false, "shared_memory_region": null}}], "outputs": [{"name": "y", "parameters": {"binary_data": true}}]}`,
	`{"inputs": [null]}`,
	`{"inputs": [{"name": "x", "shape": [1], "datatype": "FP32", "data": [1]}]} x`,
	`{"inputs": [{"name": "x", "shape": [01], "datatype": "FP32", "data": [1]}]}`,
	`[1]`,
	`null`,
	``,
}

// TestScannerMatchesJSON checks the scanner against encoding/json on
// scanBodies, and that it reads the requests clients send itself.
func TestScannerMatchesJSON(t *testing.T) {
	for _, body := range scanBodies {
		hlen := ""
		if strings.Contains(body, "binary_data_size") {
			body += "\x07"
			hlen = strconv.Itoa(len(body) - 1)
		}
		if got, want := outcome(parseRequest, body, hlen), outcome(parseRequestJSON, body, hlen); got != want {
			t.Errorf("%s:\nscanner:\n%s\nencoding/json:\n%s", body, got, want)
		}
	}
	for _, body := range scanBodies[:9] {
		if !scanRequest(newRequest(), []byte(body), nil) {
			t.Errorf("the scanner leaves %s to encoding/json", body)
		}
	}
	for _, body := range scanBodies[9:12] { // duplicates and cases: encoding/json's
		if scanRequest(newRequest(), []byte(body), nil) {
			t.Errorf("the scanner reads %s", body)
		}
	}
}

// TestScannerEncodes checks what the scanner itself encodes: escaped
// names, nested data, exponents, negative zero, the extreme integers,
// booleans and strings, and that the data it could not encode (datatype
// after data, a bad element) are left to parseJSONData.
func TestScannerEncodes(t *testing.T) {
	r := newRequest()
	body := `{"inputs": [{"name": "x\u00e9", "shape": [2, 2], "datatype": "FP64", "data": [[1e3, -0], [2.5E-1, 7]]},
		{"name": "i", "shape": [2], "datatype": "INT64", "data": [9223372036854775807, -9223372036854775808]},
		{"name": "b", "shape": [2], "datatype": "BOOL", "data": [true, false]},
		{"name": "s", "shape": [2], "datatype": "BYTES", "data": ["a\"", "é"]},
		{"name": "late", "data": [1], "shape": [1], "datatype": "INT8"},
		{"name": "bad", "shape": [1], "datatype": "INT8", "data": [300]}]}`
	if !scanRequest(r, []byte(body), nil) {
		t.Fatal("the scanner leaves the body to encoding/json")
	}
	f64 := func(vs ...float64) string {
		var b []byte
		for _, v := range vs {
			b = appendBits(b, math.Float64bits(v), 8)
		}
		return string(b)
	}
	want := []struct {
		name, elems string
		count       int64
	}{
		{"xé", f64(1000, math.Copysign(0, -1), 0.25, 7), 4},
		{"i", "\xff\xff\xff\xff\xff\xff\xff\x7f\x00\x00\x00\x00\x00\x00\x00\x80", 2},
		{"b", "\x01\x00", 2},
		{"s", string(le32(2)) + "a\"" + string(le32(2)) + "é", 2},
		{"late", "", -1},
		{"bad", "", -1},
	}
	for i, w := range want {
		in := r.Inputs[i]
		if in.Name != w.name {
			t.Errorf("input %d is named %q, want %q", i, in.Name, w.name)
		}
		if w.count < 0 {
			if in.elemType != nil {
				t.Errorf("input %s: encoded by the scanner", in.Name)
			}
			continue
		}
		if in.elemType == nil || string(in.elems) != w.elems || in.elemCount != w.count {
			t.Errorf("input %s: %q (%d), want %q (%d)", in.Name, in.elems, in.elemCount, w.elems, w.count)
		}
	}
	if _, err := encodeInputs(r, nil, nil); err == nil || err.Error() != `Input "bad": element 0, "300", is not an integer that fits INT8` {
		t.Errorf("error %v", err)
	}
	r.release()
}

// TestParseIntMatchesJSON checks the scanner's integers against
// encoding/json's int64.
func TestParseIntMatchesJSON(t *testing.T) {
	for _, tok := range []string{"0", "-0", "7", "-7", "9223372036854775807", "9223372036854775808", "-9223372036854775808",
		"-9223372036854775809", "18446744073709551616", "99999999999999999999", "1e3", "1.0", "-1E0"} {
		got, ok := parseInt([]byte(tok))
		var want int64
		err := json.Unmarshal([]byte(tok), &want)
		if ok != (err == nil) || ok && got != want {
			t.Errorf("%s: %d %v, encoding/json %d %v", tok, got, ok, want, err)
		}
	}
}

// FuzzScanner checks the scanner against encoding/json on arbitrary
// bodies: decodeInfer makes the same of both, to the byte and the
// message.
func FuzzScanner(f *testing.F) {
	for _, body := range scanBodies {
		f.Add(body, "")
	}
	f.Add(`{"inputs": [{"name": "x", "shape": [1], "datatype": "UINT8", "parameters": {"binary_data_size": 1}}]}`+"\x07", "99")
	f.Fuzz(func(t *testing.T, body, hlen string) {
		if got, want := outcome(parseRequest, body, hlen), outcome(parseRequestJSON, body, hlen); got != want {
			t.Errorf("%q %q:\nscanner:\n%s\nencoding/json:\n%s", body, hlen, got, want)
		}
	})
}

// TestPooledRequests checks that a released request's buffers leave no
// trace in the next one.
func TestPooledRequests(t *testing.T) {
	first := `{"inputs": [{"name": "a", "shape": [3], "datatype": "INT8", "data": [1, 2, 3]},
		{"name": "b", "shape": [1], "datatype": "INT8", "data": [4]}, {"name": "c", "shape": [1], "datatype": "INT8", "data": [5]}]}`
	second := `{"inputs": [{"name": "z", "shape": [1], "datatype": "INT8", "data": [9]}]}`
	for range 3 {
		for _, body := range []string{first, second} {
			r, bin, err := parseRequest([]byte(body), "")
			if err != nil {
				t.Fatal(err)
			}
			got, err := encodeInputs(r, bin, nil)
			want, _ := encodeInputs(mustJSON(t, body), nil, nil)
			if err != nil || string(got) != string(want) {
				t.Errorf("%s: %q %v, want %q", body, got, err, want)
			}
			if !reflect.DeepEqual(r.Outputs, []requestOutput(nil)) || r.ID != "" {
				t.Errorf("%s: outputs %v id %q", body, r.Outputs, r.ID)
			}
			r.release()
		}
	}
}

func mustJSON(t *testing.T, body string) *inferRequest {
	t.Helper()
	r, _, err := parseRequestJSON([]byte(body), "")
	if err != nil {
		t.Fatal(err)
	}
	return r
}
