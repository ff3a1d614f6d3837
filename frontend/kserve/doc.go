// Package kserve is the front-end's dialect of KServe's Open Inference
// Protocol (v2): for now its health routes, GET /v2/health/live and
// /v2/health/ready, on the inference listener. Their errors take
// switchyard's shape.
package kserve
