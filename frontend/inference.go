package frontend

import (
	"bytes"
	"errors"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/message"
)

const (
	headerTimeout = "X-Request-Timeout-Ms"
	propTimeout   = "x-request-timeout-ms" // the header as a job property
)

// serveInference runs one request to a model and counts it; a streamed
// answer is counted when its last chunk has gone out.
func (s *Server) serveInference(ctx *fasthttp.RequestCtx, r *dialect.Route, a dialect.Args, id string) {
	label, streaming, err := s.infer(ctx, r, a, id)
	if err != nil {
		s.writeError(ctx, r, err)
	}
	if !streaming {
		s.met.observe(label, ctx.Response.StatusCode(), time.Since(ctx.Time()))
	}
}

// infer has route r's dialect decode the request into a job, submits the
// job and has the dialect write its answer. label is the model name for
// metrics, "" when no registered model was reached. A job the model
// accepted counts as in flight until it is answered; a streamed one until
// its last chunk has gone out.
func (s *Server) infer(ctx *fasthttp.RequestCtx, r *dialect.Route, a dialect.Args, id string) (label string, streaming bool, err error) {
	req := dialect.Request{Ctx: ctx, ID: id, Args: a, Input: buildInput(ctx, id)}
	size := len(req.Body())
	defer func() { s.reclaim.note(size + answerSize(ctx)) }()
	spec, err := r.Decode(req)
	if err != nil {
		return knownModel(spec.Model, err), false, err
	}
	now := ctx.Time()
	deadline, err := requestDeadline(req.Header(propTimeout), now)
	if err != nil {
		return "", false, err
	}
	selectAdapter(&spec, s.models)
	job := batching.NewJob(id, spec.Input, now, deadline)
	err = s.models.Submit(spec.Model, job)
	if errors.Is(err, api.ErrModelNotFound) && adapterModel(&spec, s.models) {
		job = batching.NewJob(id, spec.Input, now, deadline)
		err = s.models.Submit(spec.Model, job)
	}
	if err != nil {
		return knownModel(spec.Model, err), false, err
	}
	s.met.began(spec.Model)
	streaming, err = s.await(ctx, job, req, spec)
	if !streaming {
		s.met.ended(spec.Model)
	}
	return spec.Model, streaming, err
}

// answerSize is the size of a whole answer's body; a streamed one counts
// as 0.
func answerSize(ctx *fasthttp.RequestCtx) int {
	if ctx.Response.IsBodyStream() {
		return 0
	}
	return len(ctx.Response.Body())
}

// knownModel is the metrics label of a request that failed: names the
// registry does not know are not labels, so clients cannot mint series.
func knownModel(model string, err error) string {
	if errors.Is(err, api.ErrModelNotFound) {
		return ""
	}
	return model
}

// await waits for the job's answer, then has the dialect write it. A
// client that hangs up meanwhile, or a forced shutdown, answers the job
// itself (Job.Cancel).
func (s *Server) await(ctx *fasthttp.RequestCtx, job *batching.Job, req dialect.Request, spec dialect.Job) (bool, error) {
	if !job.Answered() {
		w := s.waits.add(job, ctx.Conn(), ctx.Time())
		<-job.Done()
		s.waits.remove(w)
	}
	return s.answer(job, req, spec)
}

// requestDeadline reads X-Request-Timeout-Ms; no header means no deadline
// (the registry applies the model's default).
func requestDeadline(v string, now time.Time) (time.Time, error) {
	if len(v) == 0 {
		return time.Time{}, nil
	}
	ms, err := strconv.ParseUint(v, 10, 31)
	if err != nil || ms == 0 {
		return time.Time{}, dialect.BadRequestf("Header %s must be a positive integer of milliseconds, at most %d.", headerTimeout, 1<<31-1)
	}
	return now.Add(time.Duration(ms) * time.Millisecond), nil
}

// buildInput takes the request out of fasthttp's buffers: every header as
// a property with a lower-case name, request_id, the body as "data" and
// each query parameter as one more content item.
func buildInput(ctx *fasthttp.RequestCtx, id string) message.Input {
	h := &ctx.Request.Header
	props := make([]message.Prop, 0, h.Len()+1)
	for k, v := range h.All() {
		props = append(props, message.Prop{Key: lowerKey(k), Value: string(v)})
	}
	props = append(props, message.Prop{Key: "request_id", Value: id})
	args := ctx.QueryArgs()
	content := make([]message.Item, 0, 1+args.Len())
	content = append(content, message.Item{Key: "data", Value: takeBody(&ctx.Request)})
	for k, v := range args.All() {
		content = append(content, message.Item{Key: string(k), Value: bytes.Clone(v)})
	}
	return message.Input{Props: props, Content: content}
}

// takeBody takes the body out of req without copying it: from now on the
// bytes belong to the job, and the connection's request keeps no buffer
// of a large body for its next request (fasthttp reuses a connection's
// buffers, and would hold the largest body it ever read).
func takeBody(req *fasthttp.Request) []byte {
	return req.SwapBody(nil)
}

// lowerKey returns k in lower case as a new string; the most common header
// names come back as constants without allocating.
func lowerKey(k []byte) string {
	var buf [64]byte
	if len(k) > len(buf) {
		return string(bytes.ToLower(k))
	}
	b := buf[:len(k)]
	for i, c := range k {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b[i] = c
	}
	switch string(b) {
	case "host":
		return "host"
	case "content-type":
		return "content-type"
	case "content-length":
		return "content-length"
	case "user-agent":
		return "user-agent"
	case "accept":
		return "accept"
	case dialect.HeaderSageMakerTarget:
		return dialect.HeaderSageMakerTarget
	}
	return string(b)
}
