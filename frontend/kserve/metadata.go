package kserve

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// version is the one version of every model: switchyard's models, like
// DJL's without a version, have no other.
const version = "1"

// serverName is the name GET /v2 reports.
const serverName = "switchyard"

// extensions are the protocol's extensions the server speaks (GET /v2).
var extensions = []string{"binary_tensor_data", "model_repository"}

// serverMetadata is the Server Metadata Response JSON Object.
type serverMetadata struct {
	Name       string   `json:"name"`
	Version    string   `json:"version"`
	Extensions []string `json:"extensions"`
}

// serveServer answers GET /v2.
func (d *Dialect) serveServer(ctx *fasthttp.RequestCtx, _ dialect.Args) error {
	v := d.host.Version
	if v == "" {
		v = "dev"
	}
	dialect.WriteJSON(ctx, fasthttp.StatusOK, serverMetadata{Name: serverName, Version: v, Extensions: extensions})
	return nil
}

// serveLive answers GET /v2/health/live: {"live": true} while the process
// serves HTTP.
func (d *Dialect) serveLive(ctx *fasthttp.RequestCtx, _ dialect.Args) error {
	dialect.WriteRawJSON(ctx, fasthttp.StatusOK, []byte(`{"live":true}`+"\n"))
	return nil
}

// serveReady answers GET /v2/health/ready: {"ready": true} when every
// model is Healthy or loads on demand, else a 503 naming the models that
// are not.
func (d *Dialect) serveReady(ctx *fasthttp.RequestCtx, _ dialect.Args) error {
	health := d.host.Models.Health()
	var waiting []string
	for _, name := range slices.Sorted(maps.Keys(health)) {
		if !serving(health[name]) {
			waiting = append(waiting, name)
		}
	}
	if len(waiting) > 0 {
		return &dialect.Error{Sentinel: api.ErrNotReady, Msg: "Models not ready: " + strings.Join(waiting, ", ") + "."}
	}
	dialect.WriteRawJSON(ctx, fasthttp.StatusOK, []byte(`{"ready":true}`+"\n"))
	return nil
}

// serving reports whether a model takes requests: it is Healthy, or it
// loads on demand (a request loads it).
func serving(h api.ModelHealth) bool { return h.Status == api.StatusHealthy || h.OnDemand }

// modelOf reads the model a path names, with its version: a version other
// than the one every model has is a model that does not exist (404).
func (d *Dialect) modelOf(a dialect.Args) (string, error) {
	name := string(a.Name)
	if err := dialect.CheckModelName(name); err != nil {
		return "", err
	}
	if a.Version != nil && string(a.Version) != version {
		return "", &dialect.Error{Sentinel: api.ErrModelNotFound,
			Msg: fmt.Sprintf("Model %s has no version %s: its one version is %s.", api.Quote(name), api.Quote(a.Version), version)}
	}
	return d.host.Aliases.Resolve(name), nil
}

// modelMetadata is the Model Metadata Response JSON Object.
type modelMetadata struct {
	Name     string           `json:"name"`
	Versions []string         `json:"versions"`
	Platform string           `json:"platform"`
	Inputs   []api.TensorSpec `json:"inputs"`
	Outputs  []api.TensorSpec `json:"outputs"`
}

// serveModel answers GET /v2/models/{m}[/versions/{v}]: the model's
// tensors as its serving.properties or its handler declared them (empty
// lists when neither did).
func (d *Dialect) serveModel(ctx *fasthttp.RequestCtx, a dialect.Args) error {
	name, err := d.modelOf(a)
	if err != nil {
		return err
	}
	sig, err := d.host.Models.Signature(name)
	if err != nil {
		return err
	}
	m := modelMetadata{Name: name, Versions: []string{version}, Platform: sig.Platform,
		Inputs: sig.Inputs, Outputs: sig.Outputs}
	if m.Inputs == nil {
		m.Inputs = []api.TensorSpec{}
	}
	if m.Outputs == nil {
		m.Outputs = []api.TensorSpec{}
	}
	dialect.WriteJSON(ctx, fasthttp.StatusOK, m)
	return nil
}

// modelReady is the body of a ready model's GET .../ready.
type modelReady struct {
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
}

// serveModelReady answers GET /v2/models/{m}[/versions/{v}]/ready: 200
// when the model takes requests (Healthy, or loads on demand), 503 while
// it loads or has failed, 404 when it is not registered.
func (d *Dialect) serveModelReady(ctx *fasthttp.RequestCtx, a dialect.Args) error {
	name, err := d.modelOf(a)
	if err != nil {
		return err
	}
	h, ok := d.host.Models.Health()[name]
	switch {
	case !ok:
		return fmt.Errorf("%w: %s", api.ErrModelNotFound, name)
	case !serving(h):
		msg := fmt.Sprintf("Model %s is not ready: %s.", name, h.Status)
		if h.Error != "" {
			msg = fmt.Sprintf("Model %s is not ready: %s: %s", name, h.Status, h.Error)
		}
		return &dialect.Error{Sentinel: api.ErrNotReady, Msg: msg}
	}
	dialect.WriteJSON(ctx, fasthttp.StatusOK, modelReady{Name: name, Ready: true})
	return nil
}
