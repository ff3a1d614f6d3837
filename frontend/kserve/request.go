package kserve

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// headerLength is the binary tensor extension's header: the length of the
// JSON part of a body that binary tensor data follow.
const headerLength = "inference-header-content-length"

// inferRequest is the Inference Request JSON Object.
type inferRequest struct {
	ID         string          `json:"id"`
	Parameters json.RawMessage `json:"parameters"`
	Inputs     []requestInput  `json:"inputs"`
	Outputs    []requestOutput `json:"outputs"`

	// The scanner's buffers (scan.go), which pooled requests keep.
	inputBuf [2]requestInput // Inputs, while they fit
	dims     []int64         // the inputs' shapes
	scratch  []byte          // the inputs' encoded elements
}

// requestInput is one input tensor: its data as JSON, or binary_data_size
// bytes of the binary data after the JSON.
type requestInput struct {
	Name       string          `json:"name"`
	Shape      []int64         `json:"shape"`
	Datatype   string          `json:"datatype"`
	Parameters *tensorParams   `json:"parameters"`
	Data       json.RawMessage `json:"data"`

	// The data's elements as elemType's, when the scanner encoded them.
	elems     []byte
	elemType  *dtype
	elemCount int64
}

// requestOutput is one output the client asks for, binary_data to have it
// as binary data.
type requestOutput struct {
	Name       string        `json:"name"`
	Parameters *tensorParams `json:"parameters"`
}

// tensorParams are the parameters of a tensor that the dialect reads.
type tensorParams struct {
	BinaryDataSize     *int64  `json:"binary_data_size"`
	BinaryData         *bool   `json:"binary_data"`
	SharedMemoryRegion *string `json:"shared_memory_region"`
}

// requestParams are the request's parameters that the dialect reads; the
// rest go to the worker as they are.
type requestParams struct {
	BinaryDataOutput *bool `json:"binary_data_output"`
}

// parseRequest reads an inference request's body: the JSON object, and
// the binary data after it when the Inference-Header-Content-Length header
// (hlen) says where the JSON ends.
func parseRequest(body []byte, hlen string) (*inferRequest, []byte, error) {
	return parseRequestOf(body, hlen, nil)
}

// parseRequestOf is parseRequest for a model that declares inputs, whose
// names the inputs' names share.
func parseRequestOf(body []byte, hlen string, declared []api.TensorSpec) (*inferRequest, []byte, error) {
	body, bin, err := splitBody(body, hlen)
	if err != nil {
		return nil, nil, err
	}
	r := newRequest()
	if !scanRequest(r, body, declared) {
		// encoding/json decides what the scanner does not read.
		r.release()
		r = &inferRequest{}
		if err := json.Unmarshal(body, r); err != nil {
			return nil, nil, dialect.BadRequestf("The body is not an inference request: %s.", jsonProblem(err))
		}
	}
	if len(r.Inputs) == 0 {
		return nil, nil, dialect.BadRequest("The request has no inputs.")
	}
	return r, bin, nil
}

// splitBody splits a body into its JSON object and the binary data after
// it, where the Inference-Header-Content-Length header (hlen) says.
func splitBody(body []byte, hlen string) ([]byte, []byte, error) {
	if hlen == "" {
		return body, nil, nil
	}
	n, err := strconv.ParseInt(strings.TrimSpace(hlen), 10, 64)
	switch {
	case err != nil || n < 0:
		return nil, nil, dialect.BadRequestf("Header Inference-Header-Content-Length must be a byte count, got %s.", api.Quote(hlen))
	case n == 0:
		return nil, nil, dialect.BadRequest("Raw binary requests (Inference-Header-Content-Length: 0) are not supported: send the JSON header first.")
	case n > int64(len(body)):
		return nil, nil, dialect.BadRequestf("Header Inference-Header-Content-Length is %d, beyond the body's %d bytes.", n, len(body))
	}
	return body[:n], body[n:], nil
}

