package frontend

import (
	"bytes"
	"encoding/json"
	"mime"
	"strconv"
	"strings"

	"github.com/switchyard/switchyard/message"
)

// framer turns the chunks of a worker's streamed answer into the bytes the
// client receives. A streamBody owns one and calls it from one goroutine.
type framer interface {
	// chunk returns what to send for one chunk from the worker; it may be
	// empty.
	chunk(p []byte) []byte
	// end returns what to send after the worker ended the stream cleanly.
	end() []byte
	// fail returns what to send after the stream broke with p, and false
	// when the body must be cut off instead, so that the client sees an
	// incomplete answer.
	fail(p problem) ([]byte, bool)
}

// rawFramer passes an opaque stream through; a break cuts the body off.
type rawFramer struct{}

func (rawFramer) chunk(p []byte) []byte       { return p }
func (rawFramer) end() []byte                 { return nil }
func (rawFramer) fail(problem) ([]byte, bool) { return nil, false }

// linesFramer passes a JSON-lines stream through. A break ends it with one
// more line, {"finish_reason":"error","error":"..."}, and a clean end of
// the HTTP body, so that clients reading lines learn why it stopped.
type linesFramer struct {
	sent    bool // a byte went out
	newline bool // the last byte sent was '\n'
}

func (f *linesFramer) chunk(p []byte) []byte {
	if len(p) > 0 {
		f.sent, f.newline = true, p[len(p)-1] == '\n'
	}
	return p
}

func (f *linesFramer) end() []byte { return nil }

func (f *linesFramer) fail(p problem) ([]byte, bool) {
	var out []byte
	if f.sent && !f.newline {
		out = append(out, '\n')
	}
	return append(append(out, errorLine(p.Message)...), '\n'), true
}

// errorLine is the JSON line that ends a broken stream (without its '\n').
func errorLine(msg string) []byte {
	b, _ := json.Marshal(struct {
		FinishReason string `json:"finish_reason"`
		Error        string `json:"error"`
	}{reasonError, msg})
	return b
}

// maxLine bounds the part of a line a framer holds while it waits for the
// line's end; a longer run without '\n' is handled as a line of its own.
const maxLine = 1 << 20

// lineBuf cuts a byte stream into lines, holding an unfinished one.
type lineBuf struct {
	partial []byte
}

// feed calls emit for each line that p completes, without its "\n" or
// "\r\n".
func (lb *lineBuf) feed(p []byte, emit func(line []byte)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			lb.partial = append(lb.partial, p...)
			if len(lb.partial) >= maxLine {
				lb.flush(emit)
			}
			return
		}
		line := p[:i]
		if len(lb.partial) > 0 {
			line = append(lb.partial, line...)
		}
		emit(bytes.TrimSuffix(line, []byte{'\r'}))
		lb.partial, p = lb.partial[:0], p[i+1:]
	}
}

// flush emits the unfinished line, if any.
func (lb *lineBuf) flush(emit func(line []byte)) {
	if len(lb.partial) > 0 {
		emit(bytes.TrimSuffix(lb.partial, []byte{'\r'}))
		lb.partial = lb.partial[:0]
	}
}

// jsonLinesTypes are the media types of a JSON-lines body: DJL's name and
// the others in use.
var jsonLinesTypes = [...]string{
	"application/jsonlines", "application/jsonl", "application/x-jsonlines",
	"application/json-lines", "application/x-ndjson",
}

// isJSONLines reports whether a Content-Type names a JSON-lines body.
func isJSONLines(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	for _, t := range jsonLinesTypes {
		if mt == t {
			return true
		}
	}
	return false
}

// propValue returns the value of the last worker property named key, else
// of the last whose name equals key ignoring case.
func propValue(props []message.Prop, key string) string {
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

const contentTypeSSE = "text/event-stream"

// acceptsEventStream reports whether an Accept header lists
// text/event-stream with a quality above zero.
func acceptsEventStream(accept []byte) bool {
	for _, r := range strings.Split(string(accept), ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(r))
		if err != nil || mt != contentTypeSSE {
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
