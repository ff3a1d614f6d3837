package kserve

import (
	"bytes"
	"encoding/json"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/switchyard/switchyard/api"
)

// The inference request's scanner: one pass over the JSON body that fills
// an inferRequest as encoding/json would, and encodes each input's data
// as its datatype's elements on the way when the datatype came first (as
// clients write it). It reads the common request only: a body it is not
// sure of (a syntax or type error, a duplicate or differently cased
// field name, an escaped or non-ASCII key, a null where a tensor goes,
// deep nesting) makes it give up, and parseRequest reads the body with
// encoding/json instead, whose results and messages are the reference.
// Data whose elements it cannot encode (a bad element, an object) are
// kept as JSON for parseJSONData, which says what is wrong with them.

// The fields of each object, by their index among its names: a key that
// differs from one only in case would still match in encoding/json.
var (
	requestFields = []string{"id", "parameters", "inputs", "outputs"}
	inputFields   = []string{"name", "shape", "datatype", "parameters", "data"}
	outputFields  = []string{"name", "parameters"}
	paramFields   = []string{"binary_data_size", "binary_data", "shared_memory_region"}
)

// maxScanDepth is the nesting the scanner follows in values it skips;
// deeper, encoding/json reads the body (and refuses it beyond its own
// limit).
const maxScanDepth = 64

// maxPooledScratch and maxPooledDims bound the encoded data and the
// dimensions a pooled request keeps.
const (
	maxPooledScratch = 64 << 10
	maxPooledDims    = 256
)

// requests recycles the requests, their inputs, dimensions and encoded
// data, from one inference request to the next.
var requests = sync.Pool{New: func() any { return new(inferRequest) }}

// newRequest returns an empty request, with the buffers of an earlier one.
func newRequest() *inferRequest {
	return requests.Get().(*inferRequest)
}

// release returns r to the pool. Nothing of r may be used after; what
// outlives it (ID, Outputs, Parameters) does not share its buffers.
func (r *inferRequest) release() {
	clear(r.inputBuf[:])
	scratch, dims := r.scratch[:0], r.dims[:0]
	if cap(scratch) > maxPooledScratch {
		scratch = nil
	}
	if cap(dims) > maxPooledDims {
		dims = nil
	}
	*r = inferRequest{scratch: scratch, dims: dims}
	requests.Put(r)
}

// scanner reads a body; every method leaves it past what it read and
// reports false on what it does not take.
type scanner struct {
	b        []byte
	i        int
	declared []api.TensorSpec
}

func (s *scanner) ws() {
	for s.i < len(s.b) && isSpace(s.b[s.i]) {
		s.i++
	}
}

// next skips white space and reports whether c follows, taking it.
func (s *scanner) next(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// scanRequest fills r, which is empty, from body; false: encoding/json
// must read it. An input named as one of declared shares its name.
func scanRequest(r *inferRequest, body []byte, declared []api.TensorSpec) bool {
	s := &scanner{b: body, declared: declared}
	ok := s.object(requestFields, func(f int) bool {
		switch f {
		case 0: // id
			var ok bool
			r.ID, ok = s.stringOrNull()
			return ok
		case 1: // parameters
			start := s.i
			if !s.skip(0) {
				return false
			}
			r.Parameters = body[start:s.i]
			return true
		case 2:
			return s.inputs(r)
		}
		return s.outputs(r)
	})
	s.ws()
	return ok && s.i == len(s.b)
}

// object reads an object: field reads the value of names[f], the other
// keys' values are skipped. A duplicate name, or a key that matches one
// but for case, is not taken.
func (s *scanner) object(names []string, field func(f int) bool) bool {
	seen := 0
	return s.next('{') && s.items('}', func() bool {
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		key, ok := s.key()
		if !ok || !s.next(':') {
			return false
		}
		s.ws()
		switch f := fieldOf(key, names); {
		case f == -1:
			return s.skip(0)
		case f < 0 || seen&(1<<f) != 0:
			return false
		default:
			seen |= 1 << f
			return field(f)
		}
	})
}

// fieldOf returns the index of key among names; -1 for an unknown key,
// -2 for one that matches a name but for case.
func fieldOf(key []byte, names []string) int {
	for i, n := range names {
		switch {
		case string(key) == n:
			return i
		case bytes.EqualFold(key, []byte(n)): // no name is another's but for case
			return -2
		}
	}
	return -1
}

// key reads an object's key: a string of printable ASCII without escapes
// (any other, encoding/json compares).
func (s *scanner) key() ([]byte, bool) {
	start := s.i + 1
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], true
		case c < 0x20 || c == '\\' || c >= utf8.RuneSelf:
			return nil, false
		}
	}
	return nil, false
}

