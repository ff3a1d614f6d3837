package aws

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/awsapi"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/frontend/genstream"
	"github.com/switchyard/switchyard/message"
)

// decodeInvoke decodes InvokeEndpoint.
func (d *Dialect) decodeInvoke(req dialect.Request) (dialect.Job, error) {
	model, err := d.endpointModel(req, true)
	if err != nil {
		return dialect.Job{}, err
	}
	return dialect.Job{Model: model, Input: req.Input, Reply: invokeReply{}}, nil
}

// decodeInvokeStream decodes InvokeEndpointWithResponseStream.
func (d *Dialect) decodeInvokeStream(req dialect.Request) (dialect.Job, error) {
	model, err := d.endpointModel(req, false)
	if err != nil {
		return dialect.Job{}, err
	}
	return dialect.Job{Model: model, Input: req.Input, Reply: invokeStreamReply{chat: chatBody(req.Body())}}, nil
}

// chatBody reports whether a request body is in the chat schema: a JSON
// object with a "messages" member.
func chatBody(body []byte) bool {
	if !bytes.Contains(body, []byte(`"messages"`)) {
		return false
	}
	var v struct {
		Messages json.RawMessage `json:"messages"`
	}
	return json.Unmarshal(body, &v) == nil && len(v.Messages) > 0
}

// endpointModel picks InvokeEndpoint's model: the TargetModel header (read
// as /invocations reads it), else the model named like the endpoint (or
// that the endpoint's name is an alias of), else the only registered model. targeted says whether the operation has a
// TargetModel (InvokeEndpointWithResponseStream has none), which the error
// for an endpoint that picks no model advises only where it can be sent.
func (d *Dialect) endpointModel(req dialect.Request, targeted bool) (string, error) {
	if req.Header(dialect.HeaderSageMakerTarget) != "" || req.Header(dialect.HeaderTarget) != "" {
		return dialect.TargetModel(req, d.models)
	}
	endpoint := d.aliases.Resolve(string(req.Args.Name))
	names := d.models.Names()
	if _, found := slices.BinarySearch(names, endpoint); found {
		return endpoint, nil
	}
	if len(names) == 1 {
		return names[0], nil
	}
	if targeted {
		return "", fmt.Errorf("%w: endpoint %q names no registered model and %d models are registered; "+
			"name one with TargetModel (X-Amzn-SageMaker-Target-Model)", api.ErrModelNotFound, endpoint, len(names))
	}
	return "", fmt.Errorf("%w: endpoint %q names no registered model and %d models are registered; "+
		"on this operation the endpoint name picks the model: call the endpoint named like one of them",
		api.ErrModelNotFound, endpoint, len(names))
}

// invokeReply answers InvokeEndpoint: the worker's answer with the variant
// header; a streamed one as the plain routes stream it.
type invokeReply struct{}

func (invokeReply) Whole(a dialect.Answer) error {
	a.Write(a.Body)
	a.Ctx.Response.Header.Set(awsapi.HeaderInvokedVariant, awsapi.Variant)
	return nil
}

func (invokeReply) Stream(a dialect.Answer, s dialect.Stream) error {
	f, sse := genstream.Plain(a.Props, genstream.AcceptsEventStream(a.Header("accept")))
	if err := s.Start(f); err != nil {
		return err
	}
	h := &a.Ctx.Response.Header
	dialect.CopyProps(h, a.Props)
	h.Set(awsapi.HeaderInvokedVariant, awsapi.Variant)
	if sse {
		genstream.SetEventStream(h)
	}
	return nil
}

// invokeStreamReply answers InvokeEndpointWithResponseStream: an event
// stream of PayloadPart events, one for a whole answer. A streamed answer
// to a request in the chat schema goes out as OpenAI chat.completion.chunk
// objects, one and a newline per part, which is what the clients of a
// SageMaker chat endpoint read (Strands' SageMakerAIModel, LiteLLM's
// sagemaker_chat); any other stream goes out as the worker sends it.
type invokeStreamReply struct {
	chat bool // the request is in the chat schema
}

func (invokeStreamReply) Whole(a dialect.Answer) error {
	a.Ctx.SetStatusCode(a.Code)
	dialect.CopyProps(&a.Ctx.Response.Header, a.Props)
	setStreamHeaders(&a.Ctx.Response.Header, a.Props)
	a.Ctx.Response.SetBodyRaw(awsapi.NewPayloadStream().Part(a.Body))
	return nil
}

