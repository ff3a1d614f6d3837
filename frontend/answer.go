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
)

var (
	errNoAnswer  = errors.New("frontend: the model answered nothing")
	errBadStatus = errors.New("frontend: the model answered with an invalid status")
)

// maxErrorStream bounds how much of a streamed error answer is read to
// build its message.
const maxErrorStream = 64 << 10

// answer writes a finished job's response. It reports whether the body
// streams, in which case the stream's Close cancels the job's context and
// counts the request.
func (s *Server) answer(ctx *fasthttp.RequestCtx, job *batching.Job, cancel context.CancelCauseFunc, model string) (bool, error) {
	resp, err := job.Result()
	if err != nil {
		return false, err
	}
	code, err := answerCode(resp)
	if err != nil {
		return false, err
	}
	if code >= 400 {
		return false, workerFailure(job.Context(), resp, code)
	}
	ctx.SetStatusCode(code)
	copyProps(&ctx.Response.Header, resp.Props)
	if resp.Stream == nil {
		ctx.Response.SetBodyRaw(resp.Body)
		return false, nil
	}
	rctx, rcancel := context.WithCancelCause(s.base)
	ctx.SetBodyStream(&streamBody{
		srv: s, ctx: rctx, stop: rcancel, stream: resp.Stream, cancel: cancel,
		model: model, code: code, start: ctx.Time(), id: job.ID,
	}, -1)
	return true, nil
}

// answerCode is the status of a worker's response: 0 means 200, and
// anything outside 200-599 is the server's fault.
func answerCode(resp *batching.Response) (int, error) {
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
func workerFailure(ctx context.Context, resp *batching.Response, code int) error {
	body := resp.Body
	if resp.Stream != nil {
		body = drain(ctx, resp.Stream, maxErrorStream)
	}
	if code < 500 && isProblem(body) {
		return &workerError{code: code, msg: string(body), raw: body}
	}
	return &workerError{code: code, msg: workerMessage(body, resp.Message, code)}
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
func drain(ctx context.Context, st *batching.Stream, limit int) []byte {
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
func copyProps(h *fasthttp.ResponseHeader, props map[string]string) {
	for k, v := range props {
		if skippedProp(k) || !validHeaderName(k) || !validHeaderValue(v) {
			continue
		}
		h.Set(k, v)
	}
}

var skippedProps = [...]string{
	"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
	"te", "trailer", "transfer-encoding", "upgrade", "content-length", "x-request-id",
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

// streamBody feeds a batching.Stream to fasthttp as a chunked body. fasthttp
// writes each Read as one chunk and flushes it, so the headers leave with
// the first chunk. fasthttp calls Close when the body is done or the
// client is gone; Close cancels the job's context and counts the request.
// Reads wait under ctx, a child of the server's base context, so that a
// forced shutdown ends a stream whose worker has gone quiet.
// A stream that ends with an error fails the Read, which makes fasthttp
// drop the connection without the closing chunk, so the client sees a
// truncated body rather than a complete one.
type streamBody struct {
	srv    *Server
	ctx    context.Context
	stop   context.CancelCauseFunc // ends ctx
	stream *batching.Stream
	cancel context.CancelCauseFunc // ends the job's context
	model  string
	code   int
	start  time.Time
	id     string

	rest   []byte
	err    error
	closed bool
}

func (b *streamBody) Read(p []byte) (int, error) {
	for len(b.rest) == 0 {
		chunk, err := b.stream.Next(b.ctx)
		if errors.Is(err, io.EOF) {
			return 0, io.EOF
		}
		if err != nil {
			b.err = err
			return 0, fmt.Errorf("frontend: stream broken: %w", err)
		}
		b.rest = chunk
	}
	n := copy(p, b.rest)
	b.rest = b.rest[n:]
	return n, nil
}

func (b *streamBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	b.cancel(context.Cause(b.ctx))
	b.stop(nil)
	b.srv.met.observe(b.model, b.code, time.Since(b.start))
	if b.err != nil {
		b.srv.log.Warn("streamed answer broken off", zap.String("request_id", b.id), zap.Error(b.err))
	}
	return nil
}
