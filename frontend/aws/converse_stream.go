package aws

import (
	"time"

	"github.com/switchyard/switchyard/frontend/awsapi"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/frontend/genstream"
)

// converseFramer frames a worker's JSON-lines generation as ConverseStream
// events (see awsapi.ConverseStream); messageStart goes out with the first
// piece.
type converseFramer struct {
	st    *awsapi.ConverseStream
	gen   genstream.Gen
	calls callBlocks
	out   []byte
	from  time.Time
}

func newConverseFramer(from time.Time) *converseFramer {
	f := &converseFramer{st: awsapi.NewConverseStream(), from: from}
	f.gen.Sink = f
	return f
}

func (f *converseFramer) Chunk(p []byte) []byte {
	f.out = append(f.out, f.st.Start()...)
	f.gen.Feed(p)
	return f.take()
}

func (f *converseFramer) End() []byte {
	f.gen.End()
	return f.take()
}

func (f *converseFramer) Fail(p dialect.Problem) ([]byte, bool) {
	f.gen.Fail()
	f.out = append(f.out, f.st.Fail(streamFailure(p))...)
	return f.take(), true
}

func (f *converseFramer) take() []byte {
	out := f.out
	f.out = nil
	return out
}

// Text sends a piece of text.
func (f *converseFramer) Text(s string) { f.out = append(f.out, f.st.Text(s)...) }

// ToolCalls sends tool-use blocks and their input.
func (f *converseFramer) ToolCalls(calls []genstream.ToolCallDelta) {
	for _, c := range calls {
		if f.calls.opens(c) {
			f.out = append(f.out, f.st.ToolStart(c.ID, c.Function.Name)...)
		}
		f.out = append(f.out, f.st.ToolInput(c.Function.Arguments)...)
	}
}

// Finish sends the stop events, or the error the worker ended with.
func (f *converseFramer) Finish(reason string, usage *genstream.Usage, errText string) {
	if errText != "" {
		f.out = append(f.out, f.st.Fail(modelFailure(errText))...)
		return
	}
	f.out = append(f.out, f.st.Stop(converseStop(reason), usageOf(usage, f.gen.Tokens()), time.Since(f.from))...)
}

// callBlocks notes which tool call is open: a delta whose index differs
// from the last one's opens a new tool-use block.
type callBlocks struct {
	last int
	any  bool
}

func (c *callBlocks) opens(d genstream.ToolCallDelta) bool {
	if c.any && d.Index == c.last {
		return false
	}
	c.any, c.last = true, d.Index
	return true
}

// converseStop is Converse's stop reason for a worker's finish reason: stop
// means a stop string ended the text, eos the model's end token.
func converseStop(reason string) string { return awsapi.StopReason(reason, reason == "stop") }

// usageOf is a worker's usage in Converse terms; without one, the tokens seen.
func usageOf(u *genstream.Usage, tokens int) awsapi.Usage {
	if u == nil {
		return awsapi.Usage{OutputTokens: tokens}
	}
	return awsapi.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens}
}

// replyFolder collects a worker's JSON-lines generation into one Reply,
// for a Converse request whose model streamed its answer anyway.
type replyFolder struct {
	gen    genstream.Gen
	reply  awsapi.Reply
	calls  []genstream.ToolCallDelta
	blocks callBlocks
	err    error
}

// Text adds a piece of text.
func (r *replyFolder) Text(s string) { r.reply.Text += s }

// ToolCalls collects tool calls, joining the pieces of their arguments.
func (r *replyFolder) ToolCalls(calls []genstream.ToolCallDelta) {
	for _, c := range calls {
		if r.blocks.opens(c) {
			r.calls = append(r.calls, c)
			continue
		}
		r.calls[len(r.calls)-1].Function.Arguments += c.Function.Arguments
	}
}

// Finish sets the stop reason, the usage and the tool uses, or the error
// the worker ended with.
func (r *replyFolder) Finish(reason string, usage *genstream.Usage, errText string) {
	if errText != "" {
		r.err = &dialect.WorkerError{Code: 424, Msg: errText}
		return
	}
	r.reply.StopReason, r.reply.Usage = converseStop(reason), usageOf(usage, r.gen.Tokens())
	for _, c := range r.calls {
		use, err := awsapi.NewToolUse(c.ID, c.Function.Name, c.Function.Arguments)
		if err != nil {
			r.err = notChat{err}
			return
		}
		r.reply.ToolUses = append(r.reply.ToolUses, use)
	}
}
