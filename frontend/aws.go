package frontend

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/frontend/awsapi"
	"github.com/switchyard/switchyard/message"
)

// This file serves the AWS runtime APIs (docs/api.md): SageMaker Runtime's
// InvokeEndpoint routes and Bedrock Runtime's Converse routes. The wire
// shapes are package awsapi's; here they meet the queue and the streams.

// endpointModel picks InvokeEndpoint's model: the TargetModel header (read
// as /invocations reads it), else the model named like the endpoint, else
// the only registered model.
func (s *Server) endpointModel(ctx *fasthttp.RequestCtx, endpoint string, sel *selectors) (string, error) {
	if len(sel.sagemaker) > 0 || len(sel.target) > 0 {
		return s.targetModel(ctx, sel)
	}
	names := s.models.Names()
	if _, found := slices.BinarySearch(names, endpoint); found {
		return endpoint, nil
	}
	if len(names) == 1 {
		return names[0], nil
	}
	return "", fmt.Errorf("%w: endpoint %q names no registered model and %d models are registered; "+
		"name one with TargetModel (X-Amzn-SageMaker-Target-Model)", api.ErrModelNotFound, endpoint, len(names))
}

// converseModel picks Converse's model from the modelId: the first of
// awsapi.ModelCandidates that is registered.
func (s *Server) converseModel(modelID string) (string, error) {
	names := s.models.Names()
	for _, c := range awsapi.ModelCandidates(modelID) {
		if _, found := slices.BinarySearch(names, c); found {
			return c, nil
		}
	}
	return "", fmt.Errorf("%w: %s", api.ErrModelNotFound, modelID)
}

// converseInput turns the job's Converse body into a chat request, and
// refuses tools the model did not declare it can call.
func (s *Server) converseInput(model string, in *message.Input, stream bool) error {
	chat, err := awsapi.ChatFromConverse(in.Content[0].Value, stream)
	if err != nil {
		return badRequest(err.Error())
	}
	if chat.Tools {
		g, err := s.models.Generation(model)
		if err != nil {
			return err
		}
		if !g.SupportsTools {
			return badRequestf("toolConfig: model %q does not support tool use: its handler did not declare supports_tools.", model)
		}
	}
	in.Content[0].Value = chat.Body
	for i := range in.Props {
		if in.Props[i].Key == "content-type" {
			in.Props[i].Value = contentTypeJSON
		}
	}
	return nil
}

// writeAWSAnswer writes a whole answer on an AWS route.
func writeAWSAnswer(ctx *fasthttp.RequestCtx, code int, resp *message.Response, sh *shape) error {
	switch {
	case sh.api == apiBedrock:
		return writeConverse(ctx, resp.Body, sh)
	case sh.stream:
		ctx.SetStatusCode(code)
		copyProps(&ctx.Response.Header, resp.Props)
		setStreamHeaders(&ctx.Response.Header, resp.Props)
		ctx.Response.SetBodyRaw(awsapi.NewPayloadStream().Part(resp.Body))
		return nil
	}
	writeAnswer(ctx, code, resp, sh)
	ctx.Response.Header.Set(awsapi.HeaderInvokedVariant, awsapi.Variant)
	return nil
}

// writeConverse answers Converse (or ConverseStream, as a complete event
// stream) from a model's whole chat.completion.
func writeConverse(ctx *fasthttp.RequestCtx, body []byte, sh *shape) error {
	reply, err := awsapi.ReplyFromChat(body)
	if err != nil {
		return fmt.Errorf("model %s: %w", sh.model, err)
	}
	ctx.SetStatusCode(fasthttp.StatusOK)
	if sh.stream {
		ctx.SetContentType(awsapi.ContentTypeEventStream)
		ctx.Response.SetBodyRaw(awsapi.NewConverseStream().Whole(reply, time.Since(sh.start)))
		return nil
	}
	writeRawJSON(ctx, fasthttp.StatusOK, reply.ConverseJSON(time.Since(sh.start)))
	return nil
}

