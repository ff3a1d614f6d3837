package genstream

import (
	"bytes"
	"encoding/json"
	"slices"
)

// Sink receives a generation as Gen reads it from a worker's JSON lines.
type Sink interface {
	// Text is a piece of the answer's text (never empty).
	Text(s string)
	// ToolCalls are OpenAI tool-call deltas.
	ToolCalls(calls []ToolCallDelta)
	// Finish ends the generation with the worker's finish reason, its usage
	// (nil when it sent none) and, for an error, the error's text.
	Finish(reason string, usage *Usage, errText string)
}

// Gen reads a worker's JSON-lines generation (docs/api.md, Streamed
// answers) for the framers that reshape it: token lines give their text
// and tool-call deltas, the last line the finish reason, the usage, the
// error, and the whole text and calls when no token line carried them. A
// line that is not a JSON object counts as a piece of text. It calls its
// Sink once per piece and Finish exactly once (End finishes a stream that
// had no last line, as "stop").
type Gen struct {
	Sink   Sink
	lines  LineBuf
	tokens int  // token lines seen
	said   bool // text went to the sink
	called bool // tool calls went to the sink
	done   bool
}

// Tokens is the number of token lines read so far.
func (g *Gen) Tokens() int { return g.tokens }

// Feed takes a chunk of the worker's stream.
func (g *Gen) Feed(p []byte) { g.lines.Feed(p, g.line) }

// End takes the end of the worker's stream.
func (g *Gen) End() {
	g.lines.Flush(g.line)
	g.finish(ReasonStop, nil, "")
}

// Fail ends the generation early; later lines are ignored.
func (g *Gen) Fail() {
	g.lines.Flush(g.line)
	g.done = true
}

func (g *Gen) line(b []byte) {
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

func (g *Gen) text(s string) {
	if s != "" {
		g.said = true
		g.Sink.Text(s)
	}
}

func (g *Gen) calls(calls []ToolCallDelta) {
	if len(calls) > 0 {
		g.called = true
		g.Sink.ToolCalls(calls)
	}
}

func (g *Gen) finish(reason string, usage *Usage, errText string) {
	if !g.done {
		g.done = true
		g.Sink.Finish(reason, usage, errText)
	}
}

// Finish reasons of a chat stream as OpenAI clients know them, plus
// "error", which switchyard adds for an answer cut short.
const (
	ReasonStop   = "stop"
	ReasonLength = "length"
	ReasonError  = "error"
)

// ChatFinish maps a worker's finish_reason to a chat chunk's: eos and stop
// are "stop", length is "length", error and canceled are "error"; any
// other value (tool_calls, content_filter) passes through, and none means
// "stop".
func ChatFinish(reason string) string {
	switch reason {
	case "", "eos", "stop":
		return ReasonStop
	case "error", "canceled":
		return ReasonError
	}
	return reason
}

// ToolCallDelta is OpenAI's streamed tool call: the first delta of a call
// has its id, type and name, the following ones pieces of its arguments. A
// worker's last line lists its whole calls in the same shape (index is then
// the call's position).
type ToolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// indexed returns whole calls numbered by position, as deltas.
func indexed(calls []ToolCallDelta) []ToolCallDelta {
	out := slices.Clone(calls)
	for i := range out {
		out[i].Index = i
	}
	return out
}

// Usage is OpenAI's token count.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// workerLine is one line of a worker's JSON-lines stream.
type workerLine struct {
	Token *struct {
		Text string `json:"text"`
	} `json:"token"`
	GeneratedText *string         `json:"generated_text"`
	FinishReason  *string         `json:"finish_reason"`
	Usage         *Usage          `json:"usage"`
	ToolCalls     []ToolCallDelta `json:"tool_calls"`
	Error         json.RawMessage `json:"error"`
}

// errorText is the text of the line's "error": a string, or an object's
// "message", or the raw JSON.
func (l *workerLine) errorText() string {
	if len(l.Error) == 0 || string(bytes.TrimSpace(l.Error)) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(l.Error, &s) == nil {
		return s
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(l.Error, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	return string(l.Error)
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
	if ChatFinish(reason) != ReasonError {
		return ""
	}
	if msg := l.errorText(); msg != "" {
		return msg
	}
	return "generation " + reason
}

// LineError is the error a worker's line reports, "" when it reports none:
// the line's "error" text, or "generation <reason>", when its finish
// reason is an error.
func LineError(line []byte) string {
	l, ok := parseLine(line)
	if !ok || l.FinishReason == nil {
		return ""
	}
	return lineErrorText(&l, *l.FinishReason)
}
