package djl

import (
	"errors"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// FuzzManagementParams feeds random query strings and bodies to the
// parsers of the management parameters: none may panic, a refusal is a 400
// whose message quotes input briefly, and what they accept is consistent.
func FuzzManagementParams(f *testing.F) {
	seeds := []struct{ query, body string }{
		{"url=/m/langid&model_name=lid&batch_size=4&min_worker=1&max_worker=2", ""},
		{"", `{"url":"s3://b/x.tar.gz","synchronous":false,"max_worker":"3"}`},
		{"min_worker=1000000000&max_worker=1000000000&synchronous=false", ""},
		{"min_worker=99999999999999999999", ""},
		{"limit=0&next_page_token=-1", ""},
		{"synchronous=maybe", `{"min_worker":null,"url":7}`},
		{"url=" + strings.Repeat("u", 300), `[1,2]`},
	}
	for _, s := range seeds {
		f.Add(s.query, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, query string, body []byte) {
		var ctx fasthttp.RequestCtx
		ctx.Request.URI().SetQueryString(query)
		ctx.Request.SetBody(body)
		p, err := readParams(&ctx)
		if err != nil {
			checkRefusal(t, err)
			return
		}
		if req, err := registerRequest(p); err != nil {
			checkRefusal(t, err)
		} else if req.URL == "" || !dialect.ValidModelName(req.ModelName) || !ordered(req.MinWorker, req.MaxWorker) {
			t.Fatalf("register request %+v accepted", req)
		}
		if req, err := scaleRequest(p); err != nil {
			checkRefusal(t, err)
		} else if req.MinWorker == nil && req.MaxWorker == nil || !ordered(req.MinWorker, req.MaxWorker) {
			t.Fatalf("scale request %+v accepted", req)
		}
		if limit, offset, err := pageArgs(ctx.QueryArgs()); err != nil {
			checkRefusal(t, err)
		} else if limit < 1 || limit > maxPage || offset < 0 {
			t.Fatalf("page %d at %d accepted", limit, offset)
		}
	})
}

// ordered reports whether two optional counts are not negative and lo is
// not above hi.
func ordered(lo, hi *int) bool {
	switch {
	case lo != nil && *lo < 0, hi != nil && *hi < 0:
		return false
	case lo != nil && hi != nil:
		return *lo <= *hi
	}
	return true
}

// checkRefusal checks that err is a 400 whose message is short.
func checkRefusal(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, api.ErrBadRequest) {
		t.Fatalf("refusal %v is not a bad request", err)
	}
	if len(err.Error()) > 2*api.QuoteLimit+200 {
		t.Fatalf("refusal of %d bytes: %.300s", len(err.Error()), err)
	}
}
