package kserve

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
)

// pyArray is one array as DJL's np_util.to_nd_list writes it: no name,
// the type's numpy name, the given byte order.
func pyArray(typeName string, shape []int64, order byte, data []byte) []byte {
	b := appendShort(nil, ndMagic)
	b = binary.BigEndian.AppendUint32(b, ndVersion)
	b = append(b, 0)
	b = appendShort(b, "default")
	b = appendShort(b, typeName)
	b = binary.BigEndian.AppendUint32(b, uint32(len(shape)))
	for _, d := range shape {
		b = binary.BigEndian.AppendUint64(b, uint64(d))
	}
	b = binary.BigEndian.AppendUint32(b, uint32(len(shape)))
	for range shape {
		b = append(b, 0, '?')
	}
	b = append(b, order)
	b = binary.BigEndian.AppendUint32(b, uint32(len(data)))
	return append(b, data...)
}

func ndList(arrays ...[]byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(arrays)))
	for _, a := range arrays {
		b = append(b, a...)
	}
	return b
}

func TestDecodeNDList(t *testing.T) {
	body := ndList(
		pyArray("FLOAT32", []int64{2}, '<', []byte{0, 0, 0x80, 0x3f, 0, 0, 0, 0x40}),
		pyArray("INT16", []int64{1, 2}, '>', []byte{0, 1, 0xff, 0xfe}),
		pyArray("BOOLEAN", []int64{}, '<', []byte{1}),
		pyArray("STRING", []int64{1}, '>', append(binary.BigEndian.AppendUint32(nil, 2), "hi"...)),
	)
	arrays, err := decodeNDList(body)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"[1,2]", "[1,-2]", "[true]", `["hi"]`}
	for i, a := range arrays {
		if a.name != "" {
			t.Errorf("array %d has name %q", i, a.name)
		}
		if got := appendJSONData(nil, &a); string(got) != want[i] {
			t.Errorf("array %d = %s, want %s", i, got, want[i])
		}
	}
}

