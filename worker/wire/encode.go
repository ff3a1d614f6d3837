package wire

import (
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"

	"github.com/switchyard/switchyard/message"
)

// MaxCount is the largest count of properties or content items that a frame
// can carry: counts travel as int16.
const MaxCount = math.MaxInt16

// MaxString is the longest string in bytes that a frame can carry: string
// lengths travel as int32, as in DJL Serving since 0.28. In practice the
// reader's per-item cap (the request size limit) bounds them first.
const MaxString = math.MaxInt32

// Chunk markers of a streamed response.
const (
	markerEnd  = 0
	markerMore = 1
)

// BatchSizeKey is the property that marks a request as a dynamic batch.
const BatchSizeKey = "batch_size"

// AppendRequest appends in as one request frame to dst. On error it returns
// dst unchanged.
func AppendRequest(dst []byte, in *message.Input) ([]byte, error) {
	return appendRequest(dst, in, nil, nil)
}

// AppendRequestWith appends in as one request frame to dst, with the
// properties extra after in's own (the front-end's additions, without
// copying in). On error it returns dst unchanged.
func AppendRequestWith(dst []byte, in *message.Input, extra []message.Prop) ([]byte, error) {
	return appendRequest(dst, in, extra, nil)
}

func appendRequest(dst []byte, in *message.Input, extra []message.Prop, sp *splicer) ([]byte, error) {
	out := slices.Grow(dst, inputSize(in, 0, sp)+propsSize(extra))
	out, err := appendCount(out, len(in.Props)+len(extra))
	for _, props := range [][]message.Prop{in.Props, extra} {
		for i := 0; i < len(props) && err == nil; i++ {
			out, err = appendPair(out, "", props[i])
		}
	}
	if err == nil {
		out, err = appendItems(out, in.Content, "", sp)
	}
	if err != nil {
		return dst, err
	}
	return out, nil
}

// RequestBuffers returns in as one request frame, the bytes
// AppendRequestWith writes, in pieces for net.Buffers.WriteTo (one writev):
// a content item of largeItem bytes or more is not copied into the frame
// but referenced where it lies, so that a large body is not duplicated on
// its way to the socket. The pieces share in's content, which must not
// change until they are written.
func RequestBuffers(in *message.Input, extra []message.Prop) (net.Buffers, error) {
	sp := &splicer{}
	frame, err := appendRequest(nil, in, extra, sp)
	if err != nil {
		return nil, err
	}
	return sp.buffers(frame), nil
}

// BatchBuffers is RequestBuffers for a dynamic batch: the bytes
// AppendBatchWith writes, in pieces.
func BatchBuffers(ins []*message.Input, extra []message.Prop) (net.Buffers, error) {
	sp := &splicer{}
	frame, err := appendBatch(nil, ins, extra, sp)
	if err != nil {
		return nil, err
	}
	return sp.buffers(frame), nil
}

// largeItem is the size from which RequestBuffers and BatchBuffers
// reference a content item instead of copying it: below it, one copy costs
// less than one more piece to write.
const largeItem = 64 << 10

// splicer collects the content items a frame leaves out: each belongs right
// after the first at bytes of the frame.
type splicer struct {
	cuts []cut
}

type cut struct {
	at    int
	value []byte
}

// large reports whether it is an item the splicer takes; a nil splicer
// takes none.
func (sp *splicer) large(it message.Item) bool {
	return sp != nil && len(it.Value) >= largeItem
}

// buffers returns frame with the collected items put back in between.
func (sp *splicer) buffers(frame []byte) net.Buffers {
	bufs := make(net.Buffers, 0, 2*len(sp.cuts)+1)
	prev := 0
	for _, c := range sp.cuts {
		bufs = append(bufs, frame[prev:c.at], c.value)
		prev = c.at
	}
	return append(bufs, frame[prev:])
}

// AppendBatch appends ins as one dynamic-batch request frame to dst: the
// property batch_size=N, then every request's properties and content with
// their keys prefixed batch_%03d. (batch_000.data). On error it returns dst
// unchanged.
func AppendBatch(dst []byte, ins []*message.Input) ([]byte, error) {
	return appendBatch(dst, ins, nil, nil)
}

// AppendBatchWith is AppendBatch with the batch's own properties extra
// (unprefixed, after batch_size) before the requests'.
func AppendBatchWith(dst []byte, ins []*message.Input, extra []message.Prop) ([]byte, error) {
	return appendBatch(dst, ins, extra, nil)
}

func appendBatch(dst []byte, ins []*message.Input, extra []message.Prop, sp *splicer) ([]byte, error) {
	n := 4 + len(BatchSizeKey) + 4 + 3 + propsSize(extra)
	for i, in := range ins {
		n += inputSize(in, len(batchPrefix(i)), sp)
	}
	out := slices.Grow(dst, n)
	out, err := appendBatchProps(out, ins, extra)
	if err == nil {
		out, err = appendBatchItems(out, ins, sp)
	}
	if err != nil {
		return dst, err
	}
	return out, nil
}

// AppendResponse appends r as one response frame to dst. When r.Streaming is
// set the content count is -1, r.Content is not written, and the chunks must
// follow (AppendChunk, AppendStreamEnd). On error it returns dst unchanged.
func AppendResponse(dst []byte, r *Response) ([]byte, error) {
	if r.Code < math.MinInt16 || r.Code > math.MaxInt16 {
		return dst, fmt.Errorf("%w: %d", ErrBadCode, r.Code)
	}
	out := binary.BigEndian.AppendUint16(dst, uint16(int16(r.Code)))
	out, err := appendString(out, "", r.Message)
	if err == nil {
		out, err = appendProps(out, r.Props, "")
	}
	if err == nil && r.Streaming {
		return binary.BigEndian.AppendUint16(out, 0xffff), nil
	}
	if err == nil {
		out, err = appendItems(out, r.Content, "", nil)
	}
	if err != nil {
		return dst, err
	}
	return out, nil
}

