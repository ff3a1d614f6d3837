package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"go.uber.org/zap"
)

// Errors of the loop, wrapped with detail.
var (
	// ErrPlanner means the call of the reasoning model failed.
	ErrPlanner = errors.New("agent: the reasoning model failed")
	// ErrRounds means the reasoning model was still calling tools when
	// the round bound was reached.
	ErrRounds = errors.New("agent: round bound reached")
)

// Agent is the loop: the reasoning model plans through Converse and calls
// the tool; the tool's answer goes back to it as a toolResult; the loop
// ends when the reasoning model ends its turn, or after MaxRounds calls of
// it.
type Agent struct {
	Planner   PlannerAPI // the Bedrock Runtime client, never the SageMaker one
	ModelID   string
	Tool      Tool
	MaxRounds int
	Log       *zap.Logger
}

// turn is one answer of the reasoning model.
type turn struct {
	message types.Message // as it goes back in the next call
	text    string        // its text blocks, joined
	calls   []toolCall
	stop    types.StopReason
}

// toolCall is one toolUse block: its id, the tool's name, its input JSON.
type toolCall struct {
	id, name string
	input    []byte
}

// converse makes one call of the reasoning model with the conversation so
// far; emit, when not nil, receives its text as it is generated.
type converse func(ctx context.Context, msgs []types.Message, emit func(string) error) (turn, error)

// Run answers prompt: the text of the reasoning model's last turn.
func (a *Agent) Run(ctx context.Context, prompt string) (string, error) {
	return a.loop(ctx, prompt, a.whole, nil)
}

// Stream answers prompt as Run does, calling ConverseStream, and hands
// emit the text of every turn as it is generated: a turn that calls the
// tool may say something first, and the final answer follows as it is
// written.
func (a *Agent) Stream(ctx context.Context, prompt string, emit func(string) error) (string, error) {
	return a.loop(ctx, prompt, a.streamed, emit)
}

func (a *Agent) loop(ctx context.Context, prompt string, call converse, emit func(string) error) (string, error) {
	start := time.Now()
	msgs := []types.Message{textMessage(types.ConversationRoleUser, prompt)}
	tools := 0
	sep := separated{emit: emit}
	for round := 1; round <= a.MaxRounds; round++ {
		t, err := call(ctx, msgs, sep.next())
		if err != nil {
			return "", err
		}
		msgs = append(msgs, t.message)
		if t.stop != types.StopReasonToolUse || len(t.calls) == 0 {
			a.finished(t, round, tools, time.Since(start))
			return t.text, nil
		}
		if round == a.MaxRounds {
			break // no call of the reasoning model is left to read the tool's answer
		}
		results, err := a.useTools(ctx, t.calls)
		if err != nil {
			return "", err
		}
		tools += len(t.calls)
		msgs = append(msgs, types.Message{Role: types.ConversationRoleUser, Content: results})
	}
	return "", fmt.Errorf("%w: the reasoning model still asked for a tool in its call %d of %d (tool calls made: %d)", ErrRounds, a.MaxRounds, a.MaxRounds, tools)
}

// separated hands text on to emit, with a blank line between the texts of
// two turns.
type separated struct {
	emit        func(string) error
	said, fresh bool // some text went out; none of this turn's yet
}

// next starts a turn and returns its emit, nil when there is no emit.
func (s *separated) next() func(string) error {
	if s.emit == nil {
		return nil
	}
	s.fresh = true
	return s.send
}

func (s *separated) send(text string) error {
	if s.fresh && s.said {
		text = "\n\n" + text
	}
	s.fresh, s.said = false, true
	return s.emit(text)
}

// finished logs how an invocation ended; an answer the reasoning model
// could not finish is kept but logged as a warning.
func (a *Agent) finished(t turn, rounds, tools int, took time.Duration) {
	fields := []zap.Field{zap.Int("rounds", rounds), zap.Int("tool_calls", tools),
		zap.String("stop_reason", string(t.stop)), zap.Duration("took", took)}
	if t.stop != types.StopReasonEndTurn && t.stop != types.StopReasonStopSequence {
		a.Log.Warn("the reasoning model stopped before the end of its answer", fields...)
		return
	}
	a.Log.Info("invocation answered", fields...)
}

// useTools runs each call and returns one toolResult block per call. A
// call the tool cannot take (another tool's name, no text) is answered
// with an error result for the reasoning model to see; a failed endpoint
// call ends the invocation.
func (a *Agent) useTools(ctx context.Context, calls []toolCall) ([]types.ContentBlock, error) {
	blocks := make([]types.ContentBlock, 0, len(calls))
	for _, c := range calls {
		text, err := c.text(a.Tool.Course.Tool)
		status := types.ToolResultStatusSuccess
		if err != nil {
			text, status = err.Error(), types.ToolResultStatusError
		} else if text, err = a.callTool(ctx, text); err != nil {
			return nil, err
		}
		blocks = append(blocks, &types.ContentBlockMemberToolResult{Value: types.ToolResultBlock{
			ToolUseId: aws.String(c.id), Status: status,
			Content: []types.ToolResultContentBlock{&types.ToolResultContentBlockMemberText{Value: text}},
		}})
	}
	return blocks, nil
}

// callTool runs the tool once and logs the call.
func (a *Agent) callTool(ctx context.Context, text string) (string, error) {
	start := time.Now()
	answer, err := a.Tool.Call(ctx, text)
	a.Log.Debug("tool called", zap.String("tool", a.Tool.Course.Tool), zap.String("endpoint", a.Tool.Endpoint),
		zap.Duration("took", time.Since(start)), zap.Error(err))
	return answer, err
}

// text returns the text a call of the tool named tool asks to work on.
func (c toolCall) text(tool string) (string, error) {
	if c.name != tool {
		return "", fmt.Errorf("there is no tool named %q; the only tool is %q", c.name, tool)
	}
	var in map[string]any
	if len(c.input) > 0 && json.Unmarshal(c.input, &in) != nil {
		return "", fmt.Errorf("the input of %s is not a JSON object: %s", tool, quote(c.input))
	}
	text, ok := in[ToolInput].(string)
	if !ok {
		return "", fmt.Errorf("%s needs its input's %q, a string: the text to work on", tool, ToolInput)
	}
	return text, nil
}

// request returns the parts of a Converse call common to both forms.
func (a *Agent) request() (*string, []types.SystemContentBlock, *types.ToolConfiguration) {
	var system []types.SystemContentBlock
	if p := strings.TrimSpace(a.Tool.Course.PlannerPrompt); p != "" {
		system = []types.SystemContentBlock{&types.SystemContentBlockMemberText{Value: p}}
	}
	return aws.String(a.ModelID), system, &types.ToolConfiguration{Tools: []types.Tool{a.Tool.Spec()}}
}

func textMessage(role types.ConversationRole, text string) types.Message {
	return types.Message{Role: role, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: text}}}
}
