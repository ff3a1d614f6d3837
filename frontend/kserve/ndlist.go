package kserve

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// The worker receives an inference request's tensors, and answers its
// own, as DJL's NDList: what DJL Serving's KServe plugin hands its Python
// engine, which handlers read with Input.get_as_numpy(). Big-endian: an
// int32 count, then per array the short string "NDAR" (an int16 length and
// the bytes), int32 version 3, a byte 1 and the array's name as a short
// string (0: no name), the sparse format "default", the type name
// (FLOAT32, ..., STRING for BYTES), an int32 rank and that many int64
// dimensions, an int32 layout length and that many 2-byte layout
// characters, a byte order character ('<'), an int32 data length and the
// data. The data are little-endian elements; a STRING array's are the
// binary tensor extension's BYTES elements (a 4-byte little-endian length,
// then the bytes).
const (
	ndMagic   = "NDAR"
	ndVersion = 3
)

// errNDList is an answer that is not a well-formed NDList.
var errNDList = errors.New("not an NDList")

// appendHeader appends one array's header, up to and without its data
// length.
func appendHeader(buf []byte, name string, t *dtype, shape []int64) []byte {
	buf = appendShort(buf, ndMagic)
	buf = binary.BigEndian.AppendUint32(buf, ndVersion)
	buf = append(buf, 1)
	buf = appendShort(buf, name)
	buf = appendShort(buf, "default")
	buf = appendShort(buf, t.nd)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(shape)))
	for _, d := range shape {
		buf = binary.BigEndian.AppendUint64(buf, uint64(d))
	}
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(shape)))
	for range shape {
		buf = append(buf, 0, '?')
	}
	return append(buf, '<')
}

// appendShort appends a short string: an int16 length, then s.
func appendShort(buf []byte, s string) []byte {
	buf = binary.BigEndian.AppendUint16(buf, uint16(len(s)))
	return append(buf, s...)
}

// ndArray is one array of an answer: its data are little-endian elements
// (BYTES: length-prefixed), within the answer's body.
type ndArray struct {
	name  string // "" when the array has none
	t     *dtype
	shape []int64
	count int64
	data  []byte
}

// ndReader reads an NDList's big-endian fields.
type ndReader struct {
	b      []byte
	err    error
	dims   []int64 // the shapes' buffer
	intern namer   // the known names' strings, or nil
}

func (r *ndReader) take(n int) []byte {
	if r.err != nil || n < 0 || n > len(r.b) {
		r.err = fmt.Errorf("%w: it ends early", errNDList)
		return nil
	}
	p := r.b[:n]
	r.b = r.b[n:]
	return p
}

func (r *ndReader) u8() byte {
	if p := r.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (r *ndReader) u16() int {
	if p := r.take(2); p != nil {
		return int(binary.BigEndian.Uint16(p))
	}
	return 0
}

func (r *ndReader) u32() int {
	if p := r.take(4); p != nil {
		return int(binary.BigEndian.Uint32(p))
	}
	return 0
}

func (r *ndReader) u64() uint64 {
	if p := r.take(8); p != nil {
		return binary.BigEndian.Uint64(p)
	}
	return 0
}

// decodeNDList reads a worker's answer. Data written big-endian ('>') are
// turned little-endian, in a copy.
func decodeNDList(b []byte) ([]ndArray, error) {
	return appendNDList(nil, nil, b, nil)
}

// namer returns the string of a name it knows, else a new one.
type namer interface {
	intern(name []byte) string
}

// appendNDList is decodeNDList into out's buffer, with the arrays' shapes
// in dims' and their names as intern's strings (nil: every name a new
// string).
func appendNDList(out []ndArray, dims []int64, b []byte, intern namer) ([]ndArray, error) {
	r := &ndReader{b: b, dims: dims, intern: intern}
	n := r.u32()
	if r.err == nil && n > 0 && (len(r.b) < 6 || string(r.b[2:6]) != ndMagic) {
		return nil, fmt.Errorf("%w: no %s header", errNDList, ndMagic)
	}
	if r.err == nil && n > len(b)/8 {
		return nil, fmt.Errorf("%w: it claims %d arrays", errNDList, n)
	}
	if out == nil || cap(out) < n {
		out = make([]ndArray, 0, n)
	}
	for i := 0; i < n && r.err == nil; i++ {
		a, err := r.array()
		if err != nil {
			return nil, fmt.Errorf("array %d: %w", i, err)
		}
		out = append(out, a)
	}
	if r.err == nil && len(r.b) > 0 {
		r.err = fmt.Errorf("%w: %d bytes follow its last array", errNDList, len(r.b))
	}
	return out, r.err
}

// array reads one array.
func (r *ndReader) array() (ndArray, error) {
	var a ndArray
	if magic := r.take(r.u16()); r.err == nil && string(magic) != ndMagic {
		return a, fmt.Errorf("%w: no %s magic", errNDList, ndMagic)
	}
	if v := r.u32(); r.err == nil && v != ndVersion {
		return a, fmt.Errorf("%w: version %d, not %d", errNDList, v, ndVersion)
	}
	if r.u8() == 1 {
		name := r.take(r.u16())
		if r.intern != nil {
			a.name = r.intern.intern(name)
		} else {
			a.name = string(name)
		}
	}
	r.take(r.u16()) // sparse format: dense only
	typeName := r.take(r.u16())
	rank := r.u32()
	if r.err == nil && rank > len(r.b)/8 {
		return a, fmt.Errorf("%w: rank %d", errNDList, rank)
	}
	start := len(r.dims)
	for range rank {
		r.dims = append(r.dims, int64(r.u64()))
	}
	a.shape = r.dims[start:len(r.dims):len(r.dims)]
	if a.shape == nil {
		a.shape = []int64{}
	}
	r.take(2 * r.u32()) // layout: not kept
	order := r.u8()
	a.data = r.take(r.u32())
	if r.err != nil {
		return a, r.err
	}
	t, ok := typeOfND(string(typeName))
	if !ok {
		return a, fmt.Errorf("type %s has no datatype of the protocol", typeName)
	}
	a.t = t
	count, ok := elements(a.shape)
	if !ok {
		return a, fmt.Errorf("%w: shape %s", errNDList, shapeText(a.shape))
	}
	a.count = count
	if order == '>' {
		a.data = littleEndian(a.data, t)
	}
	if n, ok := countBinary(a.data, t); !ok || n != count {
		return a, fmt.Errorf("%w: shape %s, which holds %d elements, but %d bytes of %s data", errNDList,
			shapeText(a.shape), count, len(a.data), typeName)
	}
	return a, nil
}

// littleEndian returns a copy of big-endian data with every element (or,
// for BYTES, every length) turned little-endian; what does not parse is
// left for countBinary to refuse.
func littleEndian(data []byte, t *dtype) []byte {
	out := append([]byte(nil), data...)
	if t.size > 1 {
		for i := 0; i+t.size <= len(out); i += t.size {
			for j, k := i, i+t.size-1; j < k; j, k = j+1, k-1 {
				out[j], out[k] = out[k], out[j]
			}
		}
	}
	if t.size == 0 {
		for i := 0; i+4 <= len(out); {
			l := binary.BigEndian.Uint32(out[i:])
			binary.LittleEndian.PutUint32(out[i:], l)
			i += 4 + int(l)
		}
	}
	return out
}
