package wire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/message"
)

func TestRequestRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   message.Input
	}{
		{"empty", message.Input{Props: []message.Prop{}, Content: []message.Item{}}},
		{"init", message.Input{Props: []message.Prop{prop("model_id", "m"), prop("task", "text-generation")}, Content: []message.Item{}}},
		{"body", message.Input{Props: []message.Prop{prop("content-type", "text/plain")}, Content: []message.Item{item("data", "hello")}}},
		{"empty values", message.Input{Props: []message.Prop{prop("", "")}, Content: []message.Item{item("data", "")}}},
		{"binary and unicode", message.Input{Props: []message.Prop{prop("név", "ünïcode")}, Content: []message.Item{item("data", "\x00\x01\xff"), item("q", "x")}}},
		{"string past the old int16 limit", message.Input{Props: []message.Prop{prop("k", strings.Repeat("v", MaxCount+1))}, Content: []message.Item{}}},
		{"40 KB header", message.Input{Props: []message.Prop{prop("x-big", strings.Repeat("h", 40<<10))}, Content: []message.Item{item(strings.Repeat("k", 40<<10), "v")}}},
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
		{"ok", Response{Code: 200, Message: "OK", Props: []message.Prop{prop("content-type", "application/json")}, Content: []message.Item{item("data", `{"a":1}`)}}},
		{"no content", Response{Code: 204, Props: []message.Prop{}, Content: []message.Item{}}},
		{"error", Response{Code: 424, Message: "ValueError: bad", Props: []message.Prop{}, Content: []message.Item{item("data", "{}")}}},
		{"negative code", Response{Code: -1, Props: []message.Prop{}, Content: []message.Item{}}},
		{"streaming", Response{Code: 200, Props: []message.Prop{prop("request_tracking_id", "7")}, Streaming: true}},
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
	ins := []*message.Input{
		{Props: []message.Prop{prop("content-type", "text/plain")}, Content: []message.Item{item("data", "zero")}},
		{Props: []message.Prop{}, Content: []message.Item{item("data", "one"), item("q", "1")}},
	}
	frame, err := AppendBatch(nil, ins)
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewReader(bytes.NewReader(frame), 0).ReadRequest()
	if err != nil {
		t.Fatal(err)
	}
	want := message.Input{
		Props: []message.Prop{prop("batch_size", "2"), prop("batch_000.content-type", "text/plain")},
		Content: []message.Item{
			item("batch_000.data", "zero"), item("batch_001.data", "one"), item("batch_001.q", "1"),
		},
	}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("batch frame reads as %+v, want %+v", *got, want)
	}
}

// TestAppendWith checks the properties a front-end adds to a request or a
// batch without copying it.
func TestAppendWith(t *testing.T) {
	extra := []message.Prop{prop("handler", "handle")}
	in := &message.Input{Props: []message.Prop{prop("a", "1")}, Content: []message.Item{item("data", "x")}}
	frame, err := AppendRequestWith(nil, in, extra)
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewReader(bytes.NewReader(frame), 0).ReadRequest()
	want := message.Input{Props: []message.Prop{prop("a", "1"), prop("handler", "handle")}, Content: in.Content}
	if err != nil || !reflect.DeepEqual(*got, want) {
		t.Errorf("request with extra properties reads as %+v, %v", got, err)
	}
	frame, err = AppendBatchWith(nil, []*message.Input{in, in}, extra)
	if err != nil {
		t.Fatal(err)
	}
	got, err = NewReader(bytes.NewReader(frame), 0).ReadRequest()
	wantProps := []message.Prop{prop("batch_size", "2"), prop("handler", "handle"), prop("batch_000.a", "1"), prop("batch_001.a", "1")}
	if err != nil || !reflect.DeepEqual(got.Props, wantProps) || len(got.Content) != 2 {
		t.Errorf("batch with extra properties reads as %+v, %v", got, err)
	}
}

