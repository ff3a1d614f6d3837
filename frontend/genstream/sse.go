package genstream

import (
	"bytes"
	"mime"
	"strconv"
	"strings"

	"github.com/valyala/fasthttp"
)

// ContentTypeSSE is the media type of server-sent events.
const ContentTypeSSE = "text/event-stream"

// SSEDone is the event that ends every event stream, as OpenAI's does.
const SSEDone = "data: [DONE]\n\n"

// AppendEvent appends one server-sent event whose data is line. A carriage
// return would end the field early, so each one starts a new data line; a
// client joins them back with "\n".
func AppendEvent(out, line []byte) []byte {
	for {
		i := bytes.IndexByte(line, '\r')
		if i < 0 {
			break
		}
		out = append(append(append(out, "data: "...), line[:i]...), '\n')
		line = line[i+1:]
	}
	out = append(append(append(out, "data: "...), line...), '\n')
	return append(out, '\n')
}

// AcceptsEventStream reports whether an Accept header lists
// text/event-stream with a quality above zero.
func AcceptsEventStream(accept string) bool {
	for _, r := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(r))
		if err != nil || mt != ContentTypeSSE {
			continue
		}
		if q, ok := params["q"]; ok {
			if v, err := strconv.ParseFloat(q, 64); err != nil || !(v > 0) {
				continue
			}
		}
		return true
	}
	return false
}

// SetEventStream sets the headers of an answer sent as server-sent events.
func SetEventStream(h *fasthttp.ResponseHeader) {
	h.SetContentType(ContentTypeSSE)
	h.Set("Cache-Control", "no-cache")
}
