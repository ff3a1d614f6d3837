package djl

import (
	"fmt"
	"strconv"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// maxPage is the default and the largest page of GET /models.
const maxPage = 100

// serveModels dispatches /models by method: POST registers, GET lists.
func (d *Dialect) serveModels(ctx *fasthttp.RequestCtx, _ dialect.Args) error {
	if ctx.IsPost() {
		return d.register(ctx)
	}
	return d.list(ctx)
}

// serveModel dispatches /models/{name} by method.
func (d *Dialect) serveModel(ctx *fasthttp.RequestCtx, a dialect.Args) error {
	name := string(a.Name)
	if err := dialect.CheckModelName(name); err != nil {
		return err
	}
	switch {
	case ctx.IsPut():
		return d.scale(ctx, name)
	case ctx.IsDelete():
		return d.unregister(ctx, name)
	}
	return d.describe(ctx, name)
}

// list answers GET /models?limit=&next_page_token= with one page of model
// summaries; nextPageToken is the offset of the next page.
func (d *Dialect) list(ctx *fasthttp.RequestCtx) error {
	limit, offset, err := pageArgs(ctx.QueryArgs())
	if err != nil {
		return err
	}
	all := d.host.Models.List()
	page := api.ModelList{Models: []api.ModelSummary{}}
	if offset < len(all) {
		page.Models = append(page.Models, all[offset:min(offset+limit, len(all))]...)
	}
	if offset+limit < len(all) {
		page.NextPageToken = strconv.Itoa(offset + limit)
	}
	dialect.WriteJSON(ctx, fasthttp.StatusOK, page)
	return nil
}

// pageArgs reads limit (1 or more, capped at maxPage) and next_page_token
// (an offset, 0 or more).
func pageArgs(q *fasthttp.Args) (limit, offset int, err error) {
	limit, offset = maxPage, 0
	if v := q.Peek("limit"); len(v) > 0 {
		if limit, err = strconv.Atoi(string(v)); err != nil || limit < 1 {
			return 0, 0, dialect.BadRequestf("Parameter limit must be a positive integer, got %s.", api.Quote(v))
		}
		limit = min(limit, maxPage)
	}
	if v := q.Peek("next_page_token"); len(v) > 0 {
		if offset, err = strconv.Atoi(string(v)); err != nil || offset < 0 {
			return 0, 0, dialect.BadRequestf("Parameter next_page_token must be a token from a previous page, got %s.", api.Quote(v))
		}
	}
	return limit, offset, nil
}

// describe answers GET /models/{name} in DJL's shape: a one-element array
// of workflows holding the model's record.
func (d *Dialect) describe(ctx *fasthttp.RequestCtx, name string) error {
	rec, err := d.host.Models.Describe(name)
	if err != nil {
		return err
	}
	if rec.WorkerGroups == nil {
		rec.WorkerGroups = []api.WorkerGroup{}
	}
	for i := range rec.WorkerGroups {
		if rec.WorkerGroups[i].Workers == nil {
			rec.WorkerGroups[i].Workers = []api.WorkerRecord{}
		}
	}
	dialect.WriteJSON(ctx, fasthttp.StatusOK, []api.Workflow{{WorkflowName: name, Models: []api.ModelRecord{rec}}})
	return nil
}

// register answers POST /models: 200 once loaded, 202 when
// synchronous=false and the load is only scheduled.
func (d *Dialect) register(ctx *fasthttp.RequestCtx) error {
	p, err := readParams(ctx)
	if err != nil {
		return err
	}
	req, err := registerRequest(p)
	if err != nil {
		return err
	}
	if _, err := d.host.Models.Register(d.host.Base, req); err != nil {
		return err
	}
	if !req.Synchronous {
		return writeStatus(ctx, fasthttp.StatusAccepted, "Model %q registration scheduled.", req.ModelName)
	}
	return writeStatus(ctx, fasthttp.StatusOK, "Model %q registered.", req.ModelName)
}

// scale answers PUT /models/{name}: 200 once done, 202 when only scheduled.
func (d *Dialect) scale(ctx *fasthttp.RequestCtx, name string) error {
	p, err := readParams(ctx)
	if err != nil {
		return err
	}
	req, err := scaleRequest(p)
	if err != nil {
		return err
	}
	if err := d.host.Models.Scale(d.host.Base, name, req); err != nil {
		return err
	}
	if !req.Synchronous {
		return writeStatus(ctx, fasthttp.StatusAccepted, "Model %q worker scaling scheduled.", name)
	}
	return writeStatus(ctx, fasthttp.StatusOK, "Model %q worker scaled.", name)
}

// unregister answers DELETE /models/{name} and drops the model's series.
func (d *Dialect) unregister(ctx *fasthttp.RequestCtx, name string) error {
	if err := d.host.Models.Unregister(d.host.Base, name); err != nil {
		return err
	}
	d.host.Forget(name)
	return writeStatus(ctx, fasthttp.StatusOK, "Model %q unregistered", name)
}

// statusBody is the answer of the management calls that change something.
type statusBody struct {
	Status string `json:"status"`
}

// writeStatus answers {"status": msg}. Model names hold no character that
// %q escapes, so the quotes read as in DJL's messages.
func writeStatus(ctx *fasthttp.RequestCtx, code int, format, name string) error {
	dialect.WriteJSON(ctx, code, statusBody{Status: fmt.Sprintf(format, name)})
	return nil
}
