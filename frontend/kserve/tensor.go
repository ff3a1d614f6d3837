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
		v, err := parseFloat(tok, 32)
		return binary.LittleEndian.AppendUint16(buf, halfBits(float32(v))), err == nil
	}
	v, err := parseFloat(tok, t.bits)
	if t.bits == 32 {
		return binary.LittleEndian.AppendUint32(buf, math.Float32bits(float32(v))), err == nil
	}
	return binary.LittleEndian.AppendUint64(buf, math.Float64bits(v)), err == nil
}

// parseFloat is strconv.ParseFloat, quicker on the common decimal: at
// most 7 significant digits (15 for 64 bits) and a power of ten exact in
// the float's precision, which one multiplication or division by that
// power rounds correctly (Clinger's fast path, strconv's own).
func parseFloat(tok []byte, bits int) (float64, error) {
	if v, ok := decimalFloat(tok, bits); ok {
		return v, nil
	}
	return strconv.ParseFloat(string(tok), bits)
}

// float32Pow10 and float64Pow10 are the powers of ten each float holds
// exactly.
var (
	float32Pow10 = [...]float32{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10}
	float64Pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
		1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}
)

// decimalFloat reads a JSON number of decimalFloat's kind (see
// parseFloat); false for any other text.
func decimalFloat(tok []byte, bits int) (float64, bool) {
	maxDigits := 7
	if bits == 64 {
		maxDigits = 15
	}
	i, neg := 0, len(tok) > 0 && tok[0] == '-'
	if neg {
		i++
	}
	var mant uint64
	nd, exp, sawDigit, sawDot := 0, 0, false, false
	for ; i < len(tok); i++ {
		c := tok[i]
		switch {
		case '0' <= c && c <= '9':
			sawDigit = true
			if c == '0' && nd == 0 { // a leading zero
				if sawDot {
					exp--
				}
				continue
			}
			if nd++; nd > maxDigits {
				return 0, false
			}
			mant = mant*10 + uint64(c-'0')
			if sawDot {
				exp--
			}
			continue
		case c == '.' && !sawDot && sawDigit:
			sawDot = true
			continue
		}
		break
	}
	if !sawDigit || i < len(tok) && tok[i] != 'e' && tok[i] != 'E' || tok[i-1] == '.' {
		return 0, false
	}
	if i < len(tok) { // the exponent
		i++
		eneg := i < len(tok) && tok[i] == '-'
		if i < len(tok) && (tok[i] == '-' || tok[i] == '+') {
			i++
		}
		if i == len(tok) || len(tok)-i > 3 {
			return 0, false
		}
		e := 0
		for ; i < len(tok); i++ {
			if tok[i] < '0' || tok[i] > '9' {
				return 0, false
			}
			e = e*10 + int(tok[i]-'0')
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	if mant == 0 {
		exp = 0
	}
	if bits == 32 {
		return scaled(mant, exp, float32Pow10[:], neg)
	}
	return scaled(mant, exp, float64Pow10[:], neg)
}

// scaled is ±mant×10^exp in F's arithmetic, one rounding; false when
// pow does not hold 10^|exp|.
func scaled[F float32 | float64](mant uint64, exp int, pow []F, neg bool) (float64, bool) {
	if exp <= -len(pow) || exp >= len(pow) {
		return 0, false
	}
	f := F(mant)
	if exp < 0 {
		f /= pow[-exp]
	} else {
		f *= pow[exp]
	}
	if neg {
		f = -f
	}
	return float64(f), true
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
