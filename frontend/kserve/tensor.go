package kserve

import (
	"encoding/binary"
	"math"
	"strconv"
	"unicode/utf8"
)

// kind is how a datatype's elements read and write as JSON.
type kind uint8

const (
	kindBool kind = iota
	kindInt
	kindUint
	kindFloat
	kindHalf
	kindBytes
)

// dtype is one of the protocol's tensor datatypes.
type dtype struct {
	name string // the protocol's name: FP32
	nd   string // the NDList's (numpy's upper-cased) name: FLOAT32
	size int    // bytes per element; 0 for BYTES (a 4-byte length, then the bytes)
	kind kind
	bits int // of an integer or a float
}

// dtypes are the datatypes the dialect carries: api.Datatypes. BF16 is not
// among them: numpy, which handlers read tensors with, has no bfloat16.
var dtypes = [...]dtype{
	{"BOOL", "BOOL", 1, kindBool, 8},
	{"UINT8", "UINT8", 1, kindUint, 8},
	{"UINT16", "UINT16", 2, kindUint, 16},
	{"UINT32", "UINT32", 4, kindUint, 32},
	{"UINT64", "UINT64", 8, kindUint, 64},
	{"INT8", "INT8", 1, kindInt, 8},
	{"INT16", "INT16", 2, kindInt, 16},
	{"INT32", "INT32", 4, kindInt, 32},
	{"INT64", "INT64", 8, kindInt, 64},
	{"FP16", "FLOAT16", 2, kindHalf, 16},
	{"FP32", "FLOAT32", 4, kindFloat, 32},
	{"FP64", "FLOAT64", 8, kindFloat, 64},
	{"BYTES", "STRING", 0, kindBytes, 0},
}

// typeNamed returns the datatype of a protocol name.
func typeNamed(name string) (*dtype, bool) {
	for i := range dtypes {
		if dtypes[i].name == name {
			return &dtypes[i], true
		}
	}
	return nil, false
}

// typeOfND returns the datatype of an NDList array's type name: numpy's
// (FLOAT32, BOOL, ...) or DJL Java's (BOOLEAN).
func typeOfND(name string) (*dtype, bool) {
	if name == "BOOLEAN" {
		name = "BOOL"
	}
	for i := range dtypes {
		if dtypes[i].nd == name {
			return &dtypes[i], true
		}
	}
	return nil, false
}

// maxElements bounds a tensor's shape, so that a shape's product neither
// overflows nor sizes a buffer before the data are counted.
const maxElements = 1 << 40

// elements returns the number of elements of shape, or false when a
// dimension is negative or the product is beyond maxElements.
func elements(shape []int64) (int64, bool) {
	n := int64(1)
	for _, d := range shape {
		if d < 0 || d > maxElements {
			return 0, false
		}
		if n *= d; n > maxElements {
			return 0, false
		}
	}
	return n, true
}

// appendElement appends one JSON element (a number's or a literal's text,
// or a string's unescaped bytes when str is set) as a little-endian
// element of t; false when it is not one.
func appendElement(buf []byte, t *dtype, tok []byte, str bool) ([]byte, bool) {
	if str != (t.kind == kindBytes) {
		return buf, false
	}
	switch t.kind {
	case kindBytes:
		buf = binary.LittleEndian.AppendUint32(buf, uint32(len(tok)))
		return append(buf, tok...), true
	case kindBool:
		switch string(tok) {
		case "true":
			return append(buf, 1), true
		case "false":
			return append(buf, 0), true
		}
		return buf, false
	case kindInt:
		v, err := strconv.ParseInt(string(tok), 10, t.bits)
		return appendBits(buf, uint64(v), t.size), err == nil
	case kindUint:
		v, err := strconv.ParseUint(string(tok), 10, t.bits)
		return appendBits(buf, v, t.size), err == nil
	case kindHalf:
		v, err := strconv.ParseFloat(string(tok), 32)
		return binary.LittleEndian.AppendUint16(buf, halfBits(float32(v))), err == nil
	}
	v, err := strconv.ParseFloat(string(tok), t.bits)
	if t.bits == 32 {
		return binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(v))), err == nil
	}
	return binary.LittleEndian.AppendUint64(buf, math.Float64bits(v)), err == nil
}

// appendBits appends the low size bytes of v, little-endian.
func appendBits(buf []byte, v uint64, size int) []byte {
	for i := 0; i < size; i++ {
		buf = append(buf, byte(v>>(8*i)))
	}
	return buf
}

// readBits reads a little-endian element of size bytes.
func readBits(p []byte, size int) uint64 {
	var v uint64
	for i := size - 1; i >= 0; i-- {
		v = v<<8 | uint64(p[i])
	}
	return v
}

// appendJSONElement appends one little-endian element p of t as JSON. A
// float that JSON cannot hold (NaN, an infinity) is written as null.
func appendJSONElement(b []byte, t *dtype, p []byte) []byte {
	v := readBits(p, t.size)
	switch t.kind {
	case kindBool:
		return strconv.AppendBool(b, v != 0)
	case kindInt:
		shift := 64 - t.bits
		return strconv.AppendInt(b, int64(v<<shift)>>shift, 10)
	case kindUint:
		return strconv.AppendUint(b, v, 10)
	case kindHalf:
		return appendFloat(b, float64(halfFloat(uint16(v))), 32)
	}
	if t.bits == 32 {
		return appendFloat(b, float64(math.Float32frombits(uint32(v))), 32)
	}
	return appendFloat(b, math.Float64frombits(v), 64)
}

func appendFloat(b []byte, f float64, bits int) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, f, 'g', -1, bits)
}

// halfBits rounds f to the nearest IEEE 754 half-precision value (ties to
// even), overflowing to infinity.
func halfBits(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	raw := int32(b >> 23 & 0xff)
	mant := b & 0x7fffff
	exp := raw - 127 + 15
	switch {
	case raw == 0xff && mant != 0:
		return sign | 0x7e00 // NaN
	case raw == 0xff || exp >= 0x1f:
		return sign | 0x7c00 // infinity
	case exp <= 0: // a subnormal half, or zero
		if exp < -10 {
			return sign
		}
		return sign | uint16(roundShift(mant|0x800000, uint32(14-exp)))
	}
	// A carry out of the mantissa rounds up into the exponent, as it must.
	return sign | uint16(roundShift(uint32(exp)<<23|mant, 13))
}

// roundShift is v >> shift rounded to nearest, ties to even.
func roundShift(v, shift uint32) uint32 {
	q, rem, half := v>>shift, v&(1<<shift-1), uint32(1)<<(shift-1)
	if rem > half || rem == half && q&1 == 1 {
		q++
	}
	return q
}

// halfFloat widens a half-precision value.
func halfFloat(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0:
		v := float32(mant) / (1 << 24)
		if sign != 0 {
			v = -v
		}
		return v
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+127-15)<<23 | mant<<13)
}

// appendString appends s as a JSON string; bytes that are not UTF-8 become
// U+FFFD.
func appendString[T string | []byte](b []byte, s T) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		b = utf8.AppendRune(b, r) // an invalid byte decodes as RuneError
		i += n
	}
	return append(b, '"')
}
