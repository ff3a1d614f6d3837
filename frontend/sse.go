package frontend

import (
	"bytes"
)

// sseDone is the event that ends every event stream, as OpenAI's does.
const sseDone = "data: [DONE]\n\n"

// appendEvent appends one server-sent event whose data is line. A carriage
// return would end the field early, so each one starts a new data line; a
// client joins them back with "\n".
func appendEvent(out, line []byte) []byte {
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

// sseFramer sends each line of a JSON-lines stream as one event and ends
// with data: [DONE]; a break adds the error line as a last event first.
// It serves clients of /invocations and /predictions that ask for
// text/event-stream.
type sseFramer struct {
	lines lineBuf
	out   []byte
}

func (f *sseFramer) emit(line []byte) {
	if len(bytes.TrimSpace(line)) > 0 {
		f.out = appendEvent(f.out, line)
	}
}

func (f *sseFramer) take() []byte {
	out := f.out
	f.out = nil
	return out
}

func (f *sseFramer) chunk(p []byte) []byte {
	f.lines.feed(p, f.emit)
	return f.take()
}

func (f *sseFramer) end() []byte {
	f.lines.flush(f.emit)
	return append(f.take(), sseDone...)
}

func (f *sseFramer) fail(p problem) ([]byte, bool) {
	f.lines.flush(f.emit)
	f.emit(errorLine(p.Message))
	return append(f.take(), sseDone...), true
}
