package kserve

import (
	"encoding/binary"
	"math"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
)

func TestDatatypesAreAPIs(t *testing.T) {
	if len(dtypes) != len(api.Datatypes) {
		t.Fatalf("%d datatypes here, %d in api.Datatypes", len(dtypes), len(api.Datatypes))
	}
	for i, name := range api.Datatypes {
		if dtypes[i].name != name {
			t.Errorf("datatype %d = %s, api says %s", i, dtypes[i].name, name)
		}
		if _, ok := typeOfND(dtypes[i].nd); !ok {
			t.Errorf("%s's NDList name %s does not come back", name, dtypes[i].nd)
		}
	}
	if _, ok := typeNamed("BF16"); ok {
		t.Error("BF16 is carried, but numpy cannot read it")
	}
	if b, ok := typeOfND("BOOLEAN"); !ok || b.name != "BOOL" {
		t.Error("DJL Java's BOOLEAN is not BOOL")
	}
}

func TestHalf(t *testing.T) {
	cases := []struct {
		f    float32
		bits uint16
	}{
		{0, 0}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65520, 0x7c00}, {1e9, 0x7c00},
		{float32(math.Inf(-1)), 0xfc00}, {0.5, 0x3800}, {5.960464477539063e-08, 0x0001}, // smallest subnormal
		{6.097555160522461e-05, 0x03ff},                 // largest subnormal
		{1.0009765625, 0x3c01}, {1.00048828125, 0x3c00}, // a tie rounds to even
		{1.00146484375, 0x3c02}, {2.98e-08, 0x0000}, {2.99e-08, 0x0001},
	}
	for _, c := range cases {
		if got := halfBits(c.f); got != c.bits {
			t.Errorf("halfBits(%g) = %#04x, want %#04x", c.f, got, c.bits)
		}
	}
	for _, h := range []uint16{0, 0x3c00, 0xc000, 0x7bff, 0x0001, 0x03ff, 0x3c01, 0x7c00, 0xfc00} {
		if got := halfBits(halfFloat(h)); got != h {
			t.Errorf("half %#04x widens to %g, which rounds to %#04x", h, halfFloat(h), got)
		}
	}
	if nan := halfFloat(halfBits(float32(math.NaN()))); !math.IsNaN(float64(nan)) {
		t.Errorf("NaN comes back as %g", nan)
	}
}

func TestParseJSONData(t *testing.T) {
	typ := func(name string) *dtype { d, _ := typeNamed(name); return d }
	le32 := func(vs ...uint32) string {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
		return string(b)
	}
	cases := []struct {
		datatype, data string
		want           string // the elements; "" with err
		n              int64
		err            string
	}{
		{"FP32", "[1, 2.5]", le32(math.Float32bits(1), math.Float32bits(2.5)), 2, ""},
		{"FP32", "[[1],\n [2]]", le32(math.Float32bits(1), math.Float32bits(2)), 2, ""},
		{"FP32", "[]", "", 0, ""},
		{"FP32", "[1e40]", "", 0, "element 0, \"1e40\", is not a number"},
		{"FP32", `["1"]`, "", 0, `element 0, "1", is a string; FP32 data are a number`},
		{"FP32", "[null]", "", 0, "is not a number"},
		{"FP32", `[{"a": 1}]`, "", 0, "is not a number"},
		{"FP32", "3", "", 0, "data must be an array"},
		{"INT32", "[-1, 7]", le32(0xffffffff, 7), 2, ""},
		{"INT32", "[1.5]", "", 0, "is not an integer that fits INT32"},
		{"INT8", "[128]", "", 0, "is not an integer that fits INT8"},
		{"UINT16", "[65535]", "\xff\xff", 1, ""},
		{"UINT8", "[-1]", "", 0, "fits UINT8"},
		{"INT64", "[-2]", "\xfe\xff\xff\xff\xff\xff\xff\xff", 1, ""},
		{"BOOL", "[true, false]", "\x01\x00", 2, ""},
		{"BOOL", "[1]", "", 0, "is not true or false"},
		{"FP16", "[1, -2]", "\x00\x3c\x00\xc0", 2, ""},
		{"FP64", "[0.1]", string(binary.LittleEndian.AppendUint64(nil, math.Float64bits(0.1))), 1, ""},
		{"BYTES", `["ab", "", "\u00e9\n"]`, le32(2) + "ab" + le32(0) + le32(3) + "é\n", 3, ""},
		{"BYTES", "[1]", "", 0, "is not strings"},
	}
	for _, c := range cases {
		got, n, err := parseJSONData(nil, []byte(c.data), typ(c.datatype))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s %s: error %v, want %q", c.datatype, c.data, err, c.err)
			}
			continue
		}
		if err != nil || string(got) != c.want || n != c.n {
			t.Errorf("%s %s = %q %d %v, want %q %d", c.datatype, c.data, got, n, err, c.want, c.n)
		}
	}
}

func TestAppendJSONElement(t *testing.T) {
	cases := []struct {
		datatype, data, want string
	}{
		{"FP32", "[1.5, -0.1, 3e+38]", "[1.5,-0.1,3e+38]"},
		{"FP64", "[0.1]", "[0.1]"},
		{"FP16", "[0.5, -2]", "[0.5,-2]"},
		{"INT8", "[-128, 127]", "[-128,127]"},
		{"INT64", "[-9223372036854775808]", "[-9223372036854775808]"},
		{"UINT64", "[18446744073709551615]", "[18446744073709551615]"},
		{"BOOL", "[true,false]", "[true,false]"},
		{"BYTES", `["a\"b", "\u0001"]`, `["a\"b","\u0001"]`},
	}
	for _, c := range cases {
		d, _ := typeNamed(c.datatype)
		data, n, err := parseJSONData(nil, []byte(c.data), d)
		if err != nil {
			t.Fatal(err)
		}
		got := appendJSONData(nil, &ndArray{t: d, count: n, data: data})
		if string(got) != c.want {
			t.Errorf("%s %s comes back as %s, want %s", c.datatype, c.data, got, c.want)
		}
	}
	fp32, _ := typeNamed("FP32")
	nan := binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(math.NaN())))
	if got := appendJSONData(nil, &ndArray{t: fp32, count: 1, data: nan}); string(got) != "[null]" {
		t.Errorf("NaN is written %s", got)
	}
}

func TestAppendString(t *testing.T) {
	cases := map[string]string{
		"plain": `"plain"`, `q"b\`: `"q\"b\\"`, "\x00\n\x1f": `"\u0000\u000a\u001f"`,
		"é€": `"é€"`, "a\xffb": "\"a\ufffdb\"", "\xe2\x82": "\"\ufffd\ufffd\"",
	}
	for in, want := range cases {
		if got := appendString(nil, in); string(got) != want {
			t.Errorf("appendString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestElements(t *testing.T) {
	cases := []struct {
		shape []int64
		n     int64
		ok    bool
	}{
		{[]int64{}, 1, true}, {[]int64{2, 3}, 6, true}, {[]int64{0, 5}, 0, true},
		{[]int64{-1}, 0, false}, {[]int64{1 << 30, 1 << 30}, 0, false}, {[]int64{1 << 62, 4}, 0, false},
	}
	for _, c := range cases {
		if n, ok := elements(c.shape); n != c.n || ok != c.ok {
			t.Errorf("elements(%v) = %d %v, want %d %v", c.shape, n, ok, c.n, c.ok)
		}
	}
}
