package kserve

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// The model repository extension, with Triton's meaning of "repository":
// here the model store. Index lists its folders, loaded or not; load
// registers the folder of that name (as POST /models?url=<name> would);
// unload unregisters.

// Model states of the repository index, in Triton's words.
const (
	stateReady       = "READY"
	stateLoading     = "LOADING"
	stateUnavailable = "UNAVAILABLE"
)

// indexEntry is one model of the repository index.
type indexEntry struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	State   string `json:"state"`
	Reason  string `json:"reason"`
}

// indexRequest is the repository index request object.
type indexRequest struct {
	Ready bool `json:"ready"`
}

// serveIndex answers POST /v2/repository/index: every model folder of the
// store and every registered model, sorted by name, with its state; with
// {"ready": true} only those that take requests.
func (d *Dialect) serveIndex(ctx *fasthttp.RequestCtx, _ dialect.Args) error {
	var req indexRequest
	if err := readObject(ctx.PostBody(), &req); err != nil {
		return err
	}
	store, err := d.host.Models.StoreModels()
	if err != nil {
		return err
	}
	health := d.host.Models.Health()
	names := store
	for name := range health {
		names = append(names, name)
	}
	slices.Sort(names)
	entries := []indexEntry{}
	for _, name := range slices.Compact(names) {
		e := indexEntry{Name: name, Version: version}
		e.State, e.Reason = indexState(health, name)
		if !req.Ready || e.State == stateReady {
			entries = append(entries, e)
		}
	}
	dialect.WriteJSON(ctx, fasthttp.StatusOK, entries)
	return nil
}

// indexState is a model's state and the reason for it: READY when it
// takes requests (Healthy, or loads on demand), LOADING while it loads,
// UNAVAILABLE when it has failed, has fewer live workers than its minimum,
// or is not registered ("unloaded").
func indexState(health map[string]api.ModelHealth, name string) (string, string) {
	h, ok := health[name]
	switch {
	case !ok:
		return stateUnavailable, "unloaded"
	case h.Status == api.StatusHealthy:
		return stateReady, ""
	case h.OnDemand:
		return stateReady, "not loaded: its first request loads it"
	case h.Status == api.StatusPending:
		return stateLoading, ""
	case h.Error != "":
		return stateUnavailable, h.Status + ": " + h.Error
	}
	return stateUnavailable, h.Status
}

// loadRequest is the repository load (and unload) request object.
type loadRequest struct {
	Parameters map[string]json.RawMessage `json:"parameters"`
}

// serveLoad answers POST /v2/repository/models/{m}/load: a model that is
// not registered is registered from the store's folder m (or from the
// parameter url, a folder inside allowed_model_roots) and answered once
// it has loaded; a model that failed is registered again; any other
// registered model is left as it is.
func (d *Dialect) serveLoad(ctx *fasthttp.RequestCtx, a dialect.Args) error {
	name, req, err := readLoad(ctx, a)
	if err != nil {
		return err
	}
	url, err := loadURL(req.Parameters, name)
	if err != nil {
		return err
	}
	if h, ok := d.host.Models.Health()[name]; ok {
		if h.Status != api.StatusFailed {
			return nil
		}
		if err := d.unregister(name); err != nil && !errors.Is(err, api.ErrModelNotFound) {
			return err
		}
	}
	_, err = d.host.Models.Register(d.host.Base, api.RegisterRequest{URL: url, ModelName: name, Synchronous: true})
	return err
}

// loadURL reads the load's parameters: url, where the model folder is
// (the store's folder of the model's name when absent). Triton's config
// and file: overrides have no meaning here.
func loadURL(params map[string]json.RawMessage, name string) (string, error) {
	for k := range params {
		if k == "config" || strings.HasPrefix(k, "file:") {
			return "", dialect.BadRequestf("Load parameter %s is not supported: switchyard loads model folders as they are.", api.Quote(k))
		}
	}
	raw, ok := params["url"]
	if !ok {
		return name, nil
	}
	var url string
	if err := json.Unmarshal(raw, &url); err != nil || url == "" {
		return "", dialect.BadRequest("Load parameter url must be a folder's path or file:// URL.")
	}
	return url, nil
}

// serveUnload answers POST /v2/repository/models/{m}/unload: the model is
// unregistered; a store folder that is not registered is unloaded already.
func (d *Dialect) serveUnload(ctx *fasthttp.RequestCtx, a dialect.Args) error {
	name, _, err := readLoad(ctx, a)
	if err != nil {
		return err
	}
	err = d.unregister(name)
	if errors.Is(err, api.ErrModelNotFound) {
		store, serr := d.host.Models.StoreModels()
		if serr == nil && slices.Contains(store, name) {
			return nil
		}
	}
	return err
}

// readLoad reads the model name and the body of a load or unload.
func readLoad(ctx *fasthttp.RequestCtx, a dialect.Args) (string, loadRequest, error) {
	var req loadRequest
	name := string(a.Name)
	if err := dialect.CheckModelName(name); err != nil {
		return "", req, err
	}
	return name, req, readObject(ctx.PostBody(), &req)
}

// unregister unregisters a model and forgets its metrics series.
func (d *Dialect) unregister(name string) error {
	if err := d.host.Models.Unregister(d.host.Base, name); err != nil {
		return err
	}
	d.host.Forget(name)
	return nil
}

// readObject reads an optional JSON object body into v: an empty body
// leaves v as it is.
func readObject(body []byte, v any) error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return nil
	}
	if body[0] != '{' {
		return dialect.BadRequest("The body must be a JSON object.")
	}
	if err := json.Unmarshal(body, v); err != nil {
		return dialect.BadRequestf("The body is not a valid request object: %s.", jsonProblem(err))
	}
	return nil
}
