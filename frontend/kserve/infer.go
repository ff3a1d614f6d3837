package kserve

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/message"
)

// Content types of the tensors the worker receives and of the answers.
const (
	contentTypeNDList = "tensor/ndlist"
	contentTypeBinary = "application/octet-stream"
)

// itemParameters is the content item that carries a request's parameters
// object to the worker, as JSON, when it has one.
const itemParameters = "parameters"

// decodeInfer decodes POST /v2/models/{m}[/versions/{v}]/infer: the
// tensors of the JSON body (and of the binary data after it) become the
// NDList the worker receives as "data", with content-type tensor/ndlist,
// as DJL's KServe plugin hands them to its Python engine.
func (d *Dialect) decodeInfer(req dialect.Request) (dialect.Job, error) {
	name, err := d.modelOf(req.Args)
	if err != nil {
		return dialect.Job{}, err
	}
	sig, err := d.host.Models.Signature(name)
	if err != nil {
		return dialect.Job{}, err
	}
	job := dialect.Job{Model: name}
	r, bin, err := parseRequestOf(req.Body(), req.Header(headerLength), sig.Inputs)
	if err != nil {
		return job, err
	}
	defer r.release() // what outlives the request (ID, Outputs, Parameters) is not its buffers
	binaryAll, err := r.binaryOutput()
	if err != nil {
		return job, err
	}
	if err := checkOutputs(r.Outputs, sig.Outputs); err != nil {
		return job, err
	}
	nd, err := encodeInputs(r, bin, sig.Inputs)
	if err != nil {
		return job, err
	}
	job.Input = req.Input
	setProp(&job.Input, "content-type", contentTypeNDList)
	job.Input.Content[0].Value = nd
	if len(r.Parameters) > 0 && string(r.Parameters) != "null" {
		job.Input.Content = append(job.Input.Content, message.Item{Key: itemParameters, Value: r.Parameters})
	}
	job.Reply = &inferReply{model: name, id: r.ID, outputs: r.Outputs, binaryAll: binaryAll, declared: sig.Outputs}
	return job, nil
}

// setProp sets the property key of in, or adds it.
func setProp(in *message.Input, key, value string) {
	for i := range in.Props {
		if in.Props[i].Key == key {
			in.Props[i].Value = value
			return
		}
	}
	in.Props = append(in.Props, message.Prop{Key: key, Value: value})
}

// inferReply writes the Inference Response JSON Object of a worker's
// NDList, with the outputs the request asked for (all when it named none)
// and those it asked for as binary data after the JSON.
type inferReply struct {
	model, id string
	outputs   []requestOutput
	binaryAll bool
	declared  []api.TensorSpec // the model's declared outputs, which name its unnamed arrays

	// Room for the answer's arrays, their shapes and the outputs picked,
	// allocated with the reply.
	arrayBuf [2]ndArray
	dimBuf   [4]int64
	pickBuf  [2]picked
}

// picked is one output of the answer and whether it goes as binary data.
type picked struct {
	*ndArray
	binary bool
}

// Whole answers a whole NDList.
func (r *inferReply) Whole(a dialect.Answer) error {
	arrays, err := appendNDList(r.arrayBuf[:0], r.dimBuf[:0], a.Body, r)
	if err != nil {
		return badAnswer(fmt.Sprintf("Model %s answered no tensors (%v): a handler answers an inference request of the Open Inference Protocol with Output.add_as_numpy().", r.model, err))
	}
	r.nameArrays(arrays)
	outs, err := r.pick(arrays)
	if err != nil {
		return err
	}
	// The answer is written into the response's own (pooled) buffer.
	resp := &a.Ctx.Response
	body, header := r.appendAnswer(resp.SwapBody(nil)[:0], outs)
	a.Ctx.SetStatusCode(a.Code)
	h := &resp.Header
	dialect.CopyProps(h, a.Props)
	if header < len(body) {
		h.Set("Inference-Header-Content-Length", strconv.Itoa(header))
		h.SetContentType(contentTypeBinary)
	} else {
		h.SetContentType(dialect.ContentTypeJSON)
	}
	resp.SwapBody(body)
	return nil
}

// intern returns an array's name as the string of the declared or
// requested output of that name, else as a new string.
func (r *inferReply) intern(name []byte) string {
	for i := range r.declared {
		if r.declared[i].Name == string(name) {
			return r.declared[i].Name
		}
	}
	for i := range r.outputs {
		if r.outputs[i].Name == string(name) {
			return r.outputs[i].Name
		}
	}
	return string(name)
}

// maxStreamed bounds the streamed answer an inference request collects.
const maxStreamed = 64 << 20

// Stream answers a streamed NDList once it has arrived whole.
func (r *inferReply) Stream(a dialect.Answer, s dialect.Stream) error {
	var body []byte
	for {
		chunk, err := s.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if body = append(body, chunk...); len(body) > maxStreamed {
			return badAnswer(fmt.Sprintf("Model %s streamed more than %d bytes of tensors.", r.model, maxStreamed))
		}
	}
	a.Body = body
	return r.Whole(a)
}

