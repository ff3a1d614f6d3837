package djl

import (
	"github.com/switchyard/switchyard/frontend/dialect"
)

// Dialect serves DJL's and SageMaker's hosting and management routes.
type Dialect struct {
	host dialect.Host

	invocations, invoke, predict, ping dialect.Route // inference
	models, model                      dialect.Route // management
}

// New returns the dialect, serving h.Models.
func New(h dialect.Host) *Dialect {
	d := &Dialect{host: h}
	post := dialect.Route{Plane: dialect.Inference, Methods: dialect.Post}
	d.invocations, d.invoke, d.predict = post, post, post
	d.invocations.Decode = d.decodeTarget
	d.invoke.Decode, d.predict.Decode = d.decodeNamed, d.decodeNamed
	d.ping = dialect.Route{Plane: dialect.Inference, Methods: dialect.Get | dialect.Head, Serve: d.servePing}
	d.models = dialect.Route{Plane: dialect.Management, Methods: dialect.Get | dialect.Head | dialect.Post, Serve: d.serveModels}
	d.model = dialect.Route{Plane: dialect.Management,
		Methods: dialect.Get | dialect.Head | dialect.Put | dialect.Delete, Serve: d.serveModel}
	return d
}

// Match takes /invocations, /ping, /models, /models/{name},
// /models/{name}/invoke and /predictions/{name}[/{version}].
func (d *Dialect) Match(p dialect.Path) (*dialect.Route, dialect.Args, bool) {
	s := p.Segs
	switch {
	case p.Is(1, "invocations"):
		return &d.invocations, dialect.Args{}, true
	case p.Is(1, "ping"):
		return &d.ping, dialect.Args{}, true
	case p.Is(1, "models"):
		return &d.models, dialect.Args{}, true
	case p.Is(2, "models"):
		return &d.model, dialect.Args{Name: s[1]}, true
	case p.Is(3, "models") && string(s[2]) == "invoke":
		return &d.invoke, dialect.Args{Name: s[1]}, true
	case p.Is(2, "predictions"), p.Is(3, "predictions"):
		return &d.predict, dialect.Args{Name: s[1], Version: s[2]}, true
	}
	return nil, dialect.Args{}, false
}
