// Package djl is the front-end's dialect of DJL Serving's and SageMaker's
// hosting contract, which switchyard keeps: on the inference listener
// POST /invocations (the model chosen by SageMaker's target-model headers
// or model_name), POST /models/{name}/invoke and
// /predictions/{name}[/{version}], and GET /ping; on the management
// listener DJL's management API, /models (list, register) and
// /models/{name} (describe, scale, unregister).
//
// Its answers are the worker's own (status, properties as headers, body);
// a streamed answer goes out as it came, or, for a client that asks for
// text/event-stream, as one server-sent event per JSON line. Its errors
// take switchyard's shape, {"code", "type", "message"}, which the core
// writes. docs/api.md is the reference.
package djl
