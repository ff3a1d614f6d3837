package djl

import (
	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// servePing answers GET /ping with every model's state, by DJL Serving's
// rule (InferenceRequestHandler, ModelManager.workerStatus) with two
// additions for container platforms: 503 while a model loaded at startup
// has not finished its first load (unless wait_model_loading is off), and
// 503 while a model has fewer live workers than its minimum.
func (d *Dialect) servePing(ctx *fasthttp.RequestCtx, _ dialect.Args) error {
	health := d.host.Models.Health()
	if health == nil {
		health = map[string]api.ModelHealth{}
	}
	dialect.WriteJSON(ctx, d.pingStatus(health), health)
	return nil
}

// pingStatus is 500 when a model has FAILED; else 503 when a startup model
// is still loading or a model is Unhealthy; else 207 when a model is
// PENDING and allow_multi_status is set; else 200. A model that loads on
// demand (unloaded, or loading for its requests) is PENDING but counts as
// serving: it takes requests.
func (d *Dialect) pingStatus(health map[string]api.ModelHealth) int {
	var failed, waiting, pending bool
	for _, h := range health {
		if h.OnDemand {
			continue
		}
		switch h.Status {
		case api.StatusHealthy:
		case api.StatusPending:
			pending = true
			waiting = waiting || h.StartupLoading && !d.host.NoWaitModelLoading
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
	case pending && d.host.AllowMultiStatus:
		return fasthttp.StatusMultiStatus
	}
	return fasthttp.StatusOK
}