// str reads a string, at its quote: its bytes between the quotes and
// whether they hold escapes or bytes beyond ASCII.
func (s *scanner) str() (raw []byte, plain, ok bool) {
	start := s.i + 1
	plain = true
	for j := start; j < len(s.b); j++ {
		switch c := s.b[j]; {
		case c == '"':
			s.i = j + 1
			return s.b[start:j], plain, true
		case c < 0x20:
			return nil, false, false
		case c == '\\':
			plain = false
			if j+1 >= len(s.b) {
				return nil, false, false
			}
			switch s.b[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				if j+5 >= len(s.b) || !isHex(s.b[j+2]) || !isHex(s.b[j+3]) || !isHex(s.b[j+4]) || !isHex(s.b[j+5]) {
					return nil, false, false
				}
				j += 5
			default:
				return nil, false, false
			}
		case c >= utf8.RuneSelf:
			plain = false
		}
	}
	return nil, false, false
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }

// stringOrNull reads a string as encoding/json decodes it into a Go
// string, or null (the empty string, which the field still is).
func (s *scanner) stringOrNull() (string, bool) {
	if s.i < len(s.b) && s.b[s.i] == 'n' {
		return "", s.literal("null")
	}
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return "", false
	}
	start := s.i
	raw, plain, ok := s.str()
	if !ok {
		return "", false
	}
	if plain || utf8.Valid(raw) && bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), true
	}
	return unquote(s.b[start:s.i]), true
}

// inputName reads an input's name: stringOrNull, as the string of the
// declared input of that name.
func (s *scanner) inputName() (string, bool) {
	if start := s.i; start < len(s.b) && s.b[start] == '"' {
		if raw, plain, ok := s.str(); ok && plain {
			for i := range s.declared {
				if s.declared[i].Name == string(raw) {
					return s.declared[i].Name, true
				}
			}
		}
		s.i = start
	}
	return s.stringOrNull()
}

// unquote decodes a valid JSON string as encoding/json does (invalid
// UTF-8 becomes U+FFFD).
func unquote(tok []byte) string {
	var v string
	_ = json.Unmarshal(tok, &v) // a valid string: cannot fail
	return v
}

// literal takes the literal word at the scanner.
func (s *scanner) literal(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// number takes a JSON number and returns its text.
func (s *scanner) number() ([]byte, bool) {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return nil, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return nil, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return nil, false
		}
		i = j
	}
	tok := b[s.i:i]
	s.i = i
	return tok, true
}

func digits(b []byte, i int) int {
	for i < len(b) && '0' <= b[i] && b[i] <= '9' {
		i++
	}
	return i
}

// skip takes any JSON value, at its first byte.
func (s *scanner) skip(depth int) bool {
	if s.i >= len(s.b) || depth > maxScanDepth {
		return false
	}
	switch c := s.b[s.i]; c {
	case '"':
		_, _, ok := s.str()
		return ok
	case 't':
		return s.literal("true")
	case 'f':
		return s.literal("false")
	case 'n':
		return s.literal("null")
	case '[':
		s.i++
		return s.items(']', func() bool { return s.skip(depth + 1) })
	case '{':
		s.i++
		return s.items('}', func() bool {
			if s.i >= len(s.b) || s.b[s.i] != '"' {
				return false
			}
			if _, _, ok := s.str(); !ok || !s.next(':') {
				return false
			}
			s.ws()
			return s.skip(depth + 1)
		})
	}
	_, ok := s.number()
	return ok
}

// array reads an array, or null (elem is not called: the slice is nil),
// calling elem at each element's first byte.
func (s *scanner) array(null func(), elem func() bool) bool {
	if s.i < len(s.b) && s.b[s.i] == 'n' {
		null()
		return s.literal("null")
	}
	return s.next('[') && s.items(']', elem)
}

// items reads the items of an array or an object, whose opening bracket
// is taken, up to its closing one: item reads one, at its first byte.
func (s *scanner) items(closing byte, item func() bool) bool {
	if s.next(closing) {
		return true
	}
	for {
		s.ws()
		if !item() {
			return false
		}
		if !s.next(',') {
			return s.next(closing)
		}
	}
}

// inputs reads the request's inputs: objects, in r's own buffer.
func (s *scanner) inputs(r *inferRequest) bool {
	r.Inputs = r.inputBuf[:0:len(r.inputBuf)]
	return s.array(func() { r.Inputs = nil }, func() bool {
		r.Inputs = append(r.Inputs, requestInput{})
		return s.input(r, &r.Inputs[len(r.Inputs)-1])
	})
}

// input reads one input object.
func (s *scanner) input(r *inferRequest, in *requestInput) bool {
	return s.object(inputFields, func(f int) bool {
		switch f {
		case 0: // name
			var ok bool
			in.Name, ok = s.inputName()
			return ok
		case 1:
			return s.shape(r, in)
		case 2:
			return s.datatype(in)
		case 3:
			return s.params(&in.Parameters)
		}
		return s.data(r, in)
	})
}

// shape reads an input's shape: integers, into r's dimensions.
func (s *scanner) shape(r *inferRequest, in *requestInput) bool {
	if r.dims == nil {
		r.dims = make([]int64, 0, 8)
	}
	start := len(r.dims)
	ok := s.array(func() { start = -1 }, func() bool {
		tok, ok := s.number()
		if !ok {
			return false
		}
		d, ok := parseInt(tok)
		r.dims = append(r.dims, d)
		return ok
	})
	if ok && start >= 0 {
		in.Shape = r.dims[start:len(r.dims):len(r.dims)]
	}
	return ok
}

