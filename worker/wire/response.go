package wire

import "github.com/switchyard/switchyard/message"

// Response is one response frame from a worker.
type Response struct {
	Code      int
	Message   string
	Props     []message.Prop
	Content   []message.Item
	Streaming bool // nContent was -1: chunks follow
}

// DataKey is the content key of a request's or response's body.
const DataKey = "data"

// Prop returns the value of the last property named key, and whether there
// is one.
func (r *Response) Prop(key string) (string, bool) {
	for i := len(r.Props) - 1; i >= 0; i-- {
		if r.Props[i].Key == key {
			return r.Props[i].Value, true
		}
	}
	return "", false
}

// Body returns the content item named "data", or else the first item, or nil
// when there is none.
func (r *Response) Body() []byte { return body(r.Content) }

func body(items []message.Item) []byte {
	for _, it := range items {
		if it.Key == DataKey {
			return it.Value
		}
	}
	if len(items) > 0 {
		return items[0].Value
	}
	return nil
}

// ToBatching returns r as the answer to one job, with stream as its body
// when r is streamed. The answer shares r's properties.
func (r *Response) ToBatching(stream *message.Stream) *message.Response {
	out := &message.Response{Code: r.Code, Message: r.Message, Props: r.Props[:len(r.Props):len(r.Props)]}
	if r.Streaming {
		out.Stream = stream
	} else {
		out.Body = r.Body()
	}
	return out
}
