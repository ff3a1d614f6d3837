package kserve

import (
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// namedList is an NDList of one named FP32 array of two elements.
func namedList(name string) []byte {
	b := binary.BigEndian.AppendUint32(nil, 1)
	b = appendHeader(b, name, &dtypes[10], []int64{2})
	b = binary.BigEndian.AppendUint32(b, 8)
	return append(b, 0, 0, 0x80, 0x3f, 0, 0, 0, 0xc0)
}

// TestWholeAnswer checks the answer written into the response's own
// buffer: what encode writes, whatever the buffer held, with no
// allocation once the response has a buffer.
func TestWholeAnswer(t *testing.T) {
	reply := &inferReply{model: "m", id: "q", declared: []api.TensorSpec{{Name: "y"}}}
	want := `{"model_name":"m","model_version":"1","id":"q","outputs":[{"name":"y","datatype":"FP32","shape":[2],"data":[1,-2]}]}`
	ctx := &fasthttp.RequestCtx{}
	ctx.Response.SetBodyString("an earlier body, longer than the answer ..................................................................")
	a := dialect.Answer{Request: dialect.Request{Ctx: ctx}, Code: 200, Body: namedList("y")}
	for range 2 {
		if err := reply.Whole(a); err != nil {
			t.Fatal(err)
		}
		if got := string(ctx.Response.Body()); got != want || string(ctx.Response.Header.ContentType()) != dialect.ContentTypeJSON {
			t.Errorf("answer %s (%s), want %s", got, ctx.Response.Header.ContentType(), want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = reply.Whole(a) }); n > 0 {
		t.Errorf("Whole allocates %.0f times", n)
	}
}

// TestInternedNames checks that an answer's array named as a declared or
// requested output has that output's string, and any other a new one.
func TestInternedNames(t *testing.T) {
	reply := &inferReply{declared: []api.TensorSpec{{Name: "y"}}, outputs: []requestOutput{{Name: "z"}}}
	for name, want := range map[string]string{"y": reply.declared[0].Name, "z": reply.outputs[0].Name, "w": ""} {
		arrays, err := appendNDList(reply.arrayBuf[:0], reply.dimBuf[:0], namedList(name), reply)
		if err != nil || len(arrays) != 1 || arrays[0].name != name {
			t.Fatalf("%s: %+v %v", name, arrays, err)
		}
		if shared := unsafe.StringData(arrays[0].name) == unsafe.StringData(want); shared != (want != "") {
			t.Errorf("%s: shares the output's string: %v", name, shared)
		}
	}
}
