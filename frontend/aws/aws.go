package aws

import (
	"bytes"

	"github.com/switchyard/switchyard/frontend/dialect"
)

// Dialect serves the SageMaker Runtime and Bedrock Runtime routes.
type Dialect struct {
	models  dialect.Catalog
	aliases dialect.Aliases

	invoke, invokeStream     dialect.Route // SageMaker Runtime
	converse, converseStream dialect.Route // Bedrock Runtime
}

// New returns the dialect, serving h.Models.
func New(h dialect.Host) *Dialect {
	d := &Dialect{models: h.Models, aliases: h.Aliases}
	sm := dialect.Route{Plane: dialect.Inference, Methods: dialect.Post, WriteError: writeSageMakerError}
	d.invoke, d.invokeStream = sm, sm
	d.invoke.Decode, d.invokeStream.Decode = d.decodeInvoke, d.decodeInvokeStream
	br := dialect.Route{Plane: dialect.Inference, Methods: dialect.Post, WriteError: writeBedrockError}
	d.converse, d.converseStream = br, br
	d.converse.Decode, d.converseStream.Decode = d.decodeConverse, d.decodeConverseStream
	return d
}

// Match takes /endpoints/{name}/invocations[-response-stream] and
// /model/{modelId}/converse[-stream].
func (d *Dialect) Match(p dialect.Path) (*dialect.Route, dialect.Args, bool) {
	switch string(p.Segs[0]) {
	case "endpoints":
		return d.matchEndpoint(p)
	case "model":
		return d.matchConverse(p)
	}
	return nil, dialect.Args{}, false
}

// matchEndpoint matches SageMaker Runtime's /endpoints/{name}/... routes.
func (d *Dialect) matchEndpoint(p dialect.Path) (*dialect.Route, dialect.Args, bool) {
	if p.N != 3 {
		return nil, dialect.Args{}, false
	}
	switch string(p.Segs[2]) {
	case "invocations":
		return &d.invoke, dialect.Args{Name: p.Segs[1]}, true
	case "invocations-response-stream":
		return &d.invokeStream, dialect.Args{Name: p.Segs[1]}, true
	}
	return nil, dialect.Args{}, false
}

// matchConverse matches Bedrock Runtime's /model/{modelId}/converse and
// /converse-stream. The model id is everything between, slashes included:
// an ARN's "%2F" arrives decoded.
func (d *Dialect) matchConverse(p dialect.Path) (*dialect.Route, dialect.Args, bool) {
	if p.N < 3 {
		return nil, dialect.Args{}, false
	}
	last := p.Segs[p.N-1]
	var r *dialect.Route
	switch string(last) {
	case "converse":
		r = &d.converse
	case "converse-stream":
		r = &d.converseStream
	default:
		return nil, dialect.Args{}, false
	}
	id := bytes.TrimPrefix(bytes.TrimSuffix(bytes.TrimSuffix(p.Raw, []byte{'/'}), last), []byte("/model/"))
	return r, dialect.Args{Name: bytes.TrimSuffix(id, []byte{'/'})}, true
}
