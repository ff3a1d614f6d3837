package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/frontend/awsapi"
	"github.com/switchyard/switchyard/message"
)

var (
	errNoAnswer  = errors.New("frontend: the model answered nothing")
	errBadStatus = errors.New("frontend: the model answered with an invalid status")
)

// maxErrorStream bounds how much of a streamed error answer is read to
// build its message.
const maxErrorStream = 64 << 10

// answer writes a finished job's response. It reports whether the body
// streams, in which case the stream's Close cancels the job and counts the
// request.
func (s *Server) answer(ctx *fasthttp.RequestCtx, job *batching.Job, sh *shape) (bool, error) {
	resp, err := job.Result()
	if err != nil {
		return false, err
	}
	code, err := answerCode(resp)
	if err != nil {
		return false, err
	}
	if code >= 400 {
		w := workerFailure(job.Context(), resp, code)
		w.model = sh.model
		return false, w
	}
	if resp.Stream == nil {
		s.met.finished(sh.model, propValue(resp.Props, propFinishReason))
	}
	switch {
	case resp.Stream == nil && sh.api >= apiSageMaker:
		return false, writeAWSAnswer(ctx, code, resp, sh)
	case resp.Stream == nil:
		writeAnswer(ctx, code, resp, sh)
		return false, nil
	case sh.api == apiBedrock && !sh.stream:
		return false, s.foldConverse(ctx, job, resp, sh)
	}
	return s.startStream(ctx, job, resp, code, sh)
}

// writeAnswer writes a whole answer; a chat completion gets the registered
// model's name as its "model".
func writeAnswer(ctx *fasthttp.RequestCtx, code int, resp *message.Response, sh *shape) {
	ctx.SetStatusCode(code)
	copyProps(&ctx.Response.Header, resp.Props)
	body := resp.Body
	if sh.chat && code < 300 && isJSONType(propValue(resp.Props, "content-type")) {
		if b, ok := withModel(body, sh.model); ok {
			body = b
		}
	}
	ctx.Response.SetBodyRaw(body)
}

// startStream waits for the first chunk of a streamed answer, so that a
// stream that fails before it still gets an error status, then hands the
// body to fasthttp. The client's socket is watched until the stream ends:
// a client that leaves between chunks cancels the job at once, which makes
// the worker stop generating for it.
func (s *Server) startStream(ctx *fasthttp.RequestCtx, job *batching.Job, resp *message.Response, code int, sh *shape) (bool, error) {
	f, contentType := pickFramer(resp.Props, sh)
	rctx, rcancel := context.WithCancelCause(s.base)
	b := &streamBody{
		srv: s, ctx: rctx, stop: rcancel, stream: resp.Stream, job: job, framer: f,
		model: sh.model, code: code, start: ctx.Time(), id: job.ID,
	}
	b.watch = watchPeer(ctx.Conn(), func(cause error) { rcancel(cause); job.Cancel(cause) })
	if err := b.prime(); err != nil {
		b.watch.stop()
		rcancel(err)
		return false, err
	}
	ctx.SetStatusCode(code)
	h := &ctx.Response.Header
	switch {
	case sh.api == apiBedrock:
		h.SetContentType(contentType)
	case sh.api == apiSageMaker && sh.stream:
		copyProps(h, resp.Props)
		setStreamHeaders(h, resp.Props)
	default:
		copyProps(h, resp.Props)
		if sh.api == apiSageMaker {
			h.Set(awsapi.HeaderInvokedVariant, awsapi.Variant)
		}
		if contentType == contentTypeSSE {
			h.SetContentType(contentTypeSSE)
			h.Set("Cache-Control", "no-cache")
		}
	}
	ctx.SetBodyStream(b, -1)
	return true, nil
}

