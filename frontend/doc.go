// Package frontend serves switchyard's HTTP API with fasthttp: the inference
// routes (SageMaker's /invocations and /models/{name}/invoke, DJL's
// /predictions, OpenAI's /v1/chat/completions and /v1/models, the AWS
// runtime APIs SageMaker Runtime InvokeEndpoint and Bedrock Runtime
// Converse, /ping and the KServe v2 health routes), the management routes
// (list, describe, register, scale and unregister models) and the
// Prometheus /metrics page. The inference listener also takes cleartext
// HTTP/2, which it forwards to itself as HTTP/1.1 (h2c.go).
//
// The package knows nothing of worker processes. It declares the small
// [Models] interface it needs and turns each inference request into a
// [batching.Job] that it hands to Models.Submit and then waits on. The body is
// copied out of fasthttp's request context before the job leaves the
// handler, and while a job waits or its answer streams the handler watches
// the client's socket so that a client that hangs up cancels the job's
// context.
//
// Streamed answers pass through a framer: JSON lines go out as they are
// (with a last error line when the stream breaks), as server-sent events
// when the client asks for text/event-stream, as OpenAI
// chat.completion.chunk events on the chat route, or as AWS event streams
// on the AWS routes (the wire shapes are package awsapi's).
//
// Handlers return errors; exactly one function, Server.writeError, turns any
// error into an error answer with its status code, in the shape of the
// request's API (switchyard's {"code", "type", "message"}, OpenAI's on
// /v1/..., SageMaker's or Bedrock's on theirs), and logs server-side
// failures. docs/api.md is the HTTP reference.
package frontend
