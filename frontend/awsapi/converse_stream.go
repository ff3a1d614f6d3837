package awsapi

import (
	"encoding/json"
	"time"
)

// ConverseStream encodes a generation as ConverseStream answers it:
// messageStart, then content blocks (a text block's contentBlockDelta
// events; a tool use's contentBlockStart with its id and name, then
// contentBlockDelta events with pieces of its input JSON), each closed by
// contentBlockStop, then messageStop with the stop reason and metadata with
// the usage and latency. Blocks are numbered in the order they open. Use
// one per answer, from one goroutine; every method returns the encoded
// events to send.
type ConverseStream struct {
	ev      *events
	started bool
	open    bool // a content block is open
	index   int  // the open block's index, or the next block's
	text    bool // the open block is text
	done    bool
}

// NewConverseStream returns a stream that has sent nothing.
func NewConverseStream() *ConverseStream { return &ConverseStream{ev: newEvents()} }

// Start returns messageStart, once.
func (c *ConverseStream) Start() []byte {
	c.start()
	return c.ev.take()
}

func (c *ConverseStream) start() {
	if !c.started {
		c.started = true
		c.emit("messageStart", struct {
			Role string `json:"role"`
		}{"assistant"})
	}
}

// Text returns the events that add text, opening a text block when the
// open block is not one. Empty text sends nothing.
func (c *ConverseStream) Text(s string) []byte {
	if s == "" || c.done {
		return nil
	}
	c.start()
	if c.open && !c.text {
		c.closeBlock()
	}
	c.open, c.text = true, true
	c.emit("contentBlockDelta", blockDelta{Index: c.index, Delta: delta{Text: &s}})
	return c.ev.take()
}

// ToolStart returns the events that open a tool-use block.
func (c *ConverseStream) ToolStart(id, name string) []byte {
	if c.done {
		return nil
	}
	c.start()
	c.closeBlock()
	c.open, c.text = true, false
	start := struct {
		Index int `json:"contentBlockIndex"`
		Start struct {
			ToolUse struct {
				ToolUseID string `json:"toolUseId"`
				Name      string `json:"name"`
			} `json:"toolUse"`
		} `json:"start"`
	}{Index: c.index}
	start.Start.ToolUse.ToolUseID, start.Start.ToolUse.Name = id, name
	c.emit("contentBlockStart", start)
	return c.ev.take()
}

// ToolInput returns the event that adds a piece of the open tool use's
// input JSON; nothing when no tool use is open or the piece is empty.
func (c *ConverseStream) ToolInput(s string) []byte {
	if s == "" || c.done || !c.open || c.text {
		return nil
	}
	c.emit("contentBlockDelta", blockDelta{Index: c.index, Delta: delta{ToolUse: &toolInput{Input: s}}})
	return c.ev.take()
}

// Stop returns the end of the answer: the open block's contentBlockStop,
// messageStop and metadata.
func (c *ConverseStream) Stop(reason string, u Usage, latency time.Duration) []byte {
	if c.done {
		return nil
	}
	c.start()
	c.closeBlock()
	c.done = true
	c.emit("messageStop", struct {
		StopReason string `json:"stopReason"`
	}{reason})
	c.emit("metadata", struct {
		Usage   tokenUsage `json:"usage"`
		Metrics metrics    `json:"metrics"`
	}{u.wire(), metrics{LatencyMs: latency.Milliseconds()}})
	return c.ev.take()
}

// Whole returns a whole Reply as a complete stream, for a model that
// answered at once.
func (c *ConverseStream) Whole(r Reply, latency time.Duration) []byte {
	out := append(c.Start(), c.Text(r.Text)...)
	for _, u := range r.ToolUses {
		out = append(out, c.ToolStart(u.ID, u.Name)...)
		out = append(out, c.ToolInput(string(u.Input))...)
	}
	return append(out, c.Stop(r.StopReason, r.Usage, latency)...)
}

// Fail returns the exception event that ends a stream that failed with f:
// modelStreamErrorException when the model broke it (with its original
// status), serviceUnavailableException or internalServerException when the
// server could not go on, throttlingException and validationException as
// their kinds say.
func (c *ConverseStream) Fail(f Failure) []byte {
	if c.done {
		return nil
	}
	c.done = true
	msg := struct {
		Message string `json:"message"`
	}{f.Message}
	switch f.Kind {
	case KindModel, KindTimeout:
		c.ev.exception("modelStreamErrorException", mustJSON(struct {
			Message            string `json:"message"`
			OriginalStatusCode int    `json:"originalStatusCode,omitempty"`
			OriginalMessage    string `json:"originalMessage,omitempty"`
		}{f.Message, f.OriginalStatus, f.OriginalMessage}))
	case KindUnavailable:
		c.ev.exception("serviceUnavailableException", mustJSON(msg))
	case KindThrottled:
		c.ev.exception("throttlingException", mustJSON(msg))
	case KindInvalid, KindNotFound:
		c.ev.exception("validationException", mustJSON(msg))
	default:
		c.ev.exception("internalServerException", mustJSON(msg))
	}
	return c.ev.take()
}

// closeBlock sends contentBlockStop for the open block.
func (c *ConverseStream) closeBlock() {
	if !c.open {
		return
	}
	c.emit("contentBlockStop", struct {
		Index int `json:"contentBlockIndex"`
	}{c.index})
	c.open = false
	c.index++
}

func (c *ConverseStream) emit(eventType string, v any) {
	b, err := json.Marshal(v)
	if err != nil { // this file's own structs always encode
		return
	}
	c.ev.event(eventType, contentJSON, b)
}

type blockDelta struct {
	Index int   `json:"contentBlockIndex"`
	Delta delta `json:"delta"`
}

type delta struct {
	Text    *string    `json:"text,omitempty"`
	ToolUse *toolInput `json:"toolUse,omitempty"`
}

type toolInput struct {
	Input string `json:"input"`
}
