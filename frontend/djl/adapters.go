package djl

import (
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// adapterList is the answer of GET /models/{name}/adapters, DJL's.
type adapterList struct {
	Adapters      []api.AdapterRecord `json:"adapters"`
	NextPageToken string              `json:"nextPageToken,omitempty"`
}

// adapterModel is the model an adapter route names: the path's, else the
// only registered model (DJL's rule), else, for a route that names an
// adapter (SageMaker's DELETE /adapters/{name}), the adapter's model.
func (d *Dialect) adapterModel(a dialect.Args) (string, error) {
	if len(a.Name) > 0 {
		name := string(a.Name)
		return name, dialect.CheckModelName(name)
	}
	if names := d.host.Models.Names(); len(names) == 1 {
		return names[0], nil
	}
	if len(a.Adapter) > 0 {
		if model, ok := d.host.Models.AdapterModel(string(a.Adapter)); ok {
			return model, nil
		}
	}
	return "", dialect.BadRequest("The adapter must be prefixed with a model unless there is only a single startup model used.")
}

// serveAdapters answers GET (list) and POST (register) on the adapters of
// a model.
func (d *Dialect) serveAdapters(ctx *fasthttp.RequestCtx, a dialect.Args) error {
	model, err := d.adapterModel(a)
	if err != nil {
		return err
	}
	if ctx.IsPost() {
		return d.registerAdapter(ctx, model)
	}
	all, err := d.host.Models.Adapters(model)
	if err != nil {
		return err
	}
	limit, offset, err := pageArgs(ctx.QueryArgs())
	if err != nil {
		return err
	}
	page := adapterList{Adapters: []api.AdapterRecord{}}
	if offset < len(all) {
		page.Adapters = append(page.Adapters, all[offset:min(offset+limit, len(all))]...)
	}
	if offset+limit < len(all) {
		page.NextPageToken = strconv.Itoa(offset + limit)
	}
	dialect.WriteJSON(ctx, fasthttp.StatusOK, page)
	return nil
}

// registerAdapter answers POST /models/{name}/adapters?name=&src=[&preload=&pin=]
// and SageMaker's POST /adapters with {"name", "src", "preload", "pin"}.
func (d *Dialect) registerAdapter(ctx *fasthttp.RequestCtx, model string) error {
	p, err := readParams(ctx)
	if err != nil {
		return err
	}
	req := api.AdapterRequest{Name: p.get("name"), Src: p.get("src")}
	if req.Name == "" || req.Src == "" {
		return dialect.BadRequest("Parameters name and src are required: the adapter's name and its folder.")
	}
	if req.Preload, err = optBool(p, "preload"); err != nil {
		return err
	}
	if req.Pin, err = optBool(p, "pin"); err != nil {
		return err
	}
	if _, err := d.host.Models.RegisterAdapter(d.host.Base, model, req); err != nil {
		return err
	}
	return writeStatus(ctx, fasthttp.StatusOK, "Adapter %s registered", req.Name)
}

// serveAdapter answers GET (describe) and DELETE (unregister) of one adapter.
func (d *Dialect) serveAdapter(ctx *fasthttp.RequestCtx, a dialect.Args) error {
	model, err := d.adapterModel(a)
	if err != nil {
		return err
	}
	name := string(a.Adapter)
	if ctx.IsDelete() {
		if err := d.host.Models.UnregisterAdapter(d.host.Base, model, name); err != nil {
			return err
		}
		return writeStatus(ctx, fasthttp.StatusOK, "Adapter %s unregistered", name)
	}
	rec, err := d.host.Models.Adapter(model, name)
	if err != nil {
		return err
	}
	dialect.WriteJSON(ctx, fasthttp.StatusOK, rec)
	return nil
}

// serveUpdate answers POST /models/{name}/adapters/{adapter}/update?pin=.
func (d *Dialect) serveUpdate(ctx *fasthttp.RequestCtx, a dialect.Args) error {
	model, err := d.adapterModel(a)
	if err != nil {
		return err
	}
	p, err := readParams(ctx)
	if err != nil {
		return err
	}
	pin, err := optBool(p, "pin")
	if err != nil {
		return err
	}
	name := string(a.Adapter)
	if _, err := d.host.Models.UpdateAdapter(d.host.Base, model, name, pin); err != nil {
		return err
	}
	return writeStatus(ctx, fasthttp.StatusOK, "Adapter %s updated", name)
}