// badAnswer is a worker's answer that is no tensors: the core answers it
// 502 with its text.
type badAnswer string

func (e badAnswer) Error() string { return string(e) }
func (e badAnswer) Unwrap() error { return dialect.ErrBadGateway }

// nameArrays names the arrays the handler left unnamed: after the model's
// declared outputs, in order; else, as DJL's KServe plugin does, after the
// outputs the request asked for; else output_<i>.
func (r *inferReply) nameArrays(arrays []ndArray) {
	for i := range arrays {
		switch {
		case arrays[i].name != "":
		case i < len(r.declared):
			arrays[i].name = r.declared[i].Name
		case i < len(r.outputs):
			arrays[i].name = r.outputs[i].Name
		default:
			arrays[i].name = "output_" + strconv.Itoa(i)
		}
	}
}

// pick returns the outputs to answer: those the request named, in its
// order, else every array.
func (r *inferReply) pick(arrays []ndArray) ([]picked, error) {
	if len(r.outputs) == 0 {
		outs := r.pickBuf[:0]
		for i := range arrays {
			outs = append(outs, picked{&arrays[i], r.binaryAll})
		}
		return outs, nil
	}
	outs := r.pickBuf[:0]
	for _, o := range r.outputs {
		j := findArray(arrays, o.Name)
		if j < 0 {
			return nil, dialect.BadRequestf("The model answered no output %s; it answered %s.", api.Quote(o.Name), arrayNames(arrays))
		}
		bin := r.binaryAll
		if o.Parameters != nil && o.Parameters.BinaryData != nil {
			bin = *o.Parameters.BinaryData
		}
		outs = append(outs, picked{&arrays[j], bin})
	}
	return outs, nil
}

func findArray(arrays []ndArray, name string) int {
	for i := range arrays {
		if arrays[i].name == name {
			return i
		}
	}
	return -1
}

func arrayNames(arrays []ndArray) string {
	specs := make([]api.TensorSpec, len(arrays))
	for i := range arrays {
		specs[i].Name = arrays[i].name
	}
	return specNames(specs)
}

// encode writes the response object, then the binary data of the outputs
// that go as binary data; header is the object's length.
func (r *inferReply) encode(outs []picked) (body []byte, header int) {
	return r.appendAnswer(nil, outs)
}

// appendAnswer is encode, appending to b.
func (r *inferReply) appendAnswer(b []byte, outs []picked) (body []byte, header int) {
	size, bin := 96+len(r.model)+len(r.id), 0
	for _, o := range outs {
		if o.binary {
			bin += len(o.data)
		} else {
			size += int(o.count)*12 + len(o.data)
		}
		size += 80 + len(o.name) + 24*len(o.shape)
	}
	b = slices.Grow(b, size+bin)
	b = appendString(append(b, `{"model_name":`...), r.model)
	b = append(b, `,"model_version":"`+version+`"`...)
	if r.id != "" {
		b = appendString(append(b, `,"id":`...), r.id)
	}
	b = append(b, `,"outputs":[`...)
	for i, o := range outs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(append(b, `{"name":`...), o.name)
		b = append(b, `,"datatype":"`...)
		b = append(b, o.t.name...)
		b = append(b, `","shape":`...)
		b = appendShape(b, o.shape)
		if o.binary {
			b = append(b, `,"parameters":{"binary_data_size":`...)
			b = strconv.AppendInt(b, int64(len(o.data)), 10)
			b = append(b, "}}"...)
			continue
		}
		b = appendJSONData(append(b, `,"data":`...), o.ndArray)
		b = append(b, '}')
	}
	b = append(b, "]}"...)
	header = len(b)
	for _, o := range outs {
		if o.binary {
			b = append(b, o.data...)
		}
	}
	return b, header
}

func appendShape(b []byte, shape []int64) []byte {
	b = append(b, '[')
	for i, d := range shape {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, d, 10)
	}
	return append(b, ']')
}

// appendJSONData appends an array's elements as a flat JSON array, as the
// protocol writes tensor data (row-major).
func appendJSONData(b []byte, a *ndArray) []byte {
	b = append(b, '[')
	data := a.data
	for i := int64(0); i < a.count; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		if a.t.kind == kindBytes {
			l := binary.LittleEndian.Uint32(data)
			b = appendString(b, data[4:4+l])
			data = data[4+l:]
			continue
		}
		b = appendJSONElement(b, a.t, data[:a.t.size])
		data = data[a.t.size:]
	}
	return append(b, ']')
}

// writeError writes the protocol's error object, {"error": "..."}.
func writeError(ctx *fasthttp.RequestCtx, p dialect.Problem, _ error) {
	b := appendString([]byte(`{"error":`), p.Message)
	dialect.WriteRawJSON(ctx, p.Code, append(b, "}\n"...))
}
