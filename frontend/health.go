package frontend

import (
	"maps"
	"slices"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
)

// ping answers GET /ping with every model's state, by DJL Serving's rule
// (InferenceRequestHandler, ModelManager.workerStatus) with two additions
// for container platforms: 503 while a model loaded at startup has not
// finished its first load (unless Config.NoWaitModelLoading), and 503 while
// a model has fewer live workers than its minimum.
func (s *Server) ping(ctx *fasthttp.RequestCtx) error {
	health := s.models.Health()
	if health == nil {
		health = map[string]api.ModelHealth{}
	}
	writeJSON(ctx, s.pingStatus(health), health)
	return nil
}

// pingStatus is 500 when a model has FAILED; else 503 when a startup model
// is still loading or a model is Unhealthy; else 207 when a model is
// PENDING and allow_multi_status is set; else 200. A model that loads on
// demand (unloaded, or loading for its requests) is PENDING but counts as
// serving: it takes requests.
func (s *Server) pingStatus(health map[string]api.ModelHealth) int {
	var failed, waiting, pending bool
	for _, h := range health {
		if h.OnDemand {
			continue
		}
		switch h.Status {
		case api.StatusHealthy:
		case api.StatusPending:
			pending = true
			waiting = waiting || h.StartupLoading && !s.cfg.NoWaitModelLoading
		case api.StatusFailed:
			failed = true
		default:
			waiting = true
		}
	}
	switch {
	case failed:
		return fasthttp.StatusInternalServerError
	case waiting:
		return fasthttp.StatusServiceUnavailable
	case pending && s.cfg.AllowMultiStatus:
		return fasthttp.StatusMultiStatus
	}
	return fasthttp.StatusOK
}

// ready answers GET /v2/health/ready: an empty 200 when every model is
// Healthy or loads on demand, else a 503 naming the models that are not.
func (s *Server) ready(ctx *fasthttp.RequestCtx) error {
	health := s.models.Health()
	var waiting []string
	for _, name := range slices.Sorted(maps.Keys(health)) {
		if h := health[name]; h.Status != api.StatusHealthy && !h.OnDemand {
			waiting = append(waiting, name)
		}
	}
	if len(waiting) > 0 {
		return &httpError{sentinel: api.ErrNotReady, msg: "Models not ready: " + strings.Join(waiting, ", ") + "."}
	}
	return nil
}
