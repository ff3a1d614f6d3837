package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/batching"
)

func TestRequestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   batching.Input
	}{
		{"empty", batching.Input{Props: []batching.Prop{}, Content: []batching.Item{}}},
		{"init", batching.Input{Props: []batching.Prop{prop("model_id", "m"), prop("task", "text-generation")}, Content: []batching.Item{}}},
		{"body", batching.Input{Props: []batching.Prop{prop("content-type", "text/plain")}, Content: []batching.Item{item("data", "hello")}}},
		{"empty values", batching.Input{Props: []batching.Prop{prop("", "")}, Content: []batching.Item{item("data", "")}}},
		{"binary and unicode", batching.Input{Props: []batching.Prop{prop("név", "ünïcode")}, Content: []batching.Item{item("data", "\x00\x01\xff"), item("q", "x")}}},
		{"longest string", batching.Input{Props: []batching.Prop{prop("k", strings.Repeat("v", MaxCount))}, Content: []batching.Item{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frame, err := AppendRequest(nil, &tt.in)
			if err != nil {
				t.Fatal(err)
			}
			got, err := NewReader(bytes.NewReader(frame), 0).ReadRequest()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.in) {
				t.Errorf("read back %+v, want %+v", *got, tt.in)
			}
		})
	}
}

func TestResponseRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		resp Response
	}{
		{"ok", Response{Code: 200, Message: "OK", Props: []batching.Prop{prop("content-type", "application/json")}, Content: []batching.Item{item("data", `{"a":1}`)}}},
		{"no content", Response{Code: 204, Props: []batching.Prop{}, Content: []batching.Item{}}},
		{"error", Response{Code: 424, Message: "ValueError: bad", Props: []batching.Prop{}, Content: []batching.Item{item("data", "{}")}}},
		{"negative code", Response{Code: -1, Props: []batching.Prop{}, Content: []batching.Item{}}},
		{"streaming", Response{Code: 200, Props: []batching.Prop{prop("request_tracking_id", "7")}, Streaming: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			frame, err := AppendResponse(nil, &tt.resp)
			if err != nil {
				t.Fatal(err)
			}
			r := NewReader(bytes.NewReader(frame), 0)
			got, err := r.ReadResponse()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(*got, tt.resp) {
				t.Errorf("read back %+v, want %+v", *got, tt.resp)
			}
			if _, err := r.ReadResponse(); err != io.EOF {
				t.Errorf("after the frame: %v, want io.EOF", err)
			}
		})
	}
}

func TestChunkRoundTrip(t *testing.T) {
	type chunk struct {
		data string
		more bool
	}
	tests := []struct {
		name   string
		chunks []chunk
	}{
		{"clean end", []chunk{{"a", true}, {"", true}, {"bc", true}, {"", false}}},
		{"error end", []chunk{{"a", true}, {"canceled", false}}},
		{"only end", []chunk{{"", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var frame []byte
			for _, c := range tt.chunks {
				frame, _ = AppendChunk(frame, []byte(c.data), c.more)
			}
			r := NewReader(bytes.NewReader(frame), 0)
			for i, want := range tt.chunks {
				data, more, err := r.ReadChunk()
				if err != nil || string(data) != want.data || more != want.more {
					t.Fatalf("chunk %d: %q %v %v, want %q %v", i, data, more, err, want.data, want.more)
				}
			}
		})
	}
}

func TestAppendBatch(t *testing.T) {
	ins := []*batching.Input{
		{Props: []batching.Prop{prop("content-type", "text/plain")}, Content: []batching.Item{item("data", "zero")}},
		{Props: []batching.Prop{}, Content: []batching.Item{item("data", "one"), item("q", "1")}},
	}
	frame, err := AppendBatch(nil, ins)
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewReader(bytes.NewReader(frame), 0).ReadRequest()
	if err != nil {
		t.Fatal(err)
	}
	want := batching.Input{
		Props: []batching.Prop{prop("batch_size", "2"), prop("batch_000.content-type", "text/plain")},
		Content: []batching.Item{
			item("batch_000.data", "zero"), item("batch_001.data", "one"), item("batch_001.q", "1"),
		},
	}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("batch frame reads as %+v, want %+v", *got, want)
	}
}

