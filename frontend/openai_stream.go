package frontend

import (
	"bytes"
	"encoding/json"
)

// Finish reasons of a chat stream as OpenAI clients know them, plus
// "error", which switchyard adds for an answer cut short.
const (
	reasonStop   = "stop"
	reasonLength = "length"
	reasonError  = "error"
)

// chatFinish maps a worker's finish_reason to the chunk's: eos and stop
// are "stop", length is "length", error and canceled are "error"; any
// other value (tool_calls, content_filter) passes through, and none means
// "stop".
func chatFinish(reason string) string {
	switch reason {
	case "", "eos", "stop":
		return reasonStop
	case "error", "canceled":
		return reasonError
	}
	return reason
}

// chatChunk is one chat.completion.chunk event.
type chatChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *chatUsage    `json:"usage,omitempty"`
	Error   *streamError  `json:"error,omitempty"`
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chunkDelta `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
}

type chunkDelta struct {
	Role    string  `json:"role,omitempty"`
	Content *string `json:"content,omitempty"`
}

// chatUsage is OpenAI's token count.
type chatUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// streamError is the "error" member of a chunk that ends a failed stream,
// in the shape OpenAI's SDKs read (they raise it as an API error).
type streamError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
}

// workerLine is one line of a worker's JSON-lines stream.
type workerLine struct {
	Token *struct {
		Text string `json:"text"`
	} `json:"token"`
	GeneratedText *string         `json:"generated_text"`
	FinishReason  *string         `json:"finish_reason"`
	Usage         *chatUsage      `json:"usage"`
	Error         json.RawMessage `json:"error"`
}

// errorText is the text of the line's "error": a string, or an object's
// "message", or the raw JSON.
func (l *workerLine) errorText() string {
	if len(l.Error) == 0 || isNull(l.Error) {
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

// chatFramer turns a worker's JSON-lines stream into OpenAI
// chat.completion.chunk events: one per token with text (the first also
// carries the role), one with the finish reason, one with the usage when
// the request asked for it, then data: [DONE]. A line that is not a JSON
// object counts as a piece of text.
type chatFramer struct {
	sh     shape
	lines  lineBuf
	out    []byte
	role   bool // a chunk with the role went out
	text   bool // a chunk with text went out
	done   bool // the finish chunk went out
	tokens int
	usage  *chatUsage
}

func (f *chatFramer) chunk(p []byte) []byte {
	f.lines.feed(p, f.line)
	return f.take()
}

func (f *chatFramer) end() []byte {
	f.lines.flush(f.line)
	f.finish(reasonStop, nil)
	return append(f.take(), sseDone...)
}

func (f *chatFramer) fail(p problem) ([]byte, bool) {
	f.lines.flush(f.line)
	f.finish(reasonError, &streamError{Message: p.Message, Type: p.Type, Code: p.Code})
	return append(f.take(), sseDone...), true
}

func (f *chatFramer) take() []byte {
	out := f.out
	f.out = nil
	return out
}

// line handles one line of the worker's stream.
func (f *chatFramer) line(b []byte) {
	b = bytes.TrimSpace(b)
	if f.done || len(b) == 0 {
		return
	}
	var l workerLine
	if b[0] != '{' || json.Unmarshal(b, &l) != nil {
		f.content(string(b))
		return
	}
	if l.Token != nil {
		f.tokens++
		f.content(l.Token.Text)
	} else if l.GeneratedText != nil && !f.text {
		f.content(*l.GeneratedText)
	}
	if l.FinishReason != nil {
		f.usage = l.Usage
		f.finish(*l.FinishReason, lineError(&l, *l.FinishReason))
	}
}

// lineError is the error a final line reports, nil when it reports none.
func lineError(l *workerLine, reason string) *streamError {
	if chatFinish(reason) != reasonError {
		return nil
	}
	msg := l.errorText()
	if msg == "" {
		msg = "generation " + reason
	}
	return &streamError{Message: msg, Type: kindForStatus(424), Code: 424}
}

// content sends one piece of text.
func (f *chatFramer) content(text string) {
	if text == "" {
		return
	}
	f.text = true
	f.emit(chunkChoice{Delta: chunkDelta{Role: f.takeRole(), Content: &text}}, nil, nil)
}

// finish sends the finish chunk, then the usage chunk when asked for; it
// does nothing the second time.
func (f *chatFramer) finish(reason string, e *streamError) {
	if f.done {
		return
	}
	f.done = true
	mapped := chatFinish(reason)
	f.emit(chunkChoice{Delta: chunkDelta{Role: f.takeRole()}, FinishReason: &mapped}, nil, e)
	if f.sh.includeUsage {
		f.emit(chunkChoice{}, f.counts(), nil)
	}
}

// takeRole returns "assistant" for the first chunk and "" after it.
func (f *chatFramer) takeRole() string {
	if f.role {
		return ""
	}
	f.role = true
	return "assistant"
}

// counts is the worker's usage, or the tokens seen when it sent none.
func (f *chatFramer) counts() *chatUsage {
	if f.usage != nil {
		return f.usage
	}
	return &chatUsage{CompletionTokens: f.tokens, TotalTokens: f.tokens}
}

// emit appends one chunk event; a usage chunk (u set) has no choices.
func (f *chatFramer) emit(c chunkChoice, u *chatUsage, e *streamError) {
	ch := chatChunk{
		ID: "chatcmpl-" + f.sh.id, Object: "chat.completion.chunk", Created: f.sh.created,
		Model: f.sh.model, Choices: []chunkChoice{c}, Usage: u, Error: e,
	}
	if u != nil {
		ch.Choices = []chunkChoice{}
	}
	b, err := json.Marshal(ch)
	if err != nil {
		return // the chunk types always encode
	}
	f.out = appendEvent(f.out, b)
}
