package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"go.uber.org/zap"
)

// whole makes one Converse call.
func (a *Agent) whole(ctx context.Context, msgs []types.Message, _ func(string) error) (turn, error) {
	model, system, tools := a.request()
	out, err := a.Planner.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: model, System: system, ToolConfig: tools, Messages: msgs,
	})
	if err != nil {
		return turn{}, fmt.Errorf("%w: %w", ErrPlanner, err)
	}
	m, ok := out.Output.(*types.ConverseOutputMemberMessage)
	if !ok {
		return turn{}, fmt.Errorf("%w: the answer holds no message", ErrPlanner)
	}
	t := turn{message: m.Value, stop: out.StopReason}
	var text []string
	for _, b := range m.Value.Content {
		switch v := b.(type) {
		case *types.ContentBlockMemberText:
			text = append(text, v.Value)
		case *types.ContentBlockMemberToolUse:
			c, err := wholeCall(v.Value)
			if err != nil {
				return turn{}, err
			}
			t.calls = append(t.calls, c)
		}
	}
	t.text = strings.Join(text, "")
	return t, nil
}

// wholeCall reads a toolUse block of a Converse answer.
func wholeCall(u types.ToolUseBlock) (toolCall, error) {
	var input []byte
	if u.Input != nil {
		var err error
		if input, err = u.Input.MarshalSmithyDocument(); err != nil {
			return toolCall{}, fmt.Errorf("%w: the input of tool use %s: %w", ErrPlanner, aws.ToString(u.ToolUseId), err)
		}
	}
	return toolCall{id: aws.ToString(u.ToolUseId), name: aws.ToString(u.Name), input: input}, nil
}

// streamed makes one ConverseStream call. When the stream breaks because
// the SDK closed its own connection (net.ErrClosed, see plainBodies)
// before any of its text went to emit, the call is made once more.
func (a *Agent) streamed(ctx context.Context, msgs []types.Message, emit func(string) error) (turn, error) {
	sent := false
	track := func(s string) error { sent = true; return emit(s) }
	t, err := a.converseStream(ctx, msgs, track)
	if err != nil && !sent && errors.Is(err, net.ErrClosed) {
		a.Log.Warn("the reasoning model's stream broke before its first text; calling once more", zap.Error(err))
		t, err = a.converseStream(ctx, msgs, track)
	}
	return t, err
}

func (a *Agent) converseStream(ctx context.Context, msgs []types.Message, emit func(string) error) (turn, error) {
	model, system, tools := a.request()
	out, err := a.Planner.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{
		ModelId: model, System: system, ToolConfig: tools, Messages: msgs,
	})
	if err != nil {
		return turn{}, fmt.Errorf("%w: %w", ErrPlanner, err)
	}
	st := out.GetStream()
	defer st.Close()
	var acc streamTurn
	for ev := range st.Events() {
		if err := acc.add(ev, emit); err != nil {
			return turn{}, err
		}
	}
	if err := st.Err(); err != nil {
		return turn{}, fmt.Errorf("%w: the stream broke: %w", ErrPlanner, err)
	}
	return acc.turn()
}

// streamTurn collects the events of one ConverseStream answer.
type streamTurn struct {
	blocks []*streamBlock
	stop   types.StopReason
	done   bool
}

// streamBlock is one content block: text, or a tool use and its input.
type streamBlock struct {
	index int32
	text  strings.Builder
	use   *types.ToolUseBlockStart
	input strings.Builder
}

// add takes one event; text goes to emit as it arrives.
func (s *streamTurn) add(ev types.ConverseStreamOutput, emit func(string) error) error {
	switch v := ev.(type) {
	case *types.ConverseStreamOutputMemberContentBlockStart:
		if u, ok := v.Value.Start.(*types.ContentBlockStartMemberToolUse); ok {
			s.block(aws.ToInt32(v.Value.ContentBlockIndex)).use = &u.Value
		}
	case *types.ConverseStreamOutputMemberContentBlockDelta:
		b := s.block(aws.ToInt32(v.Value.ContentBlockIndex))
		switch d := v.Value.Delta.(type) {
		case *types.ContentBlockDeltaMemberText:
			b.text.WriteString(d.Value)
			if d.Value != "" {
				return emit(d.Value)
			}
		case *types.ContentBlockDeltaMemberToolUse:
			b.input.WriteString(aws.ToString(d.Value.Input))
		}
	case *types.ConverseStreamOutputMemberMessageStop:
		s.stop, s.done = v.Value.StopReason, true
	}
	return nil
}

// block returns the block with index i, adding it when new.
func (s *streamTurn) block(i int32) *streamBlock {
	for _, b := range s.blocks {
		if b.index == i {
			return b
		}
	}
	b := &streamBlock{index: i}
	s.blocks = append(s.blocks, b)
	return b
}

// turn returns the answer the events made: its message as it goes back to
// the reasoning model, its text and its tool calls.
func (s *streamTurn) turn() (turn, error) {
	if !s.done {
		return turn{}, fmt.Errorf("%w: the stream ended without messageStop", ErrPlanner)
	}
	slices.SortFunc(s.blocks, func(x, y *streamBlock) int { return int(x.index - y.index) })
	t := turn{stop: s.stop, message: types.Message{Role: types.ConversationRoleAssistant}}
	var text strings.Builder
	for _, b := range s.blocks {
		block, call, err := b.content()
		if err != nil {
			return turn{}, err
		}
		if block == nil {
			continue
		}
		t.message.Content = append(t.message.Content, block)
		if call != nil {
			t.calls = append(t.calls, *call)
		} else {
			text.WriteString(b.text.String())
		}
	}
	t.text = text.String()
	return t, nil
}

// content returns the block as a message's content block (nil for a text
// block without text), with the tool call it is, if it is one.
func (b *streamBlock) content() (types.ContentBlock, *toolCall, error) {
	if b.use == nil {
		if b.text.Len() == 0 {
			return nil, nil, nil
		}
		return &types.ContentBlockMemberText{Value: b.text.String()}, nil, nil
	}
	raw := b.input.String()
	if strings.TrimSpace(raw) == "" {
		raw = "{}"
	}
	var input any
	if err := json.Unmarshal([]byte(raw), &input); err != nil {
		return nil, nil, fmt.Errorf("%w: the input of tool use %s is not JSON: %s", ErrPlanner, aws.ToString(b.use.ToolUseId), quote([]byte(raw)))
	}
	use := types.ToolUseBlock{ToolUseId: b.use.ToolUseId, Name: b.use.Name, Input: document.NewLazyDocument(input)}
	call := toolCall{id: aws.ToString(b.use.ToolUseId), name: aws.ToString(b.use.Name), input: []byte(raw)}
	return &types.ContentBlockMemberToolUse{Value: use}, &call, nil
}
