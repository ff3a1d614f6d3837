package dialect

import (
	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/message"
)

// Request is an inference request as the core hands it to a route's
// Decode. Input is the job's input as the core built it: every header as a
// property with a lower-case name, request_id, the body as the item "data"
// and each query parameter as one more item. It is the job's own: it
// outlives fasthttp's buffers. Ctx and Args are fasthttp's, valid while the
// request's handler runs (Decode and the Reply run in it).
type Request struct {
	Ctx   *fasthttp.RequestCtx
	ID    string // the request id, also the response's X-Request-Id
	Args  Args   // the path's variable segments
	Input message.Input
}

// Header returns the first value of the request header named name, which
// must be in lower case; "" when there is none.
func (r Request) Header(name string) string {
	for _, p := range r.Input.Props {
		if p.Key == name {
			return p.Value
		}
	}
	return ""
}

// Body returns the request's body.
func (r Request) Body() []byte { return r.Input.Content[0].Value }

// Job is the core's job description: what a dialect decodes a request
// into. The core gives it the client's deadline, submits it to Model and
// hands its answer to Reply.
type Job struct {
	// Model is the registered model to run. When Decode fails, it names the
	// model only if the request reached one (it labels the request's
	// metrics), else it is empty.
	Model string
	// Input is what the worker receives: the Request's, or a rewrite of it.
	Input message.Input
	// Reply writes the answer. A dialect returns one of a few values that
	// need no allocation where its requests are many.
	Reply Reply
}

// Reply writes a request's answer in its dialect's shape. The core calls
// one of its methods once, from the request's handler; an error it
// returns becomes the request's error answer.
type Reply interface {
	// Whole writes a whole answer: the status, headers and a.Body.
	Whole(a Answer) error
	// Stream writes a streamed answer. It either starts s with the framer
	// of its shape and then sets the answer's headers (the body streams
	// once Stream returns nil), or reads s to its end with Next and writes
	// a whole answer.
	Stream(a Answer, s Stream) error
}

// Answer is a worker's answer below status 400, as the core hands it to a
// Reply.
type Answer struct {
	Request                // the request it answers
	Model   string         // the model that answered
	Code    int            // the status
	Props   []message.Prop // the worker's response properties
	Body    []byte         // a whole answer's body
}

// Write writes a whole answer with body: the status, the worker's
// properties as headers (CopyProps) and body as it is.
func (a Answer) Write(body []byte) {
	a.Ctx.SetStatusCode(a.Code)
	CopyProps(&a.Ctx.Response.Header, a.Props)
	a.Ctx.Response.SetBodyRaw(body)
}

// Stream is a worker's streamed answer, as the core lends it to a Reply.
type Stream interface {
	// Start waits for the first chunk, so that a stream that fails before
	// it still gets an error answer (the error is returned), then sets the
	// status and makes f frame the stream: the answer streams once the
	// Reply has set its headers and returned. Start is called at most once.
	Start(f Framer) error
	// Next returns the next chunk, and io.EOF after the last one, for a
	// Reply that reads the stream whole; a wait ends when the job's context
	// does.
	Next() ([]byte, error)
}

// Framer turns the chunks of a worker's streamed answer into the bytes the
// client receives. The core calls it from one goroutine at a time.
type Framer interface {
	// Chunk returns what to send for one chunk from the worker; it may be
	// empty.
	Chunk(p []byte) []byte
	// End returns what to send after the worker ended the stream cleanly.
	End() []byte
	// Fail returns what to send after the stream broke with p, and false
	// when the body must be cut off instead, so that the client sees an
	// incomplete answer.
	Fail(p Problem) ([]byte, bool)
}