// pickFramer chooses how a streamed answer is written, and returns the
// content type it takes when it is not the worker's ("" then). The AWS
// event-stream routes frame every stream: as PayloadPart events
// (InvokeEndpointWithResponseStream) or as ConverseStream events. Otherwise
// only JSON-lines streams are reframed: into chat.completion.chunk events
// on the chat route, into one event per line for a client that asked for
// text/event-stream, else passed through with an error line when they
// break. Other streams pass through untouched.
func pickFramer(props []message.Prop, sh *shape) (framer, string) {
	lines := isJSONLines(propValue(props, "content-type"))
	switch {
	case sh.api == apiSageMaker && sh.stream:
		return newPayloadFramer(lines), awsapi.ContentTypeEventStream
	case sh.api == apiBedrock:
		return newConverseFramer(sh), awsapi.ContentTypeEventStream
	case !lines:
		return rawFramer{}, ""
	case sh.chat:
		return newChatFramer(*sh), contentTypeSSE
	case sh.sse:
		return &sseFramer{}, contentTypeSSE
	}
	return &linesFramer{}, ""
}

// answerCode is the status of a worker's response: 0 means 200, and
// anything outside 200-599 is the server's fault.
func answerCode(resp *message.Response) (int, error) {
	switch {
	case resp == nil:
		return 0, errNoAnswer
	case resp.Code == 0:
		return fasthttp.StatusOK, nil
	case resp.Code < 200 || resp.Code > 599:
		return 0, fmt.Errorf("%w: %d", errBadStatus, resp.Code)
	}
	return resp.Code, nil
}

// workerFailure turns a worker's error answer into a workerError: a 4xx
// body already in the error shape passes through, anything else becomes
// the shape with the worker's text as message.
func workerFailure(ctx context.Context, resp *message.Response, code int) *workerError {
	body := resp.Body
	if resp.Stream != nil {
		body = drain(ctx, resp.Stream, maxErrorStream)
	}
	param, reason := workerDetails(body)
	if code < 500 && isProblem(body) {
		return &workerError{code: code, msg: string(body), raw: body, body: body, param: param, reason: reason}
	}
	return &workerError{code: code, msg: workerMessage(body, resp.Message, code), body: body, param: param, reason: reason}
}

// workerDetails returns the "param" and "error_code" strings of a worker's
// JSON error body (docs/protocol.md), when it has them.
func workerDetails(body []byte) (param, reason string) {
	var d struct {
		Param     string `json:"param"`
		ErrorCode string `json:"error_code"`
	}
	if json.Unmarshal(body, &d) != nil {
		return "", ""
	}
	return d.Param, d.ErrorCode
}