func TestAppendErrors(t *testing.T) {
	many := make([]message.Prop, MaxCount+1)
	tests := []struct {
		name   string
		encode func([]byte) ([]byte, error)
		want   error
	}{
		{"too many props", func(b []byte) ([]byte, error) {
			return AppendRequest(b, &message.Input{Props: many})
		}, ErrTooMany},
		{"too many items", func(b []byte) ([]byte, error) {
			return AppendResponse(b, &Response{Code: 200, Content: make([]message.Item, MaxCount+1)})
		}, ErrTooMany},
		{"batch props add up", func(b []byte) ([]byte, error) {
			return AppendBatch(b, []*message.Input{{Props: many[:MaxCount]}})
		}, ErrTooMany},
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
// hand from the layout in docs/protocol.md: strings carry an int32 length (as
// DJL Serving's CodecUtils.writeUtf8 and djl_python's outputs.write_utf8 have
// since 0.28), counts and the status code an int16.
func TestGoldenBytes(t *testing.T) {
	request := "" +
		"0001" + // int16 nProps = 1
		"00000002" + "6964" + // key: int32 len 2, "id"
		"00000001" + "37" + // value: int32 len 1, "7"
		"0001" + // int16 nContent = 1
		"00000004" + "64617461" + // key: int32 len 4, "data"
		"00000003" + "616263" // value: int32 len 3, "abc"
	response := "" +
		"00c8" + // int16 code = 200
		"00000002" + "4f4b" + // message: int32 len 2, "OK"
		"0001" + // int16 nProps = 1
		"00000001" + "78" + // key "x"
		"00000000" + // value "" (empty, not null)
		"0001" + // int16 nContent = 1
		"00000004" + "64617461" + // key "data"
		"00000002" + "6869" // int32 len 2, "hi"
	stream := "" +
		"00c8" + "00000000" + "0000" + // code 200, message "", no props
		"ffff" + // nContent = -1: chunks follow
		"01" + "00000001" + "61" + // chunk "a"
		"00" + "00000000" // clean end
	in := &message.Input{Props: []message.Prop{prop("id", "7")}, Content: []message.Item{item("data", "abc")}}
	resp := &Response{Code: 200, Message: "OK", Props: []message.Prop{prop("x", "")}, Content: []message.Item{item("data", "hi")}}

	t.Run("request", func(t *testing.T) { checkGoldenRequest(t, in, request) })
	t.Run("response", func(t *testing.T) { checkGoldenResponse(t, resp, response) })
	t.Run("stream", func(t *testing.T) {
		got, _ := AppendResponse(nil, &Response{Code: 200, Streaming: true})
		got, _ = AppendChunk(got, []byte("a"), true)
		got, _ = AppendStreamEnd(got, "")
		checkHex(t, got, stream)
	})
}

// TestGoldenBytesLargeHeader checks a request and a response whose header
// value is 40 KB, past the 32767 bytes an int16 length could say.
func TestGoldenBytesLargeHeader(t *testing.T) {
	const size = 40 << 10 // 40960 = 0x0000a000
	value := strings.Repeat("v", size)
	hexValue := strings.Repeat("76", size)
	request := "" +
		"0002" + // int16 nProps = 2
		"00000005" + "782d626967" + // key: int32 len 5, "x-big"
		"0000a000" + hexValue + // value: int32 len 40960, "vvv..."
		"0000000a" + "726571756573745f6964" + // key "request_id"
		"00000001" + "31" + // value "1"
		"0001" + // int16 nContent = 1
		"00000004" + "64617461" + // key "data"
		"00000002" + "7b7d" // int32 len 2, "{}"
	response := "" +
		"00c8" + // int16 code = 200
		"00000002" + "4f4b" + // message "OK"
		"0001" + // int16 nProps = 1
		"00000005" + "782d626967" + // key "x-big"
		"0000a000" + hexValue + // value: int32 len 40960
		"0000" // int16 nContent = 0
	in := &message.Input{
		Props:   []message.Prop{prop("x-big", value), prop("request_id", "1")},
		Content: []message.Item{item("data", "{}")},
	}
	resp := &Response{Code: 200, Message: "OK", Props: []message.Prop{prop("x-big", value)}, Content: []message.Item{}}
	t.Run("request", func(t *testing.T) { checkGoldenRequest(t, in, request) })
	t.Run("response", func(t *testing.T) { checkGoldenResponse(t, resp, response) })
	t.Run("reader cap", func(t *testing.T) {
		_, err := NewReader(bytes.NewReader(mustHex(t, request)), size-1).ReadRequest()
		if !errors.Is(err, ErrTooLarge) {
			t.Errorf("a 40 KB string past a cap of %d: %v, want ErrTooLarge", size-1, err)
		}
	})
}

// checkGoldenRequest checks that in encodes to golden (hex) and golden reads
// back as in.
func checkGoldenRequest(t *testing.T, in *message.Input, golden string) {
	t.Helper()
	got, err := AppendRequest(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	checkHex(t, got, golden)
	back, err := NewReader(bytes.NewReader(mustHex(t, golden)), 0).ReadRequest()
	if err != nil || !reflect.DeepEqual(back, in) {
		t.Errorf("golden request reads back differently: %v", err)
	}
}

// checkGoldenResponse checks that resp encodes to golden (hex) and golden
// reads back as resp.
func checkGoldenResponse(t *testing.T, resp *Response, golden string) {
	t.Helper()
	got, err := AppendResponse(nil, resp)
	if err != nil {
		t.Fatal(err)
	}
	checkHex(t, got, golden)
	back, err := NewReader(bytes.NewReader(mustHex(t, golden)), 0).ReadResponse()
	if err != nil || !reflect.DeepEqual(back, resp) {
		t.Errorf("golden response reads back differently: %v", err)
	}
}

func checkHex(t *testing.T, got []byte, want string) {
	t.Helper()
	if h := hex.EncodeToString(got); h != want {
		t.Errorf("encoded\n%.256s\nwant\n%.256s", h, want)
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

func prop(k, v string) message.Prop { return message.Prop{Key: k, Value: v} }

func item(k, v string) message.Item { return message.Item{Key: k, Value: []byte(v)} }
