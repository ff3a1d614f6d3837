// Package openai is the front-end's dialect of OpenAI's API, on the
// inference listener: POST /v1/chat/completions (the model named by the
// body's "model" when it is registered, else chosen as /invocations
// chooses), GET /v1/models and /v1/models/{name}.
//
// A chat answer is the worker's chat.completion with the registered
// model's name as its "model"; a streamed one becomes OpenAI's
// chat.completion.chunk events, ending with data: [DONE]. Every error on a
// path under /v1/, routes or not, takes OpenAI's shape,
// {"error": {"message", "type", "param", "code"}}. docs/api.md is the
// reference.
package openai
