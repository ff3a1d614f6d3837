package frontend

import (
	"bytes"
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/frontend/awsapi"
)

// apiKind is the API whose shapes an answer takes: its error bodies and,
// for the AWS runtime APIs, its answers.
type apiKind uint8

const (
	apiSwitchyard apiKind = iota // DJL's and SageMaker's hosting contract: {"code", "type", "message"}
	apiOpenAI                    // /v1/...: {"error": {"message", "type", "param", "code"}}
	apiSageMaker                 // SageMaker Runtime: x-amzn-ErrorType and {"Message", ...}
	apiBedrock                   // Bedrock Runtime: x-amzn-ErrorType and {"message", ...}
)

// apiOf returns the API a route belongs to.
func apiOf(r route) apiKind {
	switch r {
	case routeChat, routeV1Models, routeV1Model:
		return apiOpenAI
	case routeSMInvoke, routeSMStream:
		return apiSageMaker
	case routeConverse, routeConverseStream:
		return apiBedrock
	}
	return apiSwitchyard
}

// apiOfPath returns the API of a request path, also for paths that match no
// route: anything under /v1/ is OpenAI's.
func apiOfPath(path []byte) apiKind {
	r, _ := matchRoute(path)
	if r == routeNone && bytes.HasPrefix(path, []byte("/v1/")) {
		return apiOpenAI
	}
	return apiOf(r)
}

// paramError is a 400 about one request field, with OpenAI's reason word
// when one applies ("unsupported_parameter", ...).
type paramError struct {
	param, code, msg string
}

func (e *paramError) Error() string { return e.msg }
func (e *paramError) Unwrap() error { return api.ErrBadRequest }

// errNotChat means a Converse request's model answered something that is
// not a chat completion.
var errNotChat = awsapi.ErrNotChat

// writeShaped writes the error answer p in the shape of the request's API;
// it reports false for switchyard's own shape, which writeError writes.
func (s *Server) writeShaped(ctx *fasthttp.RequestCtx, p problem, err error) bool {
	switch apiOfPath(ctx.Path()) {
	case apiOpenAI:
		writeJSON(ctx, p.Code, openAIErrorOf(p, err))
	case apiSageMaker:
		writeAWSError(ctx, awsapi.SageMakerError(s.failureOf(p, err)))
	case apiBedrock:
		writeAWSError(ctx, awsapi.BedrockError(s.failureOf(p, err)))
	default:
		return false
	}
	return true
}

// openAIError is OpenAI's error body.
type openAIError struct {
	Error openAIErrorDetail `json:"error"`
}

type openAIErrorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// openAIErrorOf is p in OpenAI's shape: type invalid_request_error for 4xx
// (rate_limit_error for 429), server_error for 5xx; param and code name the
// field and the reason when the front-end or the handler said them.
func openAIErrorOf(p problem, err error) openAIError {
	d := openAIErrorDetail{Message: p.Message, Type: "invalid_request_error"}
	switch {
	case p.Code == 429:
		d.Type = "rate_limit_error"
	case p.Code >= 500:
		d.Type = "server_error"
	}
	param, code := errorDetails(err)
	if code == "" && errors.Is(err, api.ErrModelNotFound) {
		code = "model_not_found"
	}
	if param != "" {
		d.Param = &param
	}
	if code != "" {
		d.Code = &code
	}
	return openAIError{Error: d}
}

// errorDetails returns the field and the reason word an error names, if any.
func errorDetails(err error) (param, code string) {
	if pe, ok := errors.AsType[*paramError](err); ok {
		return pe.param, pe.code
	}
	if w, ok := errors.AsType[*workerError](err); ok {
		return w.param, w.reason
	}
	return "", ""
}

// writeAWSError writes an AWS error answer.
func writeAWSError(ctx *fasthttp.RequestCtx, a awsapi.ErrorAnswer) {
	ctx.Response.Header.Set(awsapi.HeaderErrorType, a.Code)
	writeRawJSON(ctx, a.Status, a.Body)
}

// failureOf describes an error for the AWS shapes.
func (s *Server) failureOf(p problem, err error) awsapi.Failure {
	f := awsapi.Failure{Status: p.Code, Message: p.Message}
	if w, ok := errors.AsType[*workerError](err); ok {
		f.Kind, f.OriginalStatus, f.OriginalMessage, f.Resource = awsapi.KindModel, w.code, w.original(), w.model
		return f
	}
	switch {
	case errors.Is(err, errNotChat):
		f.Kind, f.OriginalStatus, f.OriginalMessage = awsapi.KindModel, fasthttp.StatusOK, p.Message
	case errors.Is(err, errNoRoute), errors.Is(err, errMethod):
		f.Kind = awsapi.KindNoRoute
	case errors.Is(err, batching.ErrQueueFull):
		f.Kind = awsapi.KindThrottled
	case errors.Is(err, api.ErrModelNotFound):
		f.Kind = awsapi.KindNotFound
	case errors.Is(err, api.ErrPredictTimeout):
		f.Kind = awsapi.KindTimeout
	case p.Code == fasthttp.StatusServiceUnavailable:
		f.Kind = awsapi.KindUnavailable
	case p.Code < 500:
		f.Kind = awsapi.KindInvalid
	default:
		f.Kind = awsapi.KindInternal
	}
	return f
}

// streamFailure describes a stream that broke after its first piece: the
// server could not go on (503), or else the model broke it.
func streamFailure(p problem) awsapi.Failure {
	if p.Code == fasthttp.StatusServiceUnavailable {
		return awsapi.Failure{Kind: awsapi.KindUnavailable, Status: p.Code, Message: p.Message}
	}
	return awsapi.Failure{Kind: awsapi.KindModel, Status: p.Code, Message: p.Message,
		OriginalStatus: p.Code, OriginalMessage: p.Message}
}
