package kserve

import (
	"maps"
	"slices"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// Dialect serves the v2 health routes.
type Dialect struct {
	models      dialect.Catalog
	live, ready dialect.Route
}

// New returns the dialect, reading model states from h.Models.
func New(h dialect.Host) *Dialect {
	d := &Dialect{models: h.Models}
	health := dialect.Route{Plane: dialect.Inference, Methods: dialect.Get | dialect.Head}
	d.live, d.ready = health, health
	d.live.Serve = func(*fasthttp.RequestCtx, dialect.Args) error { return nil }
	d.ready.Serve = d.serveReady
	return d
}

// Match takes /v2/health/live and /v2/health/ready.
func (d *Dialect) Match(p dialect.Path) (*dialect.Route, dialect.Args, bool) {
	switch {
	case p.Is(3, "v2", "health", "live"):
		return &d.live, dialect.Args{}, true
	case p.Is(3, "v2", "health", "ready"):
		return &d.ready, dialect.Args{}, true
	}
	return nil, dialect.Args{}, false
}

// serveReady answers GET /v2/health/ready: an empty 200 when every model
// is Healthy or loads on demand, else a 503 naming the models that are not.
func (d *Dialect) serveReady(*fasthttp.RequestCtx, dialect.Args) error {
	health := d.models.Health()
	var waiting []string
	for _, name := range slices.Sorted(maps.Keys(health)) {
		if h := health[name]; h.Status != api.StatusHealthy && !h.OnDemand {
			waiting = append(waiting, name)
		}
	}
	if len(waiting) > 0 {
		return &dialect.Error{Sentinel: api.ErrNotReady, Msg: "Models not ready: " + strings.Join(waiting, ", ") + "."}
	}
	return nil
}