func TestDecodeNDListRefuses(t *testing.T) {
	good := pyArray("FLOAT32", []int64{1}, '<', []byte{0, 0, 0, 0})
	bad := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), ndList(good)...)) }
	cases := map[string][]byte{
		"empty":         nil,
		"json":          []byte(`{"outputs": []}`),
		"truncated":     ndList(good)[:20],
		"too many":      bad(func(b []byte) []byte { b[3] = 9; return b }),
		"trailing":      append(ndList(good), 0),
		"magic":         bad(func(b []byte) []byte { b[6] = 'X'; return b }),
		"version":       bad(func(b []byte) []byte { b[13] = 2; return b }),
		"unknown type":  ndList(pyArray("COMPLEX64", []int64{1}, '<', make([]byte, 8))),
		"shape vs data": ndList(pyArray("FLOAT32", []int64{2}, '<', make([]byte, 4))),
		"huge count":    binary.BigEndian.AppendUint32(nil, 1<<30),
		"bytes framing": ndList(pyArray("STRING", []int64{1}, '<', []byte{9, 0, 0, 0, 'a'})),
	}
	for name, body := range cases {
		if _, err := decodeNDList(body); err == nil {
			t.Errorf("%s: decoded", name)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	body := `{"inputs": [{"name": "b", "shape": [2, 1], "datatype": "BYTES", "data": [["x"], ["yz"]]},
		{"name": "h", "shape": [2], "datatype": "FP16", "data": [0.5, 1]}]}`
	arrays, err := encode(body, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	r := &inferReply{model: "m"}
	r.nameArrays(arrays)
	outs, err := r.pick(arrays)
	if err != nil {
		t.Fatal(err)
	}
	got, header := r.encode(outs)
	want := `{"model_name":"m","model_version":"1","outputs":[{"name":"b","datatype":"BYTES","shape":[2,1],"data":["x","yz"]},` +
		`{"name":"h","datatype":"FP16","shape":[2],"data":[0.5,1]}]}`
	if string(got) != want || header != len(got) {
		t.Errorf("answer\n%s\nwant\n%s", got, want)
	}
}

func TestReplyOutputs(t *testing.T) {
	fp32 := pyArray("FLOAT32", []int64{1}, '<', []byte{0, 0, 0x80, 0x3f})
	int8 := pyArray("INT8", []int64{2}, '<', []byte{1, 2})
	body := ndList(fp32, int8)
	bin, no := true, false
	ab := []api.TensorSpec{{Name: "A"}, {Name: "B"}}
	cases := []struct {
		name  string
		reply inferReply
		want  string
		tail  string // the binary data after the JSON
		err   string
	}{
		{"unnamed, all", inferReply{model: "m", id: "q"},
			`{"model_name":"m","model_version":"1","id":"q","outputs":[{"name":"output_0","datatype":"FP32","shape":[1],"data":[1]},` +
				`{"name":"output_1","datatype":"INT8","shape":[2],"data":[1,2]}]}`, "", ""},
		{"declared names", inferReply{model: "m", declared: []api.TensorSpec{{Name: "A"}}, outputs: []requestOutput{{Name: "output_1"}}},
			`{"model_name":"m","model_version":"1","outputs":[{"name":"output_1","datatype":"INT8","shape":[2],"data":[1,2]}]}`, "", ""},
		{"DJL's names by request", inferReply{model: "m", outputs: []requestOutput{{Name: "y"}, {Name: "z"}}},
			`{"model_name":"m","model_version":"1","outputs":[{"name":"y","datatype":"FP32","shape":[1],"data":[1]},` +
				`{"name":"z","datatype":"INT8","shape":[2],"data":[1,2]}]}`, "", ""},
		{"binary all", inferReply{model: "m", binaryAll: true, declared: ab, outputs: []requestOutput{{Name: "B"}}},
			`{"model_name":"m","model_version":"1","outputs":[{"name":"B","datatype":"INT8","shape":[2],"parameters":{"binary_data_size":2}}]}`,
			"\x01\x02", ""},
		{"binary one", inferReply{model: "m", declared: ab, outputs: []requestOutput{{Name: "B", Parameters: &tensorParams{BinaryData: &bin}}, {Name: "A"}}},
			`{"model_name":"m","model_version":"1","outputs":[{"name":"B","datatype":"INT8","shape":[2],"parameters":{"binary_data_size":2}},` +
				`{"name":"A","datatype":"FP32","shape":[1],"data":[1]}]}`, "\x01\x02", ""},
		{"binary all but one", inferReply{model: "m", binaryAll: true, declared: ab, outputs: []requestOutput{{Name: "B", Parameters: &tensorParams{BinaryData: &no}}, {Name: "A"}}},
			`{"model_name":"m","model_version":"1","outputs":[{"name":"B","datatype":"INT8","shape":[2],"data":[1,2]},` +
				`{"name":"A","datatype":"FP32","shape":[1],"parameters":{"binary_data_size":4}}]}`, "\x00\x00\x80\x3f", ""},
		{"unknown output", inferReply{model: "m", declared: ab, outputs: []requestOutput{{Name: "C"}}},
			"", "", `The model answered no output "C"; it answered "A", "B".`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			arrays, err := decodeNDList(body)
			if err != nil {
				t.Fatal(err)
			}
			c.reply.nameArrays(arrays)
			outs, err := c.reply.pick(arrays)
			if c.err != "" {
				if err == nil || err.Error() != c.err || !errors.Is(err, api.ErrBadRequest) {
					t.Errorf("error %v, want %q", err, c.err)
				}
				return
			}
			got, header := c.reply.encode(outs)
			if string(got[:header]) != c.want || string(got[header:]) != c.tail {
				t.Errorf("answer\n%q\nwant\n%q", got, c.want+c.tail)
			}
		})
	}
	if _, err := decodeNDList([]byte("not tensors")); err == nil || !strings.Contains(err.Error(), "not an NDList") {
		t.Errorf("error %v", err)
	}
}
