package genstream

import (
	"encoding/json"

	"github.com/switchyard/switchyard/frontend/dialect"
)

// ChatChunk is one OpenAI chat.completion.chunk object.
type ChatChunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []ChunkChoice `json:"choices"`
	Usage   *Usage        `json:"usage,omitempty"`
	Error   *StreamError  `json:"error,omitempty"`
}

// ChunkChoice is the one choice of a chunk. FinishReason is null until the
// finishing chunk, and always present, as OpenAI's clients expect.
type ChunkChoice struct {
	Index        int        `json:"index"`
	Delta        ChunkDelta `json:"delta"`
	FinishReason *string    `json:"finish_reason"`
}

// ChunkDelta is what a chunk adds to the answer.
type ChunkDelta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []ToolCallDelta `json:"tool_calls,omitempty"`
}

// StreamError is the "error" member of a chunk that ends a failed stream,
// in the shape OpenAI's SDKs read (they raise it as an API error).
type StreamError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    int    `json:"code"`
}

// ChunkHead is what every chunk of one answer repeats.
type ChunkHead struct {
	ID, Model string
	Created   int64
}

// ChatChunks turns a worker's JSON-lines stream into OpenAI
// chat.completion.chunk objects and hands each one, encoded, to Emit: one
// per token with text (the first also carries the role), one per line of
// tool-call deltas, one with the finish reason, then, with IncludeUsage,
// one with the usage and no choices. Its owner frames them: as server-sent
// events (/v1/chat/completions) or one per PayloadPart (SageMaker's
// response stream, whose clients want exactly one JSON chunk per part).
type ChatChunks struct {
	Head         ChunkHead
	IncludeUsage bool
	Emit         func(chunk []byte)

	gen   Gen
	role  bool // a chunk with the role went out
	done  bool // the finish chunk went out
	usage *Usage
	err   string // the worker's error text
}

// NewChatChunks returns a ChatChunks that hands its chunks to emit.
func NewChatChunks(head ChunkHead, includeUsage bool, emit func([]byte)) *ChatChunks {
	c := &ChatChunks{Head: head, IncludeUsage: includeUsage, Emit: emit}
	c.gen.Sink = c
	return c
}

// Feed takes one chunk of the worker's stream.
func (c *ChatChunks) Feed(p []byte) { c.gen.Feed(p) }

// End takes the worker's clean end.
func (c *ChatChunks) End() { c.gen.End() }

// Fail ends the answer with the problem that broke the stream.
func (c *ChatChunks) Fail(p dialect.Problem) {
	c.gen.Fail()
	c.close(ReasonError, &StreamError{Message: p.Message, Type: p.Type, Code: p.Code})
}

// ErrText is the error text of the worker's error line; "" when none came.
func (c *ChatChunks) ErrText() string { return c.err }

// Tokens is the number of tokens seen.
func (c *ChatChunks) Tokens() int { return c.gen.Tokens() }

// Text sends one piece of text.
func (c *ChatChunks) Text(text string) {
	c.emit(ChunkChoice{Delta: ChunkDelta{Role: c.takeRole(), Content: &text}}, nil, nil)
}

// ToolCalls sends tool-call deltas.
func (c *ChatChunks) ToolCalls(calls []ToolCallDelta) {
	c.emit(ChunkChoice{Delta: ChunkDelta{Role: c.takeRole(), ToolCalls: calls}}, nil, nil)
}

// Finish takes the worker's end: its reason, usage and error text.
func (c *ChatChunks) Finish(reason string, usage *Usage, errText string) {
	c.usage = usage
	c.err = errText
	var e *StreamError
	if errText != "" {
		e = &StreamError{Message: errText, Type: dialect.StatusType(424), Code: 424}
	}
	c.close(reason, e)
}

// close sends the finish chunk, then the usage chunk when asked for; it
// does nothing the second time.
func (c *ChatChunks) close(reason string, e *StreamError) {
	if c.done {
		return
	}
	c.done = true
	mapped := ChatFinish(reason)
	c.emit(ChunkChoice{Delta: ChunkDelta{Role: c.takeRole()}, FinishReason: &mapped}, nil, e)
	if c.IncludeUsage {
		c.emit(ChunkChoice{}, c.counts(), nil)
	}
}

// takeRole returns "assistant" for the first chunk and "" after it.
func (c *ChatChunks) takeRole() string {
	if c.role {
		return ""
	}
	c.role = true
	return "assistant"
}

// counts is the worker's usage, or the tokens seen when it sent none.
func (c *ChatChunks) counts() *Usage {
	if c.usage != nil {
		return c.usage
	}
	n := c.gen.Tokens()
	return &Usage{CompletionTokens: n, TotalTokens: n}
}

// emit encodes one chunk; a usage chunk (u set) has no choices.
func (c *ChatChunks) emit(ch ChunkChoice, u *Usage, e *StreamError) {
	chunk := ChatChunk{
		ID: c.Head.ID, Object: "chat.completion.chunk", Created: c.Head.Created,
		Model: c.Head.Model, Choices: []ChunkChoice{ch}, Usage: u, Error: e,
	}
	if u != nil {
		chunk.Choices = []ChunkChoice{}
	}
	b, err := json.Marshal(chunk)
	if err != nil {
		return // the chunk types always encode
	}
	c.Emit(b)
}
