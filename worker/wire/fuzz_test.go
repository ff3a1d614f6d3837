package wire

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/switchyard/switchyard/message"
)

const fuzzCap = 1 << 10

func FuzzReadResponse(f *testing.F) {
	ok, _ := AppendResponse(nil, &Response{Code: 200, Message: "OK", Props: []message.Prop{prop("k", "v")}, Content: []message.Item{item("data", "x")}})
	stream, _ := AppendResponse(nil, &Response{Code: 200, Streaming: true})
	stream, _ = AppendChunk(stream, []byte("tok"), true)
	stream, _ = AppendStreamEnd(stream, "boom")
	f.Add(ok)
	f.Add(stream)
	f.Add([]byte{0x00, 0xc8, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), fuzzCap)
		for range 8 {
			resp, err := r.ReadResponse()
			if err != nil {
				return
			}
			checkResponse(t, resp)
			if resp.Streaming && !readChunks(t, r) {
				return
			}
		}
	})
}

func FuzzReadRequest(f *testing.F) {
	one, _ := AppendRequest(nil, &message.Input{Props: []message.Prop{prop("a", "b")}, Content: []message.Item{item("data", "c")}})
	batch, _ := AppendBatch(nil, []*message.Input{{Content: []message.Item{item("data", "x")}}, {}})
	f.Add(one)
	f.Add(batch)
	f.Add([]byte{0x7f, 0xff, 0x7f, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(bytes.NewReader(data), fuzzCap)
		for range 8 {
			in, err := r.ReadRequest()
			if err != nil {
				return
			}
			checkRequest(t, in)
		}
	})
}

// checkResponse checks the cap and that the decoded frame encodes and decodes
// to itself.
func checkResponse(t *testing.T, resp *Response) {
	checkPropsCap(t, resp.Props)
	checkItemsCap(t, resp.Content)
	if len(resp.Message) > fuzzCap {
		t.Fatalf("message of %d bytes passed a cap of %d", len(resp.Message), fuzzCap)
	}
	frame, err := AppendResponse(nil, resp)
	if err != nil {
		t.Fatalf("a decoded response does not encode: %v", err)
	}
	back, err := NewReader(bytes.NewReader(frame), fuzzCap).ReadResponse()
	if err != nil || !reflect.DeepEqual(normalize(back), normalize(resp)) {
		t.Fatalf("re-encoded response reads as %+v, %v; want %+v", back, err, resp)
	}
}

func checkRequest(t *testing.T, in *message.Input) {
	checkPropsCap(t, in.Props)
	checkItemsCap(t, in.Content)
	frame, err := AppendRequest(nil, in)
	if err != nil {
		t.Fatalf("a decoded request does not encode: %v", err)
	}
	back, err := NewReader(bytes.NewReader(frame), fuzzCap).ReadRequest()
	if err != nil || !reflect.DeepEqual(back, in) {
		t.Fatalf("re-encoded request reads as %+v, %v; want %+v", back, err, in)
	}
}

func readChunks(t *testing.T, r *Reader) bool {
	for range 16 {
		data, more, err := r.ReadChunk()
		if err != nil {
			return false
		}
		if len(data) > fuzzCap {
			t.Fatalf("chunk of %d bytes passed a cap of %d", len(data), fuzzCap)
		}
		if !more {
			return true
		}
	}
	return false
}

func checkPropsCap(t *testing.T, props []message.Prop) {
	for _, p := range props {
		if len(p.Key) > fuzzCap || len(p.Value) > fuzzCap {
			t.Fatalf("property of %d+%d bytes passed a cap of %d", len(p.Key), len(p.Value), fuzzCap)
		}
	}
}

func checkItemsCap(t *testing.T, items []message.Item) {
	for _, it := range items {
		if len(it.Key) > fuzzCap || len(it.Value) > fuzzCap {
			t.Fatalf("item of %d+%d bytes passed a cap of %d", len(it.Key), len(it.Value), fuzzCap)
		}
	}
}

// normalize drops the content of a streamed response, which the encoder
// does not write.
func normalize(r *Response) *Response {
	c := *r
	if c.Streaming {
		c.Content = nil
	}
	return &c
}
