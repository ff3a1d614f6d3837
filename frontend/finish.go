package frontend

import (
	"bytes"
	"encoding/json"
)

// propFinishReason is the worker's response property that names a whole
// generative answer's finish reason (length, stop, eos, tool_calls); a
// streamed answer names it in its last JSON line instead.
const propFinishReason = "x-switchyard-finish-reason"

// finishKey marks the one line of a generative stream that carries the
// finish reason: the last one.
var finishKey = []byte(`"finish_reason"`)

// finishTap reads the finish reason of a generative stream as its chunks go
// by. Workers send each JSON line as one chunk, so only a chunk that
// mentions finish_reason is decoded, line by line.
type finishTap struct {
	reason string
}

// feed looks at one chunk of the stream.
func (t *finishTap) feed(chunk []byte) {
	if t.reason != "" || !bytes.Contains(chunk, finishKey) {
		return
	}
	for line := range bytes.Lines(chunk) {
		var l struct {
			FinishReason string `json:"finish_reason"`
		}
		if json.Unmarshal(line, &l) == nil && l.FinishReason != "" {
			t.reason = l.FinishReason
			return
		}
	}
}
