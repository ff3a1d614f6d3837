package openai

import (
	"bytes"
	"fmt"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// Dialect serves OpenAI's routes.
type Dialect struct {
	models  dialect.Catalog
	aliases dialect.Aliases
	created int64 // the "created" time of GET /v1/models entries

	chat, list, model dialect.Route
	other             dialect.Route // a path under /v1/ that names no route
}

// New returns the dialect, serving h.Models.
func New(h dialect.Host) *Dialect {
	d := &Dialect{models: h.Models, aliases: h.Aliases, created: h.Started.Unix()}
	d.chat = dialect.Route{Plane: dialect.Inference, Methods: dialect.Post, Decode: d.decodeChat, WriteError: writeError}
	d.list = dialect.Route{Plane: dialect.Inference, Methods: dialect.Get | dialect.Head, Serve: d.serveList, WriteError: writeError}
	d.model = dialect.Route{Plane: dialect.Inference, Methods: dialect.Get | dialect.Head, Serve: d.serveModel, WriteError: writeError}
	d.other = dialect.Route{WriteError: writeError}
	return d
}

// Match takes /v1/chat/completions, /v1/models and /v1/models/{name}, and
// claims every other path under /v1/, whose 404 takes OpenAI's shape.
func (d *Dialect) Match(p dialect.Path) (*dialect.Route, dialect.Args, bool) {
	switch {
	case p.Is(3, "v1", "chat", "completions"):
		return &d.chat, dialect.Args{}, true
	case p.Is(2, "v1", "models"):
		return &d.list, dialect.Args{}, true
	case p.Is(3, "v1", "models"):
		return &d.model, dialect.Args{Name: p.Segs[2]}, true
	case bytes.HasPrefix(p.Raw, []byte("/v1/")):
		return &d.other, dialect.Args{}, true
	}
	return nil, dialect.Args{}, false
}

// model is one entry of GET /v1/models.
type model struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// modelList is the body of GET /v1/models.
type modelList struct {
	Object string  `json:"object"`
	Data   []model `json:"data"`
}

const ownedBy = "switchyard"

func (d *Dialect) entry(name string) model {
	return model{ID: name, Object: "model", Created: d.created, OwnedBy: ownedBy}
}

// serveList answers GET /v1/models with every registered model.
func (d *Dialect) serveList(ctx *fasthttp.RequestCtx, _ dialect.Args) error {
	names := d.models.Names()
	list := modelList{Object: "list", Data: make([]model, 0, len(names))}
	for _, n := range names {
		list.Data = append(list.Data, d.entry(n))
	}
	dialect.WriteJSON(ctx, fasthttp.StatusOK, list)
	return nil
}

// serveModel answers GET /v1/models/{name}.
func (d *Dialect) serveModel(ctx *fasthttp.RequestCtx, a dialect.Args) error {
	name := string(a.Name)
	if err := dialect.CheckModelName(name); err != nil {
		return err
	}
	if !dialect.HasModel(d.models, name) {
		return fmt.Errorf("%w: %s", api.ErrModelNotFound, name)
	}
	dialect.WriteJSON(ctx, fasthttp.StatusOK, d.entry(name))
	return nil
}
