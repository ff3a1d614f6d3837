// Package agent is switchyard's agent runtime: a managed reasoning model
// plans and decides when to call a tool, and the tool is a fine-tuned small
// model on an endpoint, behind the hosted agent runtime's HTTP contract
// (POST /invocations with {"prompt"} answered {"result"}, GET /ping), and
// the service's InvokeAgentRuntime route (POST /runtimes/{arn}/invocations),
// so that the SDKs' own call reaches it through an endpoint override.
//
// The two services stay two: the reasoning model is called only through
// Bedrock Runtime's Converse and ConverseStream (PlannerAPI), the small
// model only through SageMaker Runtime's InvokeEndpoint (EndpointAPI), each
// with its own AWS SDK for Go v2 client. Pointed at a local switchyard
// (AWS_ENDPOINT_URL_BEDROCK_RUNTIME, AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME), the
// same code runs on one machine against models switchyard serves.
//
// A Course is the tool: its name and description (the reasoning model's
// only guide to when to use it), the system prompt the small model was
// trained with, and its max_tokens. Agent runs the loop; Server serves the
// contract; docs/agent.md describes both.
//
// The package imports no other switchyard package.
package agent
