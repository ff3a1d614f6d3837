package frontend

import (
	"bytes"
	"encoding/json"
)

// genSink receives a generation as genLines reads it from a worker's JSON
// lines.
type genSink interface {
	// text is a piece of the answer's text (never empty).
	text(s string)
	// toolCalls are OpenAI tool-call deltas.
	toolCalls(calls []toolCallDelta)
	// finish ends the generation with the worker's finish reason, its usage
	// (nil when it sent none) and, for an error, the error's text.
	finish(reason string, usage *chatUsage, errText string)
}

// genLines reads a worker's JSON-lines generation (docs/api.md, Streamed
// answers) for the framers that reshape it: token lines give their text
// and tool-call deltas, the last line the finish reason, the usage, the
// error, and the whole text and calls when no token line carried them. A
// line that is not a JSON object counts as a piece of text. It calls its
// sink once per piece and finish exactly once (end finishes a stream that
// had no last line, as "stop").
type genLines struct {
	sink   genSink
	lines  lineBuf
	tokens int  // token lines seen
	said   bool // text went to the sink
	called bool // tool calls went to the sink
	done   bool
}

// feed takes a chunk of the worker's stream.
func (g *genLines) feed(p []byte) { g.lines.feed(p, g.line) }

// end takes the end of the worker's stream.
func (g *genLines) end() {
	g.lines.flush(g.line)
	g.finish(reasonStop, nil, "")
}

// fail ends the generation early; later lines are ignored.
func (g *genLines) fail() {
	g.lines.flush(g.line)
	g.done = true
}

func (g *genLines) line(b []byte) {
	b = bytes.TrimSpace(b)
	if g.done || len(b) == 0 {
		return
	}
	l, ok := parseLine(b)
	if !ok {
		g.text(string(b))
		return
	}
	if l.Token != nil {
		g.tokens++
		g.text(l.Token.Text)
	} else if l.GeneratedText != nil && !g.said {
		g.text(*l.GeneratedText)
	}
	switch {
	case l.FinishReason == nil:
		g.calls(l.ToolCalls)
		return
	case !g.called:
		g.calls(indexed(l.ToolCalls))
	}
	g.finish(*l.FinishReason, l.Usage, lineErrorText(&l, *l.FinishReason))
}

func (g *genLines) text(s string) {
	if s != "" {
		g.said = true
		g.sink.text(s)
	}
}

func (g *genLines) calls(calls []toolCallDelta) {
	if len(calls) > 0 {
		g.called = true
		g.sink.toolCalls(calls)
	}
}

func (g *genLines) finish(reason string, usage *chatUsage, errText string) {
	if !g.done {
		g.done = true
		g.sink.finish(reason, usage, errText)
	}
}

// parseLine decodes one line of a worker's stream; ok is false when it is
// not a JSON object.
func parseLine(b []byte) (workerLine, bool) {
	var l workerLine
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &l) != nil {
		return l, false
	}
	return l, true
}

// lineErrorText is the error a last line reports: its "error" text, or
// "generation <reason>" when its finish reason is an error without one; ""
// when it reports none.
func lineErrorText(l *workerLine, reason string) string {
	if chatFinish(reason) != reasonError {
		return ""
	}
	if msg := l.errorText(); msg != "" {
		return msg
	}
	return "generation " + reason
}
