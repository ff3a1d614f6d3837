package djl

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// params are a management call's parameters: query parameters and, when the
// body is not empty, the fields of a JSON object. A query parameter wins
// over a body field of the same name. Empty values count as absent.
type params struct {
	query *fasthttp.Args
	body  map[string]string
}

func readParams(ctx *fasthttp.RequestCtx) (params, error) {
	p := params{query: ctx.QueryArgs()}
	body := bytes.TrimSpace(ctx.PostBody())
	if len(body) == 0 {
		return p, nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return p, dialect.BadRequest("Request body must be a JSON object.")
	}
	p.body = make(map[string]string, len(raw))
	for k, v := range raw {
		if s, ok := jsonScalar(v); ok {
			p.body[k] = s
		}
	}
	return p, nil
}

// jsonScalar returns a JSON string's text or a number's or boolean's
// literal; null is absent.
func jsonScalar(v json.RawMessage) (string, bool) {
	var s string
	if json.Unmarshal(v, &s) == nil {
		return s, true
	}
	lit := string(bytes.TrimSpace(v))
	return lit, lit != "null"
}

func (p params) get(key string) string {
	if v := p.query.Peek(key); len(v) > 0 {
		return string(v)
	}
	return p.body[key]
}

// count reads a non-negative integer; nil when absent.
func (p params) count(key string) (*int, error) {
	v := p.get(key)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return nil, dialect.BadRequestf("Parameter %s must be a non-negative integer, got %s.", key, api.Quote(v))
	}
	return &n, nil
}

// countParam names one integer parameter and where it goes.
type countParam struct {
	key string
	dst **int
}

// counts reads several integers into their destinations, in order.
func (p params) counts(list ...countParam) error {
	for _, c := range list {
		n, err := p.count(c.key)
		if err != nil {
			return err
		}
		*c.dst = n
	}
	return nil
}

// flag reads a boolean, def when absent.
func (p params) flag(key string, def bool) (bool, error) {
	v := p.get(key)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def, dialect.BadRequestf("Parameter %s must be true or false, got %s.", key, api.Quote(v))
	}
	return b, nil
}

// registerRequest reads POST /models' parameters.
func registerRequest(p params) (api.RegisterRequest, error) {
	req := api.RegisterRequest{URL: p.get("url"), ModelName: p.get("model_name")}
	if req.URL == "" {
		return req, dialect.BadRequest("Parameter url is required.")
	}
	if req.ModelName == "" {
		req.ModelName = nameFromURL(req.URL)
	}
	if err := dialect.CheckModelName(req.ModelName); err != nil {
		return req, err
	}
	err := p.counts(
		countParam{"batch_size", &req.BatchSize}, countParam{"max_batch_delay", &req.MaxBatchDelay},
		countParam{"max_idle_time", &req.MaxIdleTime}, countParam{"job_queue_size", &req.JobQueueSize},
		countParam{"min_worker", &req.MinWorker}, countParam{"max_worker", &req.MaxWorker},
	)
	if err != nil {
		return req, err
	}
	if err := checkWorkers(req.MinWorker, req.MaxWorker); err != nil {
		return req, err
	}
	req.Synchronous, err = p.flag("synchronous", true)
	return req, err
}

// scaleRequest reads PUT /models/{name}'s parameters.
func scaleRequest(p params) (api.ScaleRequest, error) {
	var req api.ScaleRequest
	err := p.counts(countParam{"min_worker", &req.MinWorker}, countParam{"max_worker", &req.MaxWorker})
	if err != nil {
		return req, err
	}
	if req.MinWorker == nil && req.MaxWorker == nil {
		return req, dialect.BadRequest("Parameter min_worker or max_worker is required.")
	}
	if err := checkWorkers(req.MinWorker, req.MaxWorker); err != nil {
		return req, err
	}
	req.Synchronous, err = p.flag("synchronous", true)
	return req, err
}

func checkWorkers(lo, hi *int) error {
	if lo != nil && hi != nil && *lo > *hi {
		return dialect.BadRequestf("Parameter min_worker (%d) must not exceed max_worker (%d).", *lo, *hi)
	}
	return nil
}

// nameFromURL derives a model name from a model url: its last path element
// without a query and without ".tar.gz".
func nameFromURL(u string) string {
	u, _, _ = strings.Cut(u, "?")
	u = strings.TrimRight(u, "/")
	if i := strings.LastIndexByte(u, '/'); i >= 0 {
		u = u[i+1:]
	}
	return dialect.TrimArchive(u)
}

// optBool reads a boolean; nil when absent.
func optBool(p params, key string) (*bool, error) {
	if p.get(key) == "" {
		return nil, nil
	}
	b, err := p.flag(key, false)
	if err != nil {
		return nil, err
	}
	return &b, nil
}
