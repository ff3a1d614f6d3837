package wire

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/switchyard/switchyard/message"
)

// DefaultMaxItem is the default cap on one string, content item or chunk.
const DefaultMaxItem = 64 << 20

// readStep is the most a reader allocates ahead of the bytes that arrived.
const readStep = 1 << 20

// readerBuffer is the size of the bufio.Reader NewReader wraps around a
// plain io.Reader.
const readerBuffer = 64 << 10

// Reader decodes frames from a byte stream. It is not safe for concurrent use.
type Reader struct {
	br      *bufio.Reader
	maxItem int
	scratch [4]byte
}

// NewReader returns a Reader over r (used as it is when it is already a
// *bufio.Reader) that refuses any item longer than maxItem bytes; maxItem <= 0
// means DefaultMaxItem.
func NewReader(r io.Reader, maxItem int) *Reader {
	if maxItem <= 0 {
		maxItem = DefaultMaxItem
	}
	br, ok := r.(*bufio.Reader)
	if !ok {
		br = bufio.NewReaderSize(r, readerBuffer)
	}
	return &Reader{br: br, maxItem: maxItem}
}

// MaxItem returns the reader's cap on one item.
func (r *Reader) MaxItem() int { return r.maxItem }

// ReadRequest reads one request frame. It returns io.EOF, unwrapped, when the
// input ends cleanly before the frame starts.
func (r *Reader) ReadRequest() (*message.Input, error) {
	n, err := r.int16()
	if err != nil {
		return nil, atStart(err)
	}
	in := &message.Input{}
	if in.Props, err = r.propsN(n); err != nil {
		return nil, err
	}
	nItems, err := r.count()
	if err != nil {
		return nil, err
	}
	if in.Content, err = r.itemsN(nItems); err != nil {
		return nil, err
	}
	return in, nil
}

// ReadResponse reads one response frame. When the reply is streamed
// (Streaming set) the caller reads its chunks with ReadChunk. It returns
// io.EOF, unwrapped, when the input ends cleanly before the frame starts.
func (r *Reader) ReadResponse() (*Response, error) {
	code, err := r.int16()
	if err != nil {
		return nil, atStart(err)
	}
	resp := &Response{Code: int(code)}
	if resp.Message, err = r.str(); err != nil {
		return nil, err
	}
	if resp.Props, err = r.props(); err != nil {
		return nil, err
	}
	return r.content(resp)
}

// ReadChunk reads one chunk of a streamed response. more is true for a piece
// of the body; false for the end, when a non-empty data is the error text
// the stream ended with.
func (r *Reader) ReadChunk() (data []byte, more bool, err error) {
	b, err := r.br.ReadByte()
	if err != nil {
		return nil, false, midFrame(err)
	}
	if b != markerMore && b != markerEnd {
		return nil, false, fmt.Errorf("%w: chunk marker %d", ErrMalformed, b)
	}
	data, err = r.bytes()
	if err != nil {
		return nil, false, err
	}
	return data, b == markerMore, nil
}

func (r *Reader) content(resp *Response) (*Response, error) {
	n, err := r.int16()
	if err != nil {
		return nil, midFrame(err)
	}
	if n == -1 {
		resp.Streaming = true
		return resp, nil
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: content count %d", ErrMalformed, n)
	}
	if resp.Content, err = r.itemsN(int(n)); err != nil {
		return nil, err
	}
	return resp, nil
}

func (r *Reader) props() ([]message.Prop, error) {
	n, err := r.int16()
	if err != nil {
		return nil, midFrame(err)
	}
	return r.propsN(n)
}

func (r *Reader) propsN(n int16) ([]message.Prop, error) {
	if n < 0 {
		return nil, fmt.Errorf("%w: property count %d", ErrMalformed, n)
	}
	props := make([]message.Prop, 0, min(int(n), 64))
	for range n {
		k, err := r.str()
		if err != nil {
			return nil, err
		}
		v, err := r.str()
		if err != nil {
			return nil, err
		}
		props = append(props, message.Prop{Key: k, Value: v})
	}
	return props, nil
}

func (r *Reader) count() (int, error) {
	n, err := r.int16()
	if err != nil {
		return 0, midFrame(err)
	}
	if n < 0 {
		return 0, fmt.Errorf("%w: content count %d", ErrMalformed, n)
	}
	return int(n), nil
}

func (r *Reader) itemsN(n int) ([]message.Item, error) {
	items := make([]message.Item, 0, min(n, 64))
	for range n {
		k, err := r.str()
		if err != nil {
			return nil, err
		}
		v, err := r.bytes()
		if err != nil {
			return nil, err
		}
		items = append(items, message.Item{Key: k, Value: v})
	}
	return items, nil
}

// str reads an int32-length string; a null string (-1) reads as "". Its
// length is checked against the reader's cap like any item's.
func (r *Reader) str() (string, error) {
	n, err := r.int32()
	if err != nil {
		return "", midFrame(err)
	}
	if n < -1 {
		return "", fmt.Errorf("%w: string length %d", ErrMalformed, n)
	}
	if n <= 0 {
		return "", nil
	}
	b, err := r.readN(int(n))
	return string(b), err
}

// bytes reads an int32-length byte string.
func (r *Reader) bytes() ([]byte, error) {
	n, err := r.int32()
	if err != nil {
		return nil, midFrame(err)
	}
	if n < 0 {
		return nil, fmt.Errorf("%w: item length %d", ErrMalformed, n)
	}
	return r.readN(int(n))
}

// readN reads n bytes, refusing more than the cap. It starts with a buffer
// of at most readStep bytes and doubles it each time it is full, so a
// length that claims more than the peer sends costs at most twice what
// arrived, and a large item is copied a few times (log2(n/readStep)), not
// once per step.
func (r *Reader) readN(n int) ([]byte, error) {
	if n > r.maxItem {
		return nil, fmt.Errorf("%w: %d bytes, cap %d", ErrTooLarge, n, r.maxItem)
	}
	buf := make([]byte, 0, min(n, readStep))
	for len(buf) < n {
		if len(buf) == cap(buf) {
			buf = append(make([]byte, 0, min(n, 2*cap(buf))), buf...)
		}
		got, err := io.ReadFull(r.br, buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+got]
		if err != nil {
			return nil, midFrame(err)
		}
	}
	return buf, nil
}

func (r *Reader) int32() (int32, error) {
	if _, err := io.ReadFull(r.br, r.scratch[:4]); err != nil {
		return 0, err
	}
	return int32(binary.BigEndian.Uint32(r.scratch[:4])), nil
}

func (r *Reader) int16() (int16, error) {
	if _, err := io.ReadFull(r.br, r.scratch[:2]); err != nil {
		return 0, err
	}
	return int16(binary.BigEndian.Uint16(r.scratch[:2])), nil
}

// atStart passes a clean io.EOF through and treats anything else as a
// failure inside the frame.
func atStart(err error) error {
	if err == io.EOF {
		return io.EOF
	}
	return midFrame(err)
}

// midFrame turns an end of input inside a frame into ErrTruncated.
func midFrame(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %w", ErrTruncated, io.ErrUnexpectedEOF)
	}
	return err
}