// parseInt reads a JSON number as encoding/json decodes it into an int64:
// an integer, without fraction or exponent, that fits.
func parseInt(tok []byte) (int64, bool) {
	v, err := strconv.ParseInt(string(tok), 10, 64)
	return v, err == nil
}

// datatype reads an input's datatype; a protocol name is the table's own
// string.
func (s *scanner) datatype(in *requestInput) bool {
	if s.i < len(s.b) && s.b[s.i] == '"' {
		start := s.i
		raw, plain, ok := s.str()
		if ok && plain {
			for i := range dtypes {
				if string(raw) == dtypes[i].name {
					in.Datatype = dtypes[i].name
					return true
				}
			}
		}
		s.i = start
	}
	var ok bool
	in.Datatype, ok = s.stringOrNull()
	return ok
}

// params reads a tensor's parameters, or null.
func (s *scanner) params(dst **tensorParams) bool {
	if s.i < len(s.b) && s.b[s.i] == 'n' {
		return s.literal("null")
	}
	p := &tensorParams{}
	*dst = p
	return s.object(paramFields, func(f int) bool {
		null := s.i < len(s.b) && s.b[s.i] == 'n'
		if null {
			return s.literal("null")
		}
		switch f {
		case 0: // binary_data_size
			tok, ok := s.number()
			if !ok {
				return false
			}
			v, ok := parseInt(tok)
			p.BinaryDataSize = &v
			return ok
		case 1: // binary_data
			v := s.i < len(s.b) && s.b[s.i] == 't'
			p.BinaryData = &v
			if v {
				return s.literal("true")
			}
			return s.literal("false")
		}
		if s.i >= len(s.b) || s.b[s.i] != '"' {
			return false
		}
		v, ok := s.stringOrNull()
		p.SharedMemoryRegion = &v
		return ok
	})
}

// outputs reads the outputs the request asks for, in a slice of their
// own: the reply keeps them.
func (s *scanner) outputs(r *inferRequest) bool {
	r.Outputs = []requestOutput{}
	return s.array(func() { r.Outputs = nil }, func() bool {
		r.Outputs = append(r.Outputs, requestOutput{})
		o := &r.Outputs[len(r.Outputs)-1]
		return s.object(outputFields, func(f int) bool {
			if f == 0 { // name
				var ok bool
				o.Name, ok = s.stringOrNull()
				return ok
			}
			return s.params(&o.Parameters)
		})
	})
}

// data reads an input's data: the JSON value is kept as Data, and, when
// the input's datatype is known by now, its elements are encoded into
// r's scratch as parseJSONData would. Data that do not encode are left
// for parseJSONData to refuse.
func (s *scanner) data(r *inferRequest, in *requestInput) bool {
	start := s.i
	t, known := typeNamed(in.Datatype)
	if known && s.i < len(s.b) && s.b[s.i] == '[' {
		at := len(r.scratch)
		if buf, n, ok := s.elements(r.scratch, t); ok {
			r.scratch = buf
			in.Data = s.b[start:s.i]
			in.elems, in.elemType, in.elemCount = buf[at:len(buf):len(buf)], t, n
			return true
		}
		r.scratch = r.scratch[:at]
		s.i = start
	}
	if !s.skip(0) {
		return false
	}
	in.Data = s.b[start:s.i]
	return true
}

// elements encodes the elements of an array (nested arrays row-major) as
// t's, at its '['; false on an element that is not one of t, or anything
// but arrays and elements.
func (s *scanner) elements(buf []byte, t *dtype) ([]byte, int64, bool) {
	var n int64
	depth := 0
	b := s.b
	for {
		// A value, or the end of an array just begun.
		s.ws()
		if s.i >= len(b) {
			return buf, n, false
		}
		var ok bool
		switch c := b[s.i]; {
		case c == '[':
			if depth++; depth > maxScanDepth {
				return buf, n, false
			}
			s.i++
			if !s.next(']') {
				continue
			}
			if depth--; depth == 0 {
				return buf, n, true
			}
			ok = true
		case c == '"':
			start := s.i
			var raw []byte
			var plain bool
			if raw, plain, ok = s.str(); ok && !plain && bytes.IndexByte(raw, '\\') >= 0 {
				raw = []byte(unquote(b[start:s.i]))
			}
			if ok {
				buf, ok = appendElement(buf, t, raw, true)
				n++
			}
		case c == 't' || c == 'f':
			start := s.i
			if ok = s.literal("true") || s.literal("false"); ok {
				buf, ok = appendElement(buf, t, b[start:s.i], false)
				n++
			}
		case c == '-' || '0' <= c && c <= '9':
			var tok []byte
			if tok, ok = s.number(); ok {
				buf, ok = appendElement(buf, t, tok, false)
				n++
			}
		}
		if !ok {
			return buf, n, false
		}
		// After a value: more of its array, or its end.
		for {
			if s.next(',') {
				break
			}
			if !s.next(']') {
				return buf, n, false
			}
			if depth--; depth == 0 {
				return buf, n, true
			}
		}
	}
}
