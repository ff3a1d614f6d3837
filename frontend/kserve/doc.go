// Package kserve is the front-end's dialect of the Open Inference Protocol
// (KServe v2, Triton's HTTP API): server metadata and health (GET /v2,
// /v2/health/live, /v2/health/ready), model metadata and readiness
// (GET /v2/models/{m}[/versions/{v}][/ready]) and inference
// (POST /v2/models/{m}[/versions/{v}]/infer, with the binary tensor data
// extension) on the inference listener; the model repository extension
// (POST /v2/repository/index, /v2/repository/models/{m}/load and /unload)
// on the management listener. Its errors take the protocol's shape,
// {"error": "..."}.
//
// An inference request's tensors reach the worker as DJL's NDList
// (content-type tensor/ndlist), which handlers read with
// Input.get_as_numpy(); the handler answers an NDList (Output.add_as_numpy),
// which becomes the response's output tensors.
package kserve
