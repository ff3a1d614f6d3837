package openai

import (
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// paramError is a 400 about one request field, with OpenAI's reason word
// when one applies ("unsupported_parameter", ...).
type paramError struct {
	param, code, msg string
}

func (e *paramError) Error() string { return e.msg }
func (e *paramError) Unwrap() error { return api.ErrBadRequest }

// errorBody is OpenAI's error body.
type errorBody struct {
	Error errorDetail `json:"error"`
}

type errorDetail struct {
	Message string  `json:"message"`
	Type    string  `json:"type"`
	Param   *string `json:"param"`
	Code    *string `json:"code"`
}

// writeError writes p in OpenAI's shape.
func writeError(ctx *fasthttp.RequestCtx, p dialect.Problem, err error) {
	dialect.WriteJSON(ctx, p.Code, errorOf(p, err))
}

// errorOf is p in OpenAI's shape: type invalid_request_error for 4xx
// (rate_limit_error for 429), server_error for 5xx; param and code name the
// field and the reason when the front-end or the handler said them.
func errorOf(p dialect.Problem, err error) errorBody {
	d := errorDetail{Message: p.Message, Type: "invalid_request_error"}
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
	return errorBody{Error: d}
}

// errorDetails returns the field and the reason word an error names, if any.
func errorDetails(err error) (param, code string) {
	if pe, ok := errors.AsType[*paramError](err); ok {
		return pe.param, pe.code
	}
	if w, ok := errors.AsType[*dialect.WorkerError](err); ok {
		return w.Param, w.Reason
	}
	return "", ""
}
