// Package awsapi holds the wire shapes of the two AWS runtime APIs that
// switchyard serves on its inference listener, so that the AWS SDKs reach it
// with only their endpoint changed: SageMaker Runtime's InvokeEndpoint and
// InvokeEndpointWithResponseStream, and Bedrock Runtime's Converse and
// ConverseStream.
//
// It knows nothing of HTTP servers, queues or workers. It translates a
// Converse request into switchyard's chat schema (OpenAI's, with tools),
// a chat.completion (or the pieces of a streamed generation) into a Converse
// answer, encodes AWS event streams with the AWS SDK for Go's eventstream
// encoder (PayloadPart events, Converse stream events and exception events),
// and turns a protocol-neutral Failure into each API's error: the
// x-amzn-ErrorType code and the JSON body the SDKs parse.
//
// The shapes follow the services' Smithy models as the AWS SDK for Go v2
// (service/sagemakerruntime, service/bedrockruntime) serializes them;
// docs/api.md describes what is emulated and what is not.
package awsapi
