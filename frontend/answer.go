package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/message"
)

var (
	errNoAnswer  = errors.New("frontend: the model answered nothing")
	errBadStatus = errors.New("frontend: the model answered with an invalid status")
)

// maxErrorStream bounds how much of a streamed error answer is read to
// build its message.
const maxErrorStream = 64 << 10

// answer has the dialect write a finished job's answer (spec.Reply). It
// reports whether the body streams, in which case the stream's Close
// cancels the job and counts the request.
func (s *Server) answer(job *batching.Job, req dialect.Request, spec dialect.Job) (bool, error) {
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
		w.Model = spec.Model
		return false, w
	}
	a := dialect.Answer{Request: req, Model: spec.Model, Code: code, Props: resp.Props, Body: resp.Body}
	if resp.Stream == nil {
		s.met.finished(spec.Model, dialect.PropValue(resp.Props, propFinishReason))
		return false, spec.Reply.Whole(a)
	}
	return s.stream(a, job, resp.Stream, spec.Reply)
}

// stream lends a streamed answer to the dialect's Reply, which starts it
// through its framer or reads it whole. A started stream is handed to
// fasthttp: the client's socket is watched until it ends, so that a client
// that leaves between chunks cancels the job at once, which makes the
// worker stop generating for it.
func (s *Server) stream(a dialect.Answer, job *batching.Job, st *message.Stream, r dialect.Reply) (bool, error) {
	b := &streamBody{
		srv: s, hctx: a.Ctx, stream: st, job: job,
		model: a.Model, code: a.Code, start: a.Ctx.Time(), id: job.ID,
	}
	err := r.Stream(a, b)
	b.hctx = nil
	switch {
	case !b.started:
		s.met.finished(a.Model, b.tap.reason) // the Reply read the stream whole
		return false, err
	case err != nil: // a Reply that failed after Start: the stream is dropped
		b.abandon(err)
		return false, err
	}
	a.Ctx.SetBodyStream(b, -1)
	return true, nil
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

// workerFailure turns a worker's error answer into a WorkerError: a 4xx
// body already in the error shape passes through, anything else becomes
// the shape with the worker's text as message.
func workerFailure(ctx context.Context, resp *message.Response, code int) *dialect.WorkerError {
	body := resp.Body
	if resp.Stream != nil {
		body = drain(ctx, resp.Stream, maxErrorStream)
	}
	param, reason := workerDetails(body)
	if code < 500 && isProblem(body) {
		return &dialect.WorkerError{Code: code, Msg: string(body), Raw: body, Body: body, Param: param, Reason: reason}
	}
	return &dialect.WorkerError{Code: code, Msg: workerMessage(body, resp.Message, code), Body: body, Param: param, Reason: reason}
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