// AppendChunk appends one chunk of a streamed response to dst. With more set
// it is a piece of the body; without, it ends the stream, and a non-empty data
// is the error text the stream ends with.
func AppendChunk(dst, data []byte, more bool) ([]byte, error) {
	if len(data) > math.MaxInt32 {
		return dst, fmt.Errorf("%w: chunk of %d bytes", ErrTooLarge, len(data))
	}
	marker := byte(markerEnd)
	if more {
		marker = markerMore
	}
	dst = append(dst, marker)
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(data)))
	return append(dst, data...), nil
}

// AppendStreamEnd appends the end of a streamed response to dst: a clean end
// when errText is empty, an error end carrying errText otherwise.
func AppendStreamEnd(dst []byte, errText string) ([]byte, error) {
	return AppendChunk(dst, []byte(errText), false)
}

func appendProps(dst []byte, props []message.Prop, prefix string) ([]byte, error) {
	dst, err := appendCount(dst, len(props))
	for i := 0; i < len(props) && err == nil; i++ {
		dst, err = appendPair(dst, prefix, props[i])
	}
	return dst, err
}

func appendItems(dst []byte, items []message.Item, prefix string, sp *splicer) ([]byte, error) {
	dst, err := appendCount(dst, len(items))
	for i := 0; i < len(items) && err == nil; i++ {
		dst, err = appendItem(dst, prefix, items[i], sp)
	}
	return dst, err
}

func appendPair(dst []byte, prefix string, p message.Prop) ([]byte, error) {
	dst, err := appendString(dst, prefix, p.Key)
	if err != nil {
		return dst, err
	}
	return appendString(dst, "", p.Value)
}

// appendItem appends one content item; when sp takes it, its value is left
// for sp to put back.
func appendItem(dst []byte, prefix string, it message.Item, sp *splicer) ([]byte, error) {
	if len(it.Value) > math.MaxInt32 {
		return dst, fmt.Errorf("%w: content %q of %d bytes", ErrTooLarge, it.Key, len(it.Value))
	}
	dst, err := appendString(dst, prefix, it.Key)
	if err != nil {
		return dst, err
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(it.Value)))
	if sp.large(it) {
		sp.cuts = append(sp.cuts, cut{at: len(dst), value: it.Value})
		return dst, nil
	}
	return append(dst, it.Value...), nil
}

func appendCount(dst []byte, n int) ([]byte, error) {
	if n > MaxCount {
		return dst, fmt.Errorf("%w: %d", ErrTooMany, n)
	}
	return binary.BigEndian.AppendUint16(dst, uint16(n)), nil
}

// appendString writes prefix+s as one string without building it.
func appendString(dst []byte, prefix, s string) ([]byte, error) {
	n := len(prefix) + len(s)
	if n > MaxString {
		return dst, fmt.Errorf("%w: %d bytes in %.32q", ErrTooLong, n, prefix+s)
	}
	dst = binary.BigEndian.AppendUint32(dst, uint32(n))
	dst = append(dst, prefix...)
	return append(dst, s...), nil
}

// propsSize is the encoded size of props, without their count.
func propsSize(props []message.Prop) int {
	n := 0
	for _, p := range props {
		n += 8 + len(p.Key) + len(p.Value)
	}
	return n
}

// inputSize is the encoded size of in with every key prefixed by
// prefixLen bytes, without the items sp takes, so that a frame is
// allocated once.
func inputSize(in *message.Input, prefixLen int, sp *splicer) int {
	n := 4
	for _, p := range in.Props {
		n += 8 + prefixLen + len(p.Key) + len(p.Value)
	}
	for _, it := range in.Content {
		n += 8 + prefixLen + len(it.Key)
		if !sp.large(it) {
			n += len(it.Value)
		}
	}
	return n
}

// prefixes holds the key prefixes of the first batch items, so that a
// batch costs no formatting.
var prefixes = func() []string {
	p := make([]string, 256)
	for i := range p {
		p[i] = fmt.Sprintf("batch_%03d.", i)
	}
	return p
}()

func batchPrefix(i int) string {
	if i < len(prefixes) {
		return prefixes[i]
	}
	return fmt.Sprintf("batch_%03d.", i)
}

func appendBatchProps(dst []byte, ins []*message.Input, extra []message.Prop) ([]byte, error) {
	n := 1 + len(extra)
	for _, in := range ins {
		n += len(in.Props)
	}
	dst, err := appendCount(dst, n)
	if err == nil {
		dst, err = appendPair(dst, "", message.Prop{Key: BatchSizeKey, Value: strconv.Itoa(len(ins))})
	}
	for i := 0; i < len(extra) && err == nil; i++ {
		dst, err = appendPair(dst, "", extra[i])
	}
	for i := 0; i < len(ins) && err == nil; i++ {
		prefix := batchPrefix(i)
		for _, p := range ins[i].Props {
			if dst, err = appendPair(dst, prefix, p); err != nil {
				break
			}
		}
	}
	return dst, err
}

func appendBatchItems(dst []byte, ins []*message.Input, sp *splicer) ([]byte, error) {
	n := 0
	for _, in := range ins {
		n += len(in.Content)
	}
	dst, err := appendCount(dst, n)
	for i := 0; i < len(ins) && err == nil; i++ {
		prefix := batchPrefix(i)
		for _, it := range ins[i].Content {
			if dst, err = appendItem(dst, prefix, it, sp); err != nil {
				break
			}
		}
	}
	return dst, err
}