func TestAppendErrors(t *testing.T) {
	long := strings.Repeat("x", MaxCount+1)
	many := make([]batching.Prop, MaxCount+1)
	tests := []struct {
		name   string
		encode func([]byte) ([]byte, error)
		want   error
	}{
		{"long key", func(b []byte) ([]byte, error) {
			return AppendRequest(b, &batching.Input{Props: []batching.Prop{prop(long, "")}})
		}, ErrTooLong},
		{"long value", func(b []byte) ([]byte, error) {
			return AppendRequest(b, &batching.Input{Props: []batching.Prop{prop("k", long)}})
		}, ErrTooLong},
		{"long content key", func(b []byte) ([]byte, error) {
			return AppendRequest(b, &batching.Input{Content: []batching.Item{item(long, "")}})
		}, ErrTooLong},
		{"too many props", func(b []byte) ([]byte, error) {
			return AppendRequest(b, &batching.Input{Props: many})
		}, ErrTooMany},
		{"batch key grows past the limit", func(b []byte) ([]byte, error) {
			return AppendBatch(b, []*batching.Input{{Props: []batching.Prop{prop(long[:MaxCount-5], "v")}}})
		}, ErrTooLong},
		{"batch props add up", func(b []byte) ([]byte, error) {
			return AppendBatch(b, []*batching.Input{{Props: many[:MaxCount]}})
		}, ErrTooMany},
		{"long message", func(b []byte) ([]byte, error) {
			return AppendResponse(b, &Response{Code: 500, Message: long})
		}, ErrTooLong},
		{"code too big", func(b []byte) ([]byte, error) {
			return AppendResponse(b, &Response{Code: 40000})
		}, ErrBadCode},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("keep")
			got, err := tt.encode(dst)
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if string(got) != "keep" {
				t.Errorf("dst changed to %d bytes on error", len(got))
			}
		})
	}
}

// TestGoldenBytes checks the encoder and the reader against frames written by
// hand from the layout in docs/protocol.md.
func TestGoldenBytes(t *testing.T) {
	request := "" +
		"0001" + // int16 nProps = 1
		"0002" + "6964" + // key: int16 len 2, "id"
		"0001" + "37" + // value: int16 len 1, "7"
		"0001" + // int16 nContent = 1
		"0004" + "64617461" + // key: int16 len 4, "data"
		"00000003" + "616263" // value: int32 len 3, "abc"
	response := "" +
		"00c8" + // int16 code = 200
		"0002" + "4f4b" + // message: int16 len 2, "OK"
		"0001" + // int16 nProps = 1
		"0001" + "78" + // key "x"
		"0000" + // value "" (empty, not null)
		"0001" + // int16 nContent = 1
		"0004" + "64617461" + // key "data"
		"00000002" + "6869" // int32 len 2, "hi"
	stream := "" +
		"00c8" + "0000" + "0000" + // code 200, message "", no props
		"ffff" + // nContent = -1: chunks follow
		"01" + "00000001" + "61" + // chunk "a"
		"00" + "00000000" // clean end
	in := &batching.Input{Props: []batching.Prop{prop("id", "7")}, Content: []batching.Item{item("data", "abc")}}
	resp := &Response{Code: 200, Message: "OK", Props: []batching.Prop{prop("x", "")}, Content: []batching.Item{item("data", "hi")}}

	t.Run("request", func(t *testing.T) {
		got, _ := AppendRequest(nil, in)
		checkHex(t, got, request)
		back, err := NewReader(bytes.NewReader(mustHex(t, request)), 0).ReadRequest()
		if err != nil || !reflect.DeepEqual(back, in) {
			t.Errorf("golden request reads as %+v, %v", back, err)
		}
	})
	t.Run("response", func(t *testing.T) {
		got, _ := AppendResponse(nil, resp)
		checkHex(t, got, response)
		back, err := NewReader(bytes.NewReader(mustHex(t, response)), 0).ReadResponse()
		if err != nil || !reflect.DeepEqual(back, resp) {
			t.Errorf("golden response reads as %+v, %v", back, err)
		}
	})
	t.Run("stream", func(t *testing.T) {
		got, _ := AppendResponse(nil, &Response{Code: 200, Streaming: true})
		got, _ = AppendChunk(got, []byte("a"), true)
		got, _ = AppendStreamEnd(got, "")
		checkHex(t, got, stream)
	})
}

func checkHex(t *testing.T, got []byte, want string) {
	t.Helper()
	if h := hex.EncodeToString(got); h != want {
		t.Errorf("encoded\n%s\nwant\n%s", h, want)
	}
}

func mustHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func prop(k, v string) batching.Prop { return batching.Prop{Key: k, Value: v} }

func item(k, v string) batching.Item { return batching.Item{Key: k, Value: []byte(v)} }
