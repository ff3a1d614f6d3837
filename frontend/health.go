package frontend

import (
	"maps"
	"slices"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
)

// ping answers GET /ping with every model's state. The status is 500 when a
// model has failed, else 503 when one is unhealthy, else 200 (loading
// models count as fine, so a container is not killed while it loads).
func (s *Server) ping(ctx *fasthttp.RequestCtx) error {
	health := s.models.Health()
	if health == nil {
		health = map[string]api.ModelHealth{}
	}
	writeJSON(ctx, pingStatus(health), health)
	return nil
}

func pingStatus(health map[string]api.ModelHealth) int {
	code := fasthttp.StatusOK
	for _, h := range health {
		switch h.Status {
		case api.StatusHealthy, api.StatusLoading:
		case api.StatusFailed:
			return fasthttp.StatusInternalServerError
		default:
			code = fasthttp.StatusServiceUnavailable
		}
	}
	return code
}

// ready answers GET /v2/health/ready: an empty 200 when every model is
// Healthy, else a 503 naming the models that are not.
func (s *Server) ready(ctx *fasthttp.RequestCtx) error {
	health := s.models.Health()
	var waiting []string
	for _, name := range slices.Sorted(maps.Keys(health)) {
		if health[name].Status != api.StatusHealthy {
			waiting = append(waiting, name)
		}
	}
	if len(waiting) > 0 {
		return &httpError{sentinel: api.ErrNotReady, msg: "Models not ready: " + strings.Join(waiting, ", ") + "."}
	}
	return nil
}
