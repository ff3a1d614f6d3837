// Package frontend is the core of switchyard's HTTP front-end: the fasthttp
// listeners (the inference one also takes cleartext HTTP/2, which it
// forwards to itself as HTTP/1.1: h2c.go), the route table, request ids,
// the framing guard and the management token, the wait list and the watch
// for clients that hang up, the streams, memory reclaim, metrics, and the
// one function that turns an error into a status. It serves GET /metrics
// itself.
//
// Everything an API decides is its dialect's, one package each, listed one
// line each in the route table (routes.go): djl (DJL's and SageMaker's
// hosting and management routes, /ping), openai (/v1/...), aws (SageMaker
// Runtime and Bedrock Runtime) and kserve (the v2 health routes). Package
// dialect is the contract between the core and them: a dialect matches its
// paths to routes; an inference route decodes its request into the core's
// job description (model, input, and the Reply that writes the answer); a
// route writes its errors in its API's shape.
//
// The core knows nothing of worker processes. It declares the small
// [Models] interface it needs and turns each inference request into a
// [batching.Job] that it hands to Models.Submit and then waits on. The body
// is copied out of fasthttp's request context before the job leaves the
// handler, and while a job waits or its answer streams the core watches the
// client's socket so that a client that hangs up cancels the job.
//
// Handlers return errors; exactly one function, Server.writeError, turns
// any error into an error answer with its status code and logs server-side
// failures; the request's route writes the body in its dialect's shape
// (switchyard's {"code", "type", "message"} where the route has none).
// docs/api.md is the HTTP reference, docs/architecture.md says how to add
// a dialect.
package frontend
