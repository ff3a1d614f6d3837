package dialect

import (
	"encoding/json"
	"strings"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/message"
)

// ContentTypeJSON is the media type of JSON answers.
const ContentTypeJSON = "application/json"

// WriteJSON answers with v as indented JSON. v is always one of the
// front-end's own types, so encoding cannot fail; if it ever does the
// answer is a bare 500 rather than a half-written body.
func WriteJSON(ctx *fasthttp.RequestCtx, code int, v any) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		ctx.Response.ResetBody()
		ctx.SetStatusCode(fasthttp.StatusInternalServerError)
		return
	}
	WriteRawJSON(ctx, code, append(b, '\n'))
}

// WriteRawJSON answers with a body that is JSON already.
func WriteRawJSON(ctx *fasthttp.RequestCtx, code int, body []byte) {
	ctx.SetStatusCode(code)
	ctx.SetContentType(ContentTypeJSON)
	ctx.Response.SetBodyRaw(body)
}

// CopyProps sets a worker's response properties as headers, skipping
// hop-by-hop ones, Content-Length, x-request-id and anything that is not a
// valid header. A later property of the same name replaces an earlier one.
// The properties are read where they lie: the answers of one batch share
// them.
func CopyProps(h *fasthttp.ResponseHeader, props []message.Prop) {
	for _, p := range props {
		if skippedProp(p.Key) || !validHeaderName(p.Key) || !validHeaderValue(p.Value) {
			continue
		}
		h.Set(p.Key, p.Value)
	}
}

// skippedProps are never copied: hop-by-hop headers, the framing the
// server sets itself, and request_tracking_id, the wire's rolling-batch tag.
var skippedProps = [...]string{
	"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
	"te", "trailer", "transfer-encoding", "upgrade", "content-length", "x-request-id",
	"request_tracking_id",
}

func skippedProp(k string) bool {
	for _, p := range skippedProps {
		if len(p) == len(k) && strings.EqualFold(p, k) {
			return true
		}
	}
	return false
}

// validHeaderName reports whether k is an RFC 9110 token.
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// validHeaderValue reports whether v holds no control character but tab.
func validHeaderValue(v string) bool {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// PropValue returns the value of the last worker property named key, else
// of the last whose name equals key ignoring case.
func PropValue(props []message.Prop, key string) string {
	folded := -1
	for i := len(props) - 1; i >= 0; i-- {
		switch k := props[i].Key; {
		case k == key:
			return props[i].Value
		case folded < 0 && strings.EqualFold(k, key):
			folded = i
		}
	}
	if folded < 0 {
		return ""
	}
	return props[folded].Value
}
