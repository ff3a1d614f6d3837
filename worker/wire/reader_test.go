package wire

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"testing"
	"testing/iotest"
)

func TestReadResponseErrors(t *testing.T) {
	tests := []struct {
		name  string
		frame string // hex
		max   int
		want  error
	}{
		{"empty input is a clean EOF", "", 0, io.EOF},
		{"one byte", "00", 0, ErrTruncated},
		{"cut in the message", "00c8" + "00000005" + "4f4b", 0, ErrTruncated},
		{"message length below -1", "00c8" + "fffffffe", 0, ErrMalformed},
		{"negative property count", "00c8" + "00000000" + "fff0", 0, ErrMalformed},
		{"content count below -1", "00c8" + "00000000" + "0000" + "fffe", 0, ErrMalformed},
		{"negative item length", "00c8" + "00000000" + "0000" + "0001" + "00000000" + "ffffffff", 0, ErrMalformed},
		{"item over the cap", "00c8" + "00000000" + "0000" + "0001" + "00000000" + "00000011", 16, ErrTooLarge},
		{"string over the cap", "00c8" + "00000020", 16, ErrTooLarge},
		{"item cut short", "00c8" + "00000000" + "0000" + "0001" + "00000000" + "03c00000" + "6869", 0, ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader(mustHex(t, tt.frame)), tt.max).ReadResponse()
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
			if errors.Is(tt.want, ErrTruncated) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Errorf("truncation %v does not wrap io.ErrUnexpectedEOF", err)
			}
		})
	}
}

func TestReadRequestErrors(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		want  error
	}{
		{"empty input is a clean EOF", "", io.EOF},
		{"negative property count", "ffff", ErrMalformed},
		{"negative content count", "0000" + "ffff", ErrMalformed},
		{"cut in a value", "0001" + "00000001" + "6b" + "00000004" + "76", ErrTruncated},
		{"null key reads, then cut", "0001" + "ffffffff", ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := NewReader(bytes.NewReader(mustHex(t, tt.frame)), 0).ReadRequest()
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
		})
	}
}

func TestReadChunkErrors(t *testing.T) {
	tests := []struct {
		name  string
		frame string
		want  error
	}{
		{"nothing", "", ErrTruncated},
		{"unknown marker", "02" + "00000000", ErrMalformed},
		{"negative length", "01" + "80000000", ErrMalformed},
		{"cut in the data", "01" + "00000004" + "6162", ErrTruncated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := NewReader(bytes.NewReader(mustHex(t, tt.frame)), 0).ReadChunk()
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
		})
	}
}

func TestNullStringsReadEmpty(t *testing.T) {
	// code 500, null message, one property with a null key and a null value.
	frame := "01f4" + "ffffffff" + "0001" + "ffffffff" + "ffffffff" + "0000"
	resp, err := NewReader(bytes.NewReader(mustHex(t, frame)), 0).ReadResponse()
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message != "" || len(resp.Props) != 1 || resp.Props[0] != prop("", "") {
		t.Errorf("null strings read as %+v", resp)
	}
}

// TestReadDribble reads a frame that arrives one byte at a time.
func TestReadDribble(t *testing.T) {
	want := &Response{Code: 200, Props: nil, Content: nil}
	want.Props = append(want.Props, prop("k", "v"))
	want.Content = append(want.Content, item("data", string(bytes.Repeat([]byte("z"), 3*readStep+7))))
	frame, err := AppendResponse(nil, want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewReader(iotest.OneByteReader(bytes.NewReader(frame)), 0).ReadResponse()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Content[0].Value, want.Content[0].Value) {
		t.Errorf("the large item came back with %d bytes, want %d", len(got.Content[0].Value), len(want.Content[0].Value))
	}
}

// TestClaimedSizeIsNotAllocated sends an item that claims 60 MiB and carries
// ten bytes: the reader must fail without allocating anything near 60 MiB.
func TestClaimedSizeIsNotAllocated(t *testing.T) {
	frame := mustHex(t, "00c8"+"00000000"+"0000"+"0001"+"00000000"+"03c00000"+"00010203040506070809")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := NewReader(bytes.NewReader(frame), 0).ReadResponse()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTruncated) {
		t.Fatalf("error %v, want ErrTruncated", err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
		t.Errorf("reading a 10-byte item that claims 60 MiB allocated %d bytes", grew)
	}
}

func TestMaxItemDefault(t *testing.T) {
	for _, max := range []int{-1, 0} {
		if got := NewReader(bytes.NewReader(nil), max).MaxItem(); got != DefaultMaxItem {
			t.Errorf("NewReader(_, %d).MaxItem() = %d, want %d", max, got, DefaultMaxItem)
		}
	}
	if got := NewReader(bytes.NewReader(nil), 5).MaxItem(); got != 5 {
		t.Errorf("MaxItem() = %d, want 5", got)
	}
}
