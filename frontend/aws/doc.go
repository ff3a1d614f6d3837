// Package aws is the front-end's dialect of the two AWS runtime APIs, on
// the inference listener, so that the AWS SDKs reach switchyard with only
// their endpoint changed: SageMaker Runtime's InvokeEndpoint and
// InvokeEndpointWithResponseStream (POST /endpoints/{name}/invocations and
// /invocations-response-stream) and Bedrock Runtime's Converse and
// ConverseStream (POST /model/{modelId}/converse and /converse-stream).
//
// The wire shapes are package awsapi's; here they meet the core: a request
// becomes a job (a Converse request a chat request), the worker's answer a
// SageMaker answer, PayloadPart events, a Converse answer or ConverseStream
// events, and an error SageMaker's or Bedrock's error, with its
// x-amzn-ErrorType. docs/api.md says what is emulated and what is not.
package aws
