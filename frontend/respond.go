package frontend

import (
	"encoding/json"

	"github.com/valyala/fasthttp"
)

const contentTypeJSON = "application/json"

// writeJSON answers with v as indented JSON. v is always one of this
// package's own types, so encoding cannot fail; if it ever does the answer
// is a bare 500 rather than a half-written body.
func writeJSON(ctx *fasthttp.RequestCtx, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		ctx.Response.ResetBody()
		ctx.SetStatusCode(fasthttp.StatusInternalServerError)
		return
	}
	writeRawJSON(ctx, code, append(b, '\n'))
}

// writeRawJSON answers with a body that is JSON already.
func writeRawJSON(ctx *fasthttp.RequestCtx, code int, body []byte) {
	ctx.SetStatusCode(code)
	ctx.SetContentType(contentTypeJSON)
	ctx.Response.SetBodyRaw(body)
}

// statusBody is the answer of the management calls that change something.
type statusBody struct {
	Status string `json:"status"`
}