// isProblem reports whether body is a JSON object with a numeric "code" and
// string "type" and "message".
func isProblem(body []byte) bool {
	var p struct {
		Code    *json.Number `json:"code"`
		Type    *string      `json:"type"`
		Message *string      `json:"message"`
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if d.Decode(&p) != nil || d.More() {
		return false
	}
	return p.Code != nil && p.Type != nil && p.Message != nil
}

// workerMessage picks the text of a worker's error: the body's "error" or
// "message" string when it is JSON, else the body, else the response
// message, else the status text.
func workerMessage(body []byte, message string, code int) string {
	var obj struct {
		Error   any `json:"error"`
		Message any `json:"message"`
	}
	if json.Unmarshal(body, &obj) == nil {
		for _, v := range [...]any{obj.Error, obj.Message} {
			if s, ok := v.(string); ok && s != "" {
				return s
			}
		}
	}
	if text := strings.TrimSpace(string(body)); text != "" {
		return text
	}
	if message != "" {
		return message
	}
	return fasthttp.StatusMessage(code)
}

// drain reads a stream to its end (or limit bytes) and returns what came.
func drain(ctx context.Context, st *message.Stream, limit int) []byte {
	var out []byte
	for len(out) < limit {
		chunk, err := st.Next(ctx)
		if err != nil {
			break
		}
		out = append(out, chunk...)
	}
	return out
}

// copyProps sets a worker's response properties as headers, skipping
// hop-by-hop ones, Content-Length, x-request-id and anything that is not a
// valid header.
// A later property of the same name replaces an earlier one. The
// properties are read where they lie: the answers of one batch share them.
func copyProps(h *fasthttp.ResponseHeader, props []message.Prop) {
	for _, p := range props {
		if skippedProp(p.Key) || !validHeaderName(p.Key) || !validHeaderValue(p.Value) {
			continue
		}
		h.Set(p.Key, p.Value)
	}
}

// skippedProps are never copied: hop-by-hop headers, the framing the
// server sets itself, and request_tracking_id, the wire's rolling-batch tag.
var skippedProps = [...]string{
	"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
	"te", "trailer", "transfer-encoding", "upgrade", "content-length", "x-request-id",
	"request_tracking_id",
}

func skippedProp(k string) bool {
	for _, p := range skippedProps {
		if len(p) == len(k) && strings.EqualFold(p, k) {
			return true
		}
	}
	return false
}

// validHeaderName reports whether k is an RFC 9110 token.
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether v holds no control character but tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// streamBody feeds a message.Stream to fasthttp as a chunked body, through
// a framer. fasthttp writes each Read as one chunk and flushes it, so the
// headers leave with the first chunk. fasthttp calls Close when the body is
// done or the client is gone (a write failed); Close cancels the job, which
// makes the worker stop a tracked request, and counts the request. Reads
// wait under ctx, a child of the server's base context, so that a forced
// shutdown ends a stream whose worker has gone quiet; the peer watch
// cancels ctx and the job as soon as the client hangs up.
// A stream that breaks with an error ends the way its framer says: with a
// last line or event naming the error, or, for opaque streams, by failing
// the Read, which makes fasthttp drop the connection without the closing
// chunk, so the client sees a truncated body rather than a complete one.
type streamBody struct {
	srv    *Server
	ctx    context.Context
	stop   context.CancelCauseFunc // ends ctx
	stream *message.Stream
	job    *batching.Job // canceled at Close
	framer framer
	tap    finishTap
	watch  *peerWatch
	model  string
	code   int
	start  time.Time
	id     string

	rest   []byte
	ended  bool // the framer has written its end
	err    error
	closed bool
}

// prime takes the first chunk before any header goes out; it returns the
// reason when the stream fails first.
func (b *streamBody) prime() error {
	chunk, err := b.stream.Next(b.ctx)
	if err != nil && !errors.Is(err, io.EOF) {
		return b.cause(err)
	}
	b.frame(chunk, err)
	return nil
}

// cause is why a wait under ctx ended: ctx's cause when it is done (the
// client left, the server is stopping), else err.
func (b *streamBody) cause(err error) error {
	if b.ctx.Err() != nil {
		return context.Cause(b.ctx)
	}
	return err
}

// frame passes a chunk, or the clean end (err is io.EOF), to the framer.
func (b *streamBody) frame(chunk []byte, err error) {
	if err != nil {
		b.rest, b.ended = b.framer.end(), true
		return
	}
	b.tap.feed(chunk)
	b.rest = b.framer.chunk(chunk)
}

func (b *streamBody) Read(p []byte) (int, error) {
	for len(b.rest) == 0 {
		if b.ended {
			return 0, io.EOF
		}
		chunk, err := b.stream.Next(b.ctx)
		if err != nil && !errors.Is(err, io.EOF) {
			if ferr := b.broken(err); ferr != nil {
				return 0, ferr
			}
			continue
		}
		b.frame(chunk, err)
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

// broken handles a stream that ended with err: when the worker broke it
// and the framer can say so, its last words become the rest of the body;
// otherwise (the client left, the server stops, an opaque stream) the
// returned error cuts the body off.
func (b *streamBody) broken(err error) error {
	b.err = b.cause(err)
	if b.ctx.Err() == nil {
		if tail, ok := b.framer.fail(b.srv.classify(b.err)); ok {
			b.rest, b.ended = tail, true
			return nil
		}
	}
	return fmt.Errorf("frontend: stream broken: %w", b.err)
}

func (b *streamBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	b.watch.stop()
	cause := context.Cause(b.ctx)
	b.job.Cancel(cause)
	b.stop(nil)
	code := b.code
	if errors.Is(cause, batching.ErrClientGone) {
		code = statusClientClosed
	}
	b.srv.met.observe(b.model, code, time.Since(b.start))
	b.srv.met.finished(b.model, b.tap.reason)
	if b.err != nil && code != statusClientClosed {
		b.srv.log.Warn("streamed answer broken off", zap.String("request_id", b.id), zap.Error(b.err))
	}
	return nil
}
