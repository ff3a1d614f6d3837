package openai

import (
	"encoding/json"

	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/frontend/genstream"
)

// chatChunk is one chat.completion.chunk event.
type chatChunk struct {
	ID      string           `json:"id"`
	Object  string           `json:"object"`
	Created int64            `json:"created"`
	Model   string           `json:"model"`
	Choices []chunkChoice    `json:"choices"`
	Usage   *genstream.Usage `json:"usage,omitempty"`
	Error   *streamError     `json:"error,omitempty"`
}

type chunkChoice struct {
	Index        int        `json:"index"`
	Delta        chunkDelta `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
}

type chunkDelta struct {
	Role      string                    `json:"role,omitempty"`
	Content   *string                   `json:"content,omitempty"`
	ToolCalls []genstream.ToolCallDelta `json:"tool_calls,omitempty"`
}

// streamError is the "error" member of a chunk that ends a failed stream,
// in the shape OpenAI's SDKs read (they raise it as an API error).
type streamError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
}

// chunkHead is what every chunk of one answer repeats.
type chunkHead struct {
	id, model string
	created   int64
}

// chatFramer turns a worker's JSON-lines stream into OpenAI
// chat.completion.chunk events: one per token with text (the first also
// carries the role), one per line of tool-call deltas, one with the finish
// reason, one with the usage when the request asked for it, then
// data: [DONE].
type chatFramer struct {
	head         chunkHead
	includeUsage bool
	gen          genstream.Gen
	out          []byte
	role         bool // a chunk with the role went out
	done         bool // the finish chunk went out
	usage        *genstream.Usage
}

func newChatFramer(head chunkHead, includeUsage bool) *chatFramer {
	f := &chatFramer{head: head, includeUsage: includeUsage}
	f.gen.Sink = f
	return f
}

func (f *chatFramer) Chunk(p []byte) []byte {
	f.gen.Feed(p)
	return f.take()
}

func (f *chatFramer) End() []byte {
	f.gen.End()
	return append(f.take(), genstream.SSEDone...)
}

func (f *chatFramer) Fail(p dialect.Problem) ([]byte, bool) {
	f.gen.Fail()
	f.close(genstream.ReasonError, &streamError{Message: p.Message, Type: p.Type, Code: p.Code})
	return append(f.take(), genstream.SSEDone...), true
}

func (f *chatFramer) take() []byte {
	out := f.out
	f.out = nil
	return out
}

// Text sends one piece of text.
func (f *chatFramer) Text(text string) {
	f.emit(chunkChoice{Delta: chunkDelta{Role: f.takeRole(), Content: &text}}, nil, nil)
}

// ToolCalls sends tool-call deltas.
func (f *chatFramer) ToolCalls(calls []genstream.ToolCallDelta) {
	f.emit(chunkChoice{Delta: chunkDelta{Role: f.takeRole(), ToolCalls: calls}}, nil, nil)
}

// Finish takes the worker's end: its reason, usage and error text.
func (f *chatFramer) Finish(reason string, usage *genstream.Usage, errText string) {
	f.usage = usage
	var e *streamError
	if errText != "" {
		e = &streamError{Message: errText, Type: dialect.StatusType(424), Code: 424}
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
	mapped := genstream.ChatFinish(reason)
	f.emit(chunkChoice{Delta: chunkDelta{Role: f.takeRole()}, FinishReason: &mapped}, nil, e)
	if f.includeUsage {
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
func (f *chatFramer) counts() *genstream.Usage {
	if f.usage != nil {
		return f.usage
	}
	n := f.gen.Tokens()
	return &genstream.Usage{CompletionTokens: n, TotalTokens: n}
}

// emit appends one chunk event; a usage chunk (u set) has no choices.
func (f *chatFramer) emit(c chunkChoice, u *genstream.Usage, e *streamError) {
	ch := chatChunk{
		ID: f.head.id, Object: "chat.completion.chunk", Created: f.head.created,
		Model: f.head.model, Choices: []chunkChoice{c}, Usage: u, Error: e,
	}
	if u != nil {
		ch.Choices = []chunkChoice{}
	}
	b, err := json.Marshal(ch)
	if err != nil {
		return // the chunk types always encode
	}
	f.out = genstream.AppendEvent(f.out, b)
}
