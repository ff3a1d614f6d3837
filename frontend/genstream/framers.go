package genstream

import (
	"bytes"
	"encoding/json"

	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/message"
)

// Plain picks the framer of a streamed answer on the plain inference
// routes, from the worker's properties and whether the client asked for
// text/event-stream: a JSON-lines stream goes out as one event per line
// (sse is then true) or as it came, with an error line when it breaks;
// any other stream passes through untouched.
func Plain(props []message.Prop, eventStream bool) (f dialect.Framer, sse bool) {
	switch {
	case !IsJSONLines(dialect.PropValue(props, "content-type")):
		return Raw{}, false
	case eventStream:
		return &SSE{}, true
	}
	return &Lines{}, false
}

// Raw passes an opaque stream through; a break cuts the body off.
type Raw struct{}

// Chunk returns p.
func (Raw) Chunk(p []byte) []byte { return p }

// End adds nothing.
func (Raw) End() []byte { return nil }

// Fail cuts the body off.
func (Raw) Fail(dialect.Problem) ([]byte, bool) { return nil, false }

// Lines passes a JSON-lines stream through. A break ends it with one more
// line, {"finish_reason":"error","error":"..."}, and a clean end of the
// HTTP body, so that clients reading lines learn why it stopped.
type Lines struct {
	sent    bool // a byte went out
	newline bool // the last byte sent was '\n'
}

// Chunk returns p.
func (f *Lines) Chunk(p []byte) []byte {
	if len(p) > 0 {
		f.sent, f.newline = true, p[len(p)-1] == '\n'
	}
	return p
}

// End adds nothing.
func (f *Lines) End() []byte { return nil }

// Fail ends the last line, if unfinished, and adds the error line.
func (f *Lines) Fail(p dialect.Problem) ([]byte, bool) {
	var out []byte
	if f.sent && !f.newline {
		out = append(out, '\n')
	}
	return append(append(out, ErrorLine(p.Message)...), '\n'), true
}

// ErrorLine is the JSON line that ends a broken stream (without its '\n').
func ErrorLine(msg string) []byte {
	b, _ := json.Marshal(struct {
		FinishReason string `json:"finish_reason"`
		Error        string `json:"error"`
	}{ReasonError, msg})
	return b
}

// SSE sends each line of a JSON-lines stream as one event and ends with
// data: [DONE]; a break adds the error line as a last event first. It
// serves clients of the plain routes that ask for text/event-stream.
type SSE struct {
	lines LineBuf
	out   []byte
}

func (f *SSE) emit(line []byte) {
	if len(bytes.TrimSpace(line)) > 0 {
		f.out = AppendEvent(f.out, line)
	}
}

func (f *SSE) take() []byte {
	out := f.out
	f.out = nil
	return out
}

// Chunk returns the events of the lines p completes.
func (f *SSE) Chunk(p []byte) []byte {
	f.lines.Feed(p, f.emit)
	return f.take()
}

// End returns the event of an unfinished last line, and [DONE].
func (f *SSE) End() []byte {
	f.lines.Flush(f.emit)
	return append(f.take(), SSEDone...)
}

// Fail returns the unfinished line's event, the error line's, and [DONE].
func (f *SSE) Fail(p dialect.Problem) ([]byte, bool) {
	f.lines.Flush(f.emit)
	f.emit(ErrorLine(p.Message))
	return append(f.take(), SSEDone...), true
}
