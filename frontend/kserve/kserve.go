package kserve

import (
	"github.com/switchyard/switchyard/frontend/dialect"
)

// Dialect serves the Open Inference Protocol's routes.
type Dialect struct {
	host dialect.Host

	server, live, ready, model, modelReady, infer dialect.Route // inference
	index, load, unload                           dialect.Route // management: the model repository
	other                                         dialect.Route // any other /v2 path: a 404 in the protocol's shape
}

// New returns the dialect, serving h.Models.
func New(h dialect.Host) *Dialect {
	d := &Dialect{host: h}
	get := dialect.Route{Plane: dialect.Inference, Methods: dialect.Get | dialect.Head, WriteError: writeError}
	d.server, d.live, d.ready, d.model, d.modelReady = get, get, get, get, get
	d.server.Serve, d.live.Serve, d.ready.Serve = d.serveServer, d.serveLive, d.serveReady
	d.model.Serve, d.modelReady.Serve = d.serveModel, d.serveModelReady
	d.infer = dialect.Route{Plane: dialect.Inference, Methods: dialect.Post, Decode: d.decodeInfer, WriteError: writeError}
	manage := dialect.Route{Plane: dialect.Management, Methods: dialect.Post, WriteError: writeError}
	d.index, d.load, d.unload = manage, manage, manage
	d.index.Serve, d.load.Serve, d.unload.Serve = d.serveIndex, d.serveLoad, d.serveUnload
	d.other = dialect.Route{WriteError: writeError}
	return d
}

// Match takes /v2, /v2/health/{live,ready},
// /v2/models/{m}[/versions/{v}][/ready|/infer], /v2/repository/index and
// /v2/repository/models/{m}/{load,unload}; any other path under /v2 is
// claimed for the protocol's 404.
func (d *Dialect) Match(p dialect.Path) (*dialect.Route, dialect.Args, bool) {
	s, n := p.Segs, p.N
	if n == 0 || string(s[0]) != "v2" {
		return nil, dialect.Args{}, false
	}
	switch {
	case n == 1:
		return &d.server, dialect.Args{}, true
	case p.Is(3, "v2", "health", "live"):
		return &d.live, dialect.Args{}, true
	case p.Is(3, "v2", "health", "ready"):
		return &d.ready, dialect.Args{}, true
	case p.Is(3, "v2", "repository", "index"):
		return &d.index, dialect.Args{}, true
	case p.Is(5, "v2", "repository", "models") && string(s[4]) == "load":
		return &d.load, dialect.Args{Name: s[3]}, true
	case p.Is(5, "v2", "repository", "models") && string(s[4]) == "unload":
		return &d.unload, dialect.Args{Name: s[3]}, true
	case n >= 3 && string(s[1]) == "models":
		return d.matchModel(p)
	}
	return &d.other, dialect.Args{}, true
}

// matchModel takes /v2/models/{m}[/versions/{v}][/ready|/infer].
func (d *Dialect) matchModel(p dialect.Path) (*dialect.Route, dialect.Args, bool) {
	s, n := p.Segs, p.N
	a := dialect.Args{Name: s[2]}
	if n >= 5 && string(s[3]) == "versions" {
		a.Version = s[4]
		n -= 2
		copy(s[3:], s[5:])
	}
	switch {
	case n == 3:
		return &d.model, a, true
	case n == 4 && string(s[3]) == "ready":
		return &d.modelReady, a, true
	case n == 4 && string(s[3]) == "infer":
		return &d.infer, a, true
	}
	return &d.other, dialect.Args{}, true
}
