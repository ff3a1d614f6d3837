package frontend

import (
	"bytes"
	"errors"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
)

const headerTimeout = "X-Request-Timeout-Ms"

// serveInference runs one request to a model and counts it; a streamed
// answer is counted when its last chunk has gone out.
func (s *Server) serveInference(ctx *fasthttp.RequestCtx, r route, a pathArgs, id string) {
	label, streaming, err := s.infer(ctx, r, a, id)
	if err != nil {
		s.writeError(ctx, err)
	}
	if !streaming {
		s.met.observe(label, ctx.Response.StatusCode(), time.Since(ctx.Time()))
	}
}

// infer picks the model, submits the job and writes its answer. label is
// the model name for metrics, "" when no registered model was reached.
func (s *Server) infer(ctx *fasthttp.RequestCtx, r route, a pathArgs, id string) (label string, streaming bool, err error) {
	var sel selectors
	in := buildInput(ctx, id, &sel)
	defer func() { s.reclaim.note(len(sel.body) + answerSize(ctx)) }()
	sh := shape{chat: r == routeChat, sse: acceptsEventStream(sel.accept), id: id, created: ctx.Time().Unix(),
		api: apiOf(r), stream: r == routeSMStream || r == routeConverseStream, start: ctx.Time()}
	model, err := s.pickModel(ctx, r, a, &sel, &sh)
	if err != nil {
		return "", false, err
	}
	sh.model = model
	if sh.api == apiBedrock {
		if err := s.converseInput(model, &in, sh.stream); err != nil {
			return knownModel(model, err), false, err
		}
	}
	now := ctx.Time()
	deadline, err := requestDeadline(sel.timeout, now)
	if err != nil {
		return "", false, err
	}
	job := batching.NewJob(id, in, now, deadline)
	if err := s.models.Submit(model, job); err != nil {
		return knownModel(model, err), false, err
	}
	streaming, err = s.await(ctx, job, &sh)
	return model, streaming, err
}

// answerSize is the size of a whole answer's body; a streamed one counts
// as 0.
func answerSize(ctx *fasthttp.RequestCtx) int {
	if ctx.Response.IsBodyStream() {
		return 0
	}
	return len(ctx.Response.Body())
}

// knownModel is the metrics label after a failed Submit: names the
// registry does not know are not labels, so clients cannot mint series.
func knownModel(model string, err error) string {
	if errors.Is(err, api.ErrModelNotFound) {
		return ""
	}
	return model
}

// await waits for the job's answer, then writes it. A client that hangs
// up meanwhile, or a forced shutdown, answers the job itself (Job.Cancel).
func (s *Server) await(ctx *fasthttp.RequestCtx, job *batching.Job, sh *shape) (bool, error) {
	if !job.Answered() {
		w := s.waits.add(job, ctx.Conn(), ctx.Time())
		<-job.Done()
		s.waits.remove(w)
	}
	return s.answer(ctx, job, sh)
}

// pickModel finds the model a request is for.
func (s *Server) pickModel(ctx *fasthttp.RequestCtx, r route, a pathArgs, sel *selectors, sh *shape) (string, error) {
	switch r {
	case routeInvoke, routePredict:
		if a.version != nil && !validModelName(a.version) {
			return "", badRequestf("Invalid model version %s.", api.Quote(a.version))
		}
		name := string(a.name)
		return name, checkModelName(name)
	case routeChat:
		return s.chatModel(ctx, sel, sh)
	case routeSMInvoke, routeSMStream:
		return s.endpointModel(ctx, string(a.name), sel)
	case routeConverse, routeConverseStream:
		return s.converseModel(string(a.name))
	}
	return s.targetModel(ctx, sel)
}

// targetModel applies /invocations' order: the SageMaker target-model
// headers, query model_name, header model_name, and finally the only
// registered model.
func (s *Server) targetModel(ctx *fasthttp.RequestCtx, sel *selectors) (string, error) {
	for _, v := range [...][]byte{sel.sagemaker, sel.target} {
		if len(v) > 0 {
			name := s.archiveTarget(string(v))
			return name, checkModelName(name)
		}
	}
	for _, v := range [...][]byte{ctx.QueryArgs().Peek("model_name"), sel.model} {
		if len(v) > 0 {
			return string(v), checkModelName(string(v))
		}
	}
	if names := s.models.Names(); len(names) == 1 {
		return names[0], nil
	}
	return "", badRequest("Parameter model_name is required.")
}

// requestDeadline reads X-Request-Timeout-Ms; no header means no deadline
// (the registry applies the model's default).
func requestDeadline(v []byte, now time.Time) (time.Time, error) {
	if len(v) == 0 {
		return time.Time{}, nil
	}
	ms, err := strconv.ParseUint(string(v), 10, 31)
	if err != nil || ms == 0 {
		return time.Time{}, badRequestf("Header %s must be a positive integer of milliseconds, at most %d.", headerTimeout, 1<<31-1)
	}
	return now.Add(time.Duration(ms) * time.Millisecond), nil
}

// selectors are the request headers that choose the model, the deadline
// and the answer's framing, noted while buildInput copies the headers, and
// the body. The headers point into fasthttp's buffers and are valid only
// while the handler runs; the body is the job's own.
type selectors struct {
	sagemaker, target, model, timeout, accept []byte
	body                                      []byte
}

// note keeps the first value of each selecting header.
func (sel *selectors) note(key string, v []byte) {
	var dst *[]byte
	switch key {
	case "x-amzn-sagemaker-target-model":
		dst = &sel.sagemaker
	case "x-target-model":
		dst = &sel.target
	case "model_name":
		dst = &sel.model
	case "x-request-timeout-ms":
		dst = &sel.timeout
	case "accept":
		dst = &sel.accept
	default:
		return
	}
	if *dst == nil {
		*dst = v
	}
}

// buildInput takes the request out of fasthttp's buffers: every header as
// a property with a lower-case name, request_id, the body as "data" and
// each query parameter as one more content item.
func buildInput(ctx *fasthttp.RequestCtx, id string, sel *selectors) message.Input {
	h := &ctx.Request.Header
	props := make([]message.Prop, 0, h.Len()+1)
	for k, v := range h.All() {
		key := lowerKey(k)
		sel.note(key, v)
		props = append(props, message.Prop{Key: key, Value: string(v)})
	}
	props = append(props, message.Prop{Key: "request_id", Value: id})
	args := ctx.QueryArgs()
	content := make([]message.Item, 0, 1+args.Len())
	sel.body = takeBody(&ctx.Request)
	content = append(content, message.Item{Key: "data", Value: sel.body})
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
	case "x-amzn-sagemaker-target-model":
		return "x-amzn-sagemaker-target-model"
	}
	return string(b)
}
