package genstream

import (
	"bytes"
	"mime"
)

// MaxLine bounds the part of a line a LineBuf holds while it waits for the
// line's end; a longer run without '\n' is handled as a line of its own.
const MaxLine = 1 << 20

// LineBuf cuts a byte stream into lines, holding an unfinished one. The
// zero value is ready to use.
type LineBuf struct {
	partial []byte
}

// Feed calls emit for each line that p completes, without its "\n" or
// "\r\n".
func (lb *LineBuf) Feed(p []byte, emit func(line []byte)) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			lb.partial = append(lb.partial, p...)
			if len(lb.partial) >= MaxLine {
				lb.Flush(emit)
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

// Flush emits the unfinished line, if any.
func (lb *LineBuf) Flush(emit func(line []byte)) {
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

// IsJSONLines reports whether a Content-Type names a JSON-lines body.
func IsJSONLines(contentType string) bool {
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
