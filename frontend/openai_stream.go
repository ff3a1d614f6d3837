package frontend

import (
	"encoding/json"
	"slices"
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
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []toolCallDelta `json:"tool_calls,omitempty"`
}

// toolCallDelta is OpenAI's streamed tool call: the first delta of a call
// has its id, type and name, the following ones pieces of its arguments. A
// worker's last line lists its whole calls in the same shape (index is then
// the call's position).
type toolCallDelta struct {
	Index    int    `json:"index"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// indexed returns whole calls numbered by position, as deltas.
func indexed(calls []toolCallDelta) []toolCallDelta {
	out := slices.Clone(calls)
	for i := range out {
		out[i].Index = i
	}
	return out
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
	ToolCalls     []toolCallDelta `json:"tool_calls"`
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
// carries the role), one per line of tool-call deltas, one with the finish
// reason, one with the usage when the request asked for it, then
// data: [DONE].
type chatFramer struct {
	sh    shape
	gen   genLines
	out   []byte
	role  bool // a chunk with the role went out
	done  bool // the finish chunk went out
	usage *chatUsage
}

func newChatFramer(sh shape) *chatFramer {
	f := &chatFramer{sh: sh}
	f.gen.sink = f
	return f
}

func (f *chatFramer) chunk(p []byte) []byte {
	f.gen.feed(p)
	return f.take()
}

func (f *chatFramer) end() []byte {
	f.gen.end()
	return append(f.take(), sseDone...)
}

func (f *chatFramer) fail(p problem) ([]byte, bool) {
	f.gen.fail()
	f.close(reasonError, &streamError{Message: p.Message, Type: p.Type, Code: p.Code})
	return append(f.take(), sseDone...), true
}

func (f *chatFramer) take() []byte {
	out := f.out
	f.out = nil
	return out
}

// text sends one piece of text.
func (f *chatFramer) text(text string) {
	f.emit(chunkChoice{Delta: chunkDelta{Role: f.takeRole(), Content: &text}}, nil, nil)
}

// toolCalls sends tool-call deltas.
func (f *chatFramer) toolCalls(calls []toolCallDelta) {
	f.emit(chunkChoice{Delta: chunkDelta{Role: f.takeRole(), ToolCalls: calls}}, nil, nil)
}

// finish takes the worker's end: its reason, usage and error text.
func (f *chatFramer) finish(reason string, usage *chatUsage, errText string) {
	f.usage = usage
	var e *streamError
	if errText != "" {
		e = &streamError{Message: errText, Type: kindForStatus(424), Code: 424}
	}
	f.close(reason, e)
}

// close sends the finish chunk, then the usage chunk when asked for; it
// does nothing the second time.
func (f *chatFramer) close(reason string, e *streamError) {
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
	return &chatUsage{CompletionTokens: f.gen.tokens, TotalTokens: f.gen.tokens}
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