func (r invokeStreamReply) Stream(a dialect.Answer, s dialect.Stream) error {
	lines := genstream.IsJSONLines(dialect.PropValue(a.Props, "content-type"))
	var f dialect.Framer = newPayloadFramer(lines)
	if lines && r.chat {
		f = newChatPayloads(genstream.ChunkHead{ID: "chatcmpl-" + a.ID, Model: a.Model, Created: a.Ctx.Time().Unix()})
	}
	if err := s.Start(f); err != nil {
		return err
	}
	dialect.CopyProps(&a.Ctx.Response.Header, a.Props)
	setStreamHeaders(&a.Ctx.Response.Header, a.Props)
	return nil
}

// setStreamHeaders sets the headers of an InvokeEndpointWithResponseStream
// answer: the event stream's content type, the model's own in
// X-Amzn-SageMaker-Content-Type, and the variant.
func setStreamHeaders(h *fasthttp.ResponseHeader, props []message.Prop) {
	if ct := dialect.PropValue(props, "content-type"); ct != "" {
		h.Set(awsapi.HeaderStreamContentType, ct)
	}
	h.SetContentType(awsapi.ContentTypeEventStream)
	h.Set(awsapi.HeaderInvokedVariant, awsapi.Variant)
}

// payloadFramer frames a streamed answer as PayloadPart events. On a
// JSON-lines stream it watches for the worker's error line
// ("finish_reason": "error"): the line goes out like the others, and the
// stream then ends with a ModelStreamError, so that the SDK raises it.
type payloadFramer struct {
	ps      *awsapi.PayloadStream
	lines   *genstream.LineBuf // nil for streams that are not JSON lines
	errText string
}

func newPayloadFramer(jsonLines bool) *payloadFramer {
	f := &payloadFramer{ps: awsapi.NewPayloadStream()}
	if jsonLines {
		f.lines = &genstream.LineBuf{}
	}
	return f
}

func (f *payloadFramer) Chunk(p []byte) []byte {
	if f.lines != nil {
		f.lines.Feed(p, f.line)
	}
	return f.ps.Part(p)
}

// line notes the error of a worker's error line.
func (f *payloadFramer) line(b []byte) {
	if msg := genstream.LineError(b); msg != "" {
		f.errText = msg
	}
}

func (f *payloadFramer) End() []byte {
	if f.lines != nil {
		f.lines.Flush(f.line)
	}
	if f.errText == "" {
		return nil
	}
	return f.ps.Fail(modelFailure(f.errText))
}

func (f *payloadFramer) Fail(p dialect.Problem) ([]byte, bool) {
	return f.ps.Fail(streamFailure(p)), true
}

// chatPayloads frames a worker's JSON-lines stream as OpenAI
// chat.completion.chunk objects, each with a newline in its own PayloadPart,
// the usage in a last chunk of its own. A worker's error line ends the
// chat stream with a finish chunk that carries the error, and the event
// stream with a ModelStreamError.
type chatPayloads struct {
	chunks *genstream.ChatChunks
	ps     *awsapi.PayloadStream
	out    []byte
}

func newChatPayloads(head genstream.ChunkHead) *chatPayloads {
	f := &chatPayloads{ps: awsapi.NewPayloadStream()}
	f.chunks = genstream.NewChatChunks(head, true, func(b []byte) {
		f.out = append(f.out, f.ps.Part(append(b, '\n'))...)
	})
	return f
}

func (f *chatPayloads) Chunk(p []byte) []byte {
	f.chunks.Feed(p)
	return f.take()
}

func (f *chatPayloads) End() []byte {
	f.chunks.End()
	out := f.take()
	if msg := f.chunks.ErrText(); msg != "" {
		out = append(out, f.ps.Fail(modelFailure(msg))...)
	}
	return out
}

func (f *chatPayloads) Fail(p dialect.Problem) ([]byte, bool) {
	return append(f.take(), f.ps.Fail(streamFailure(p))...), true
}

func (f *chatPayloads) take() []byte {
	out := f.out
	f.out = nil
	return out
}
