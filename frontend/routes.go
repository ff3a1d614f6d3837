package frontend

import (
	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/frontend/aws"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/frontend/djl"
	"github.com/switchyard/switchyard/frontend/kserve"
	"github.com/switchyard/switchyard/frontend/openai"
)

// routeTable lists the API dialects the front-end speaks, then the core's
// own routes. A request's path goes to the first that matches it.
type routeTable []dialect.Dialect

// newRouteTable makes the route table: one line per dialect. Adding a
// dialect is adding its package and its line here.
func newRouteTable(h dialect.Host, own dialect.Dialect) routeTable {
	return routeTable{
		djl.New(h),    // /invocations, /models/{name}/invoke, /predictions, /ping; /models
		openai.New(h), // /v1/...
		aws.New(h),    // /endpoints/{name}/..., /model/{modelId}/converse[-stream]
		kserve.New(h), // /v2, /v2/health/..., /v2/models/...; /v2/repository/...
		own,           // /metrics
	}
}

// match finds the route of path, with its variable segments; nil when no
// dialect has one.
func (t routeTable) match(path []byte) (*dialect.Route, dialect.Args) {
	p := dialect.SplitPath(path)
	for _, d := range t {
		if r, a, ok := d.Match(p); ok {
			return r, a
		}
	}
	return nil, dialect.Args{}
}

// coreRoutes are the routes the core serves itself: GET /metrics on the
// management listener.
type coreRoutes struct {
	metrics dialect.Route
}

func newCoreRoutes(metrics fasthttp.RequestHandler) *coreRoutes {
	serve := func(ctx *fasthttp.RequestCtx, _ dialect.Args) error {
		metrics(ctx)
		return nil
	}
	return &coreRoutes{metrics: dialect.Route{Plane: dialect.Management, Methods: dialect.Get | dialect.Head, Serve: serve}}
}

// Match takes /metrics.
func (c *coreRoutes) Match(p dialect.Path) (*dialect.Route, dialect.Args, bool) {
	if p.Is(1, "metrics") {
		return &c.metrics, dialect.Args{}, true
	}
	return nil, dialect.Args{}, false
}
