package djl

import (
	"github.com/switchyard/switchyard/frontend/dialect"
)

// Dialect serves DJL's and SageMaker's hosting and management routes.
type Dialect struct {
	host dialect.Host

	invocations, invoke, predict, ping dialect.Route // inference
	models, model                      dialect.Route // management
	adapters, adapter, update          dialect.Route // management: LoRA adapters
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
	d.adapters = dialect.Route{Plane: dialect.Management, Methods: dialect.Get | dialect.Head | dialect.Post,
		Serve: d.serveAdapters}
	d.adapter = dialect.Route{Plane: dialect.Management, Methods: dialect.Get | dialect.Head | dialect.Delete,
		Serve: d.serveAdapter}
	d.update = dialect.Route{Plane: dialect.Management, Methods: dialect.Post, Serve: d.serveUpdate}
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
	return d.matchAdapters(p)
}

// matchAdapters takes DJL's adapter routes, /models/{name}/adapters[/{adapter}[/update]],
// and the single-model and SageMaker forms without the model,
// /adapters[/{adapter}[/update]].
func (d *Dialect) matchAdapters(p dialect.Path) (*dialect.Route, dialect.Args, bool) {
	s, a := p.Segs, dialect.Args{}
	n := p.N
	if n >= 3 && string(s[0]) == "models" && string(s[2]) == "adapters" {
		a.Name = s[1]
		copy(s[:], s[2:])
		n -= 2
	} else if n == 0 || string(s[0]) != "adapters" {
		return nil, a, false
	}
	switch {
	case n == 1:
		return &d.adapters, a, true
	case n == 2:
		a.Adapter = s[1]
		return &d.adapter, a, true
	case n == 3 && string(s[2]) == "update":
		a.Adapter = s[1]
		return &d.update, a, true
	}
	return nil, a, false
}