// jsonProblem is what encoding/json says of a body, without its package's
// prefix and Go's type names.
func jsonProblem(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
		return fmt.Sprintf("field %s must not be a JSON %s", te.Field, te.Value)
	} else if ok {
		return "the request must be a JSON object, not a JSON " + te.Value
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// binaryOutput reports whether the request asks for every output as
// binary data (its parameter binary_data_output).
func (r *inferRequest) binaryOutput() (bool, error) {
	if len(r.Parameters) == 0 || string(r.Parameters) == "null" {
		return false, nil
	}
	var p requestParams
	if err := json.Unmarshal(r.Parameters, &p); err != nil {
		return false, dialect.BadRequestf("The request's parameters must be an object with a boolean binary_data_output: %s.", jsonProblem(err))
	}
	return p.BinaryDataOutput != nil && *p.BinaryDataOutput, nil
}

// encodeInputs turns the request's inputs into the NDList the worker
// receives (ndlist.go), checking each against the model's declared inputs
// (none declared: any input goes) and against its own shape. bin is the
// binary data after the JSON, which the inputs with binary_data_size share
// in order.
func encodeInputs(r *inferRequest, bin []byte, declared []api.TensorSpec) ([]byte, error) {
	size := 4
	for i := range r.Inputs {
		in := &r.Inputs[i]
		data := len(in.Data)
		if in.elemType != nil {
			data = len(in.elems)
		}
		size += data + 64 + len(in.Name) + 10*len(in.Shape)
	}
	buf := binary.BigEndian.AppendUint32(make([]byte, 0, size+len(bin)), uint32(len(r.Inputs)))
	for i := range r.Inputs {
		in := &r.Inputs[i]
		t, count, err := checkInput(in, r.Inputs[:i], declared)
		if err != nil {
			return nil, err
		}
		buf = appendHeader(buf, in.Name, t, in.Shape)
		at := len(buf)
		buf = append(buf, 0, 0, 0, 0) // the data's length, set below
		if buf, bin, err = appendInputData(buf, bin, in, t, count); err != nil {
			return nil, err
		}
		binary.BigEndian.PutUint32(buf[at:], uint32(len(buf)-at-4))
	}
	if len(bin) > 0 {
		return nil, dialect.BadRequestf("The body has %d bytes of binary data that no input's binary_data_size claims.", len(bin))
	}
	for _, spec := range declared {
		if !slicesHasInput(r.Inputs, spec.Name) {
			return nil, dialect.BadRequestf("Missing input %s: the model takes %s.", api.Quote(spec.Name), specNames(declared))
		}
	}
	return buf, nil
}

// checkInput checks an input's name, datatype and shape, and returns its
// datatype and element count.
func checkInput(in *requestInput, before []requestInput, declared []api.TensorSpec) (*dtype, int64, error) {
	if in.Name == "" {
		return nil, 0, dialect.BadRequest("An input has no name.")
	}
	if slicesHasInput(before, in.Name) {
		return nil, 0, dialect.BadRequestf("Input %s is given twice.", api.Quote(in.Name))
	}
	t, ok := typeNamed(in.Datatype)
	if !ok {
		return nil, 0, dialect.BadRequestf("Input %s has datatype %s, which is not one of %s.",
			api.Quote(in.Name), api.Quote(in.Datatype), strings.Join(api.Datatypes, ", "))
	}
	if in.Shape == nil {
		return nil, 0, dialect.BadRequestf("Input %s has no shape.", api.Quote(in.Name))
	}
	count, ok := elements(in.Shape)
	if !ok {
		return nil, 0, dialect.BadRequestf("Input %s has shape %s: dimensions must be 0 or more, and hold at most %d elements.",
			api.Quote(in.Name), shapeText(in.Shape), int64(maxElements))
	}
	if declared == nil {
		return t, count, nil
	}
	spec, ok := findSpec(declared, in.Name)
	switch {
	case !ok:
		return nil, 0, dialect.BadRequestf("Unknown input %s: the model takes %s.", api.Quote(in.Name), specNames(declared))
	case spec.Datatype != t.name:
		return nil, 0, dialect.BadRequestf("Input %s has datatype %s; the model takes %s.", api.Quote(in.Name), t.name, spec.Datatype)
	case !shapeFits(in.Shape, spec.Shape):
		return nil, 0, dialect.BadRequestf("Input %s has shape %s; the model takes %s.", api.Quote(in.Name), shapeText(in.Shape), shapeText(spec.Shape))
	}
	return t, count, nil
}

// appendInputData appends an input's elements, from its JSON data or from
// the front of bin, and returns what is left of bin.
func appendInputData(buf, bin []byte, in *requestInput, t *dtype, count int64) ([]byte, []byte, error) {
	p := in.Parameters
	if p != nil && p.SharedMemoryRegion != nil {
		return nil, nil, dialect.BadRequestf("Input %s names a shared-memory region: the shared-memory extensions are not supported.", api.Quote(in.Name))
	}
	if p == nil || p.BinaryDataSize == nil {
		if len(in.Data) == 0 || string(in.Data) == "null" {
			return nil, nil, dialect.BadRequestf("Input %s has no data.", api.Quote(in.Name))
		}
		var n int64
		var err error
		if in.elemType == t {
			buf, n = append(buf, in.elems...), in.elemCount
		} else {
			buf, n, err = parseJSONData(buf, in.Data, t)
		}
		if err != nil {
			return nil, nil, dialect.BadRequestf("Input %s: %v", api.Quote(in.Name), err)
		}
		if n != count {
			return nil, nil, dialect.BadRequestf("Input %s has shape %s, which holds %d elements, but its data has %d.",
				api.Quote(in.Name), shapeText(in.Shape), count, n)
		}
		return buf, bin, nil
	}
	size := *p.BinaryDataSize
	switch {
	case len(in.Data) > 0 && string(in.Data) != "null":
		return nil, nil, dialect.BadRequestf("Input %s has both data and binary_data_size.", api.Quote(in.Name))
	case size < 0 || size > int64(len(bin)):
		return nil, nil, dialect.BadRequestf("Input %s has binary_data_size %d, beyond the %d bytes of binary data left in the body.",
			api.Quote(in.Name), size, len(bin))
	}
	raw := bin[:size]
	n, ok := countBinary(raw, t)
	if !ok || n != count {
		return nil, nil, dialect.BadRequestf("Input %s has shape %s, which holds %d elements, but its %d bytes of binary %s data do not.",
			api.Quote(in.Name), shapeText(in.Shape), count, size, t.name)
	}
	return append(buf, raw...), bin[size:], nil
}

// countBinary counts the elements of binary data of t: its size over the
// element size, or its 4-byte lengths for BYTES; false when the data end
// inside an element.
func countBinary(raw []byte, t *dtype) (int64, bool) {
	if t.size > 0 {
		return int64(len(raw) / t.size), len(raw)%t.size == 0
	}
	var n int64
	for len(raw) > 0 {
		if len(raw) < 4 {
			return n, false
		}
		l := binary.LittleEndian.Uint32(raw)
		if uint64(l) > uint64(len(raw)-4) {
			return n, false
		}
		raw, n = raw[4+l:], n+1
	}
	return n, true
}

// parseJSONData appends the elements of a tensor's JSON data (an array;
// nested arrays are read row-major) as t's little-endian elements, and
// returns how many there were. The data are valid JSON already: encoding/json
// has read the whole body.
func parseJSONData(buf, raw []byte, t *dtype) ([]byte, int64, error) {
	if len(raw) == 0 || raw[0] != '[' {
		return buf, 0, fmt.Errorf("data must be an array, not %s", api.Quote(raw))
	}
	var n int64
	for i := 0; i < len(raw); {
		var tok []byte
		str := raw[i] == '"'
		switch {
		case raw[i] == '[' || raw[i] == ']' || raw[i] == ',' || isSpace(raw[i]):
			i++
			continue
		case str:
			end, escaped := stringEnd(raw, i)
			tok = raw[i+1 : end]
			if escaped {
				tok = []byte(unquote(raw[i : end+1]))
			}
			i = end + 1
		default:
			end := i
			for end < len(raw) && !isDelim(raw[end]) {
				end++
			}
			tok, i = raw[i:end], end
		}
		var ok bool
		if buf, ok = appendElement(buf, t, tok, str); !ok {
			if str {
				return buf, n, fmt.Errorf("element %d, %s, is a string; %s data are %s", n, api.Quote(tok), t.name, what(t))
			}
			return buf, n, fmt.Errorf("element %d, %s, is not %s", n, api.Quote(tok), what(t))
		}
		n++
	}
	return buf, n, nil
}

// what says what JSON elements of t are.
func what(t *dtype) string {
	switch t.kind {
	case kindBool:
		return "true or false"
	case kindInt, kindUint:
		return "an integer that fits " + t.name
	case kindBytes:
		return "strings"
	}
	return "a number"
}

// stringEnd returns the index of the quote that ends the JSON string
// starting at raw[i], and whether the string holds escapes.
func stringEnd(raw []byte, i int) (int, bool) {
	escaped := false
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j, escaped
		}
	}
	return len(raw) - 1, escaped
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func isDelim(c byte) bool { return c == ',' || c == ']' || isSpace(c) }

