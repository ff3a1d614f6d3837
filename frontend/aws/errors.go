package aws

import (
	"errors"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/frontend/awsapi"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// writeSageMakerError writes p in SageMaker Runtime's shape.
func writeSageMakerError(ctx *fasthttp.RequestCtx, p dialect.Problem, err error) {
	writeAWSError(ctx, awsapi.SageMakerError(failureOf(p, err)))
}

// writeBedrockError writes p in Bedrock Runtime's shape.
func writeBedrockError(ctx *fasthttp.RequestCtx, p dialect.Problem, err error) {
	writeAWSError(ctx, awsapi.BedrockError(failureOf(p, err)))
}

// writeAWSError writes an AWS error answer.
func writeAWSError(ctx *fasthttp.RequestCtx, a awsapi.ErrorAnswer) {
	ctx.Response.Header.Set(awsapi.HeaderErrorType, a.Code)
	dialect.WriteRawJSON(ctx, a.Status, a.Body)
}

// failureOf describes an error for the AWS shapes.
func failureOf(p dialect.Problem, err error) awsapi.Failure {
	f := awsapi.Failure{Status: p.Code, Message: p.Message}
	if w, ok := errors.AsType[*dialect.WorkerError](err); ok {
		f.Kind, f.OriginalStatus, f.OriginalMessage, f.Resource = awsapi.KindModel, w.Code, w.Original(), w.Model
		return f
	}
	switch {
	case errors.Is(err, awsapi.ErrNotChat):
		f.Kind, f.OriginalStatus, f.OriginalMessage = awsapi.KindModel, fasthttp.StatusOK, p.Message
	case errors.Is(err, dialect.ErrNoRoute), errors.Is(err, dialect.ErrMethod):
		f.Kind = awsapi.KindNoRoute
	case errors.Is(err, batching.ErrQueueFull):
		f.Kind = awsapi.KindThrottled
	case errors.Is(err, api.ErrModelNotFound):
		f.Kind = awsapi.KindNotFound
	case errors.Is(err, api.ErrAdapterNotFound):
		f.Kind = awsapi.KindAdapterNotFound
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
func streamFailure(p dialect.Problem) awsapi.Failure {
	if p.Code == fasthttp.StatusServiceUnavailable {
		return awsapi.Failure{Kind: awsapi.KindUnavailable, Status: p.Code, Message: p.Message}
	}
	return awsapi.Failure{Kind: awsapi.KindModel, Status: p.Code, Message: p.Message,
		OriginalStatus: p.Code, OriginalMessage: p.Message}
}

// modelFailure is a generation the worker itself ended with an error.
func modelFailure(msg string) awsapi.Failure {
	return awsapi.Failure{Kind: awsapi.KindModel, Status: 424, Message: msg, OriginalStatus: 424, OriginalMessage: msg}
}

// notChat is a model's answer that cannot be a Converse answer
// (awsapi.ErrNotChat): the core answers it 502, Bedrock's shape as a
// ModelErrorException. Its text is the error's own.
type notChat struct{ err error }

func (e notChat) Error() string   { return e.err.Error() }
func (e notChat) Unwrap() []error { return []error{e.err, dialect.ErrBadGateway} }