// setStreamHeaders sets the headers of an InvokeEndpointWithResponseStream
// answer: the event stream's content type, the model's own in
// X-Amzn-SageMaker-Content-Type, and the variant.
func setStreamHeaders(h *fasthttp.ResponseHeader, props []message.Prop) {
	if ct := propValue(props, "content-type"); ct != "" {
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
	lines   *lineBuf // nil for streams that are not JSON lines
	errText string
}

func newPayloadFramer(jsonLines bool) *payloadFramer {
	f := &payloadFramer{ps: awsapi.NewPayloadStream()}
	if jsonLines {
		f.lines = &lineBuf{}
	}
	return f
}

func (f *payloadFramer) chunk(p []byte) []byte {
	if f.lines != nil {
		f.lines.feed(p, f.line)
	}
	return f.ps.Part(p)
}

// line notes the error of a worker's error line.
func (f *payloadFramer) line(b []byte) {
	if l, ok := parseLine(b); ok && l.FinishReason != nil && chatFinish(*l.FinishReason) == reasonError {
		f.errText = lineErrorText(&l, *l.FinishReason)
	}
}

func (f *payloadFramer) end() []byte {
	if f.lines != nil {
		f.lines.flush(f.line)
	}
	if f.errText == "" {
		return nil
	}
	return f.ps.Fail(modelFailure(f.errText))
}

func (f *payloadFramer) fail(p problem) ([]byte, bool) {
	return f.ps.Fail(streamFailure(p)), true
}

// converseFramer frames a worker's JSON-lines generation as ConverseStream
// events (see awsapi.ConverseStream); messageStart goes out with the first
// piece.
type converseFramer struct {
	st    *awsapi.ConverseStream
	gen   genLines
	calls callBlocks
	out   []byte
	from  time.Time
}

func newConverseFramer(sh *shape) *converseFramer {
	f := &converseFramer{st: awsapi.NewConverseStream(), from: sh.start}
	f.gen.sink = f
	return f
}

func (f *converseFramer) chunk(p []byte) []byte {
	f.out = append(f.out, f.st.Start()...)
	f.gen.feed(p)
	return f.take()
}

func (f *converseFramer) end() []byte {
	f.gen.end()
	return f.take()
}

func (f *converseFramer) fail(p problem) ([]byte, bool) {
	f.gen.fail()
	f.out = append(f.out, f.st.Fail(streamFailure(p))...)
	return f.take(), true
}

func (f *converseFramer) take() []byte {
	out := f.out
	f.out = nil
	return out
}

func (f *converseFramer) text(s string) { f.out = append(f.out, f.st.Text(s)...) }

func (f *converseFramer) toolCalls(calls []toolCallDelta) {
	for _, c := range calls {
		if f.calls.opens(c) {
			f.out = append(f.out, f.st.ToolStart(c.ID, c.Function.Name)...)
		}
		f.out = append(f.out, f.st.ToolInput(c.Function.Arguments)...)
	}
}

func (f *converseFramer) finish(reason string, usage *chatUsage, errText string) {
	if errText != "" {
		f.out = append(f.out, f.st.Fail(modelFailure(errText))...)
		return
	}
	f.out = append(f.out, f.st.Stop(converseStop(reason), usageOf(usage, f.gen.tokens), time.Since(f.from))...)
}

// callBlocks notes which tool call is open: a delta whose index differs
// from the last one's opens a new tool-use block.
type callBlocks struct {
	last int
	any  bool
}

func (c *callBlocks) opens(d toolCallDelta) bool {
	if c.any && d.Index == c.last {
		return false
	}
	c.any, c.last = true, d.Index
	return true
}

// converseStop is Converse's stop reason for a worker's finish reason: stop
// means a stop string ended the text, eos the model's end token.
func converseStop(reason string) string { return awsapi.StopReason(reason, reason == "stop") }

// usageOf is a worker's usage in Converse terms; without one, the tokens seen.
func usageOf(u *chatUsage, tokens int) awsapi.Usage {
	if u == nil {
		return awsapi.Usage{OutputTokens: tokens}
	}
	return awsapi.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
}

// modelFailure is a generation the worker itself ended with an error.
func modelFailure(msg string) awsapi.Failure {
	return awsapi.Failure{Kind: awsapi.KindModel, Status: 424, Message: msg, OriginalStatus: 424, OriginalMessage: msg}
}

// replyFolder collects a worker's JSON-lines generation into one Reply,
// for a Converse request whose model streamed its answer anyway.
type replyFolder struct {
	gen    genLines
	reply  awsapi.Reply
	calls  []toolCallDelta
	blocks callBlocks
	err    error
}

func (r *replyFolder) text(s string) { r.reply.Text += s }

func (r *replyFolder) toolCalls(calls []toolCallDelta) {
	for _, c := range calls {
		if r.blocks.opens(c) {
			r.calls = append(r.calls, c)
			continue
		}
		r.calls[len(r.calls)-1].Function.Arguments += c.Function.Arguments
	}
}

func (r *replyFolder) finish(reason string, usage *chatUsage, errText string) {
	if errText != "" {
		r.err = &workerError{code: 424, msg: errText}
		return
	}
	r.reply.StopReason, r.reply.Usage = converseStop(reason), usageOf(usage, r.gen.tokens)
	for _, c := range r.calls {
		use, err := awsapi.NewToolUse(c.ID, c.Function.Name, c.Function.Arguments)
		if err != nil {
			r.err = err
			return
		}
		r.reply.ToolUses = append(r.reply.ToolUses, use)
	}
}

// maxFolded bounds the streamed answer a Converse request collects.
const maxFolded = 16 << 20

// foldConverse answers a Converse request whose model streamed: the lines
// are collected into one Converse answer. A stream that breaks is an error.
func (s *Server) foldConverse(ctx *fasthttp.RequestCtx, job *batching.Job, resp *message.Response, sh *shape) error {
	r := &replyFolder{}
	r.gen.sink = r
	var tap finishTap
	defer func() { s.met.finished(sh.model, tap.reason) }()
	for read := 0; read < maxFolded; {
		chunk, err := resp.Stream.Next(job.Context())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		read += len(chunk)
		tap.feed(chunk)
		r.gen.feed(chunk)
	}
	r.gen.end()
	if r.err != nil {
		return r.err
	}
	writeRawJSON(ctx, fasthttp.StatusOK, r.reply.ConverseJSON(time.Since(sh.start)))
	return nil
}