// checkOutputs checks the outputs a request asks for against the model's
// declared outputs (none declared: any name goes).
func checkOutputs(outs []requestOutput, declared []api.TensorSpec) error {
	for i, o := range outs {
		switch {
		case o.Name == "":
			return dialect.BadRequest("A requested output has no name.")
		case slicesHasOutput(outs[:i], o.Name):
			return dialect.BadRequestf("Output %s is requested twice.", api.Quote(o.Name))
		case o.Parameters != nil && o.Parameters.SharedMemoryRegion != nil:
			return dialect.BadRequestf("Output %s names a shared-memory region: the shared-memory extensions are not supported.", api.Quote(o.Name))
		}
		if _, ok := findSpec(declared, o.Name); declared != nil && !ok {
			return dialect.BadRequestf("Unknown output %s: the model answers %s.", api.Quote(o.Name), specNames(declared))
		}
	}
	return nil
}

func slicesHasInput(ins []requestInput, name string) bool {
	for i := range ins {
		if ins[i].Name == name {
			return true
		}
	}
	return false
}

func slicesHasOutput(outs []requestOutput, name string) bool {
	for i := range outs {
		if outs[i].Name == name {
			return true
		}
	}
	return false
}

func findSpec(specs []api.TensorSpec, name string) (api.TensorSpec, bool) {
	for _, s := range specs {
		if s.Name == name {
			return s, true
		}
	}
	return api.TensorSpec{}, false
}

// specNames lists the names of specs for a message.
func specNames(specs []api.TensorSpec) string {
	if len(specs) == 0 {
		return "none"
	}
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = api.Quote(s.Name)
	}
	return strings.Join(names, ", ")
}

// shapeFits reports whether shape has the rank of want and its size where
// want's dimension is not -1.
func shapeFits(shape, want []int64) bool {
	if len(shape) != len(want) {
		return false
	}
	for i, d := range want {
		if d != -1 && d != shape[i] {
			return false
		}
	}
	return true
}

// shapeText writes a shape as JSON writes it: [2,3].
func shapeText(shape []int64) string { return string(appendShape(nil, shape)) }
