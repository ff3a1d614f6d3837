package wire

import (
	"bytes"
	"errors"
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/message"
)

// TestBuffersMatchAppend checks that the pieces of RequestBuffers and
// BatchBuffers, joined, are the bytes AppendRequest and AppendBatch write,
// and that every large item is one of the pieces, sharing the input's
// memory instead of a copy of it.
func TestBuffersMatchAppend(t *testing.T) {
	big := bytes.Repeat([]byte("b"), largeItem)
	huge := bytes.Repeat([]byte("h"), 3*largeItem+1)
	small := bytes.Repeat([]byte("s"), largeItem-1)
	one := &message.Input{
		Props:   []message.Prop{prop("content-type", "application/octet-stream")},
		Content: []message.Item{{Key: "data", Value: big}, {Key: "q", Value: small}, {Key: "z", Value: huge}},
	}
	two := &message.Input{Props: []message.Prop{}, Content: []message.Item{{Key: "data", Value: small}}}
	tests := []struct {
		name   string
		pieces func() (net.Buffers, error)
		frame  func() ([]byte, error)
		shared [][]byte
	}{
		{"request", func() (net.Buffers, error) { return RequestBuffers(one, nil) },
			func() ([]byte, error) { return AppendRequest(nil, one) }, [][]byte{big, huge}},
		{"small request", func() (net.Buffers, error) { return RequestBuffers(two, nil) },
			func() ([]byte, error) { return AppendRequest(nil, two) }, nil},
		{"batch", func() (net.Buffers, error) { return BatchBuffers([]*message.Input{one, two, one}, nil) },
			func() ([]byte, error) { return AppendBatch(nil, []*message.Input{one, two, one}) }, [][]byte{big, huge, big, huge}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pieces, err := tt.pieces()
			if err != nil {
				t.Fatal(err)
			}
			want, err := tt.frame()
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.Join(pieces, nil); !bytes.Equal(got, want) {
				t.Fatalf("joined pieces (%d bytes) differ from the frame (%d bytes)", len(got), len(want))
			}
			var shared [][]byte
			for _, p := range pieces {
				if len(p) > 0 && (&p[0] == &big[0] || &p[0] == &huge[0] || &p[0] == &small[0]) {
					shared = append(shared, p)
				}
			}
			if len(shared) != len(tt.shared) {
				t.Fatalf("%d pieces share an input's memory, want %d", len(shared), len(tt.shared))
			}
			for i, p := range shared {
				if &p[0] != &tt.shared[i][0] || len(p) != len(tt.shared[i]) {
					t.Errorf("piece %d is not the input's large item %d", i, i)
				}
			}
		})
	}
}

// TestBuffersWriteTo sends pieces through a real socket pair with one
// WriteTo (writev) and reads the frame back.
func TestBuffersWriteTo(t *testing.T) {
	in := &message.Input{
		Props:   []message.Prop{prop("k", "v")},
		Content: []message.Item{item("data", strings.Repeat("x", 5*largeItem)), item("q", "1")},
	}
	pieces, err := RequestBuffers(in, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	go func() { _, _ = pieces.WriteTo(a) }()
	got, err := NewReader(b, 0).ReadRequest()
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Content) != 2 || !bytes.Equal(got.Content[0].Value, in.Content[0].Value) || string(got.Content[1].Value) != "1" {
		t.Errorf("read back %d items", len(got.Content))
	}
}

func TestBuffersErrors(t *testing.T) {
	many := &message.Input{Props: make([]message.Prop, MaxCount+1)}
	if _, err := RequestBuffers(many, nil); !errors.Is(err, ErrTooMany) {
		t.Errorf("RequestBuffers: error %v, want ErrTooMany", err)
	}
	if _, err := BatchBuffers([]*message.Input{many}, nil); !errors.Is(err, ErrTooMany) {
		t.Errorf("BatchBuffers: error %v, want ErrTooMany", err)
	}
}

// TestLargeItemAllocation reads a 16 MiB item: the buffer doubles from
// readStep, so reading it allocates less than three times its size, where
// growing it step by step allocated many times that.
func TestLargeItemAllocation(t *testing.T) {
	resp := &Response{Code: 200, Content: []message.Item{item("data", strings.Repeat("y", 16<<20))}}
	frame, err := AppendResponse(nil, resp)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := NewReader(bytes.NewReader(frame), 0).ReadResponse()
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Body()) != 16<<20 {
		t.Fatalf("read %d bytes", len(got.Body()))
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 3*16<<20 {
		t.Errorf("reading a 16 MiB item allocated %d bytes", grew)
	}
}
