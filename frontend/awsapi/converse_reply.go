package awsapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Converse's stop reasons that switchyard produces.
const (
	StopEndTurn       = "end_turn"
	StopMaxTokens     = "max_tokens"
	StopSequence      = "stop_sequence"
	StopToolUse       = "tool_use"
	StopContentFilter = "content_filtered"
)

// StopReason maps a generation's finish reason to Converse's: length is
// max_tokens, tool_calls is tool_use, content_filter is content_filtered,
// and any other end (eos, stop) is end_turn, or stop_sequence when a stop
// string ended the text (bySequence).
func StopReason(finish string, bySequence bool) string {
	switch finish {
	case "length":
		return StopMaxTokens
	case "tool_calls":
		return StopToolUse
	case "content_filter":
		return StopContentFilter
	}
	if bySequence {
		return StopSequence
	}
	return StopEndTurn
}

// ToolUse is one tool call of an answer.
type ToolUse struct {
	ID    string
	Name  string
	Input json.RawMessage // a JSON value, the call's arguments
}

// Usage is an answer's token counts.
type Usage struct {
	InputTokens  int
	OutputTokens int
}

// Reply is a finished answer in Converse terms.
type Reply struct {
	Text       string
	ToolUses   []ToolUse
	StopReason string
	Usage      Usage
}

// ErrNotChat means a model answered something that is not an OpenAI
// chat.completion, so it cannot be a Converse answer.
var ErrNotChat = errors.New("awsapi: the model's answer is not a chat.completion")

// chatCompletion is the part of an OpenAI chat.completion a Reply needs;
// stop_reason is vLLM's (and switchyard's) extension naming the stop string.
type chatCompletion struct {
	Choices []struct {
		Message *struct {
			Content   *string `json:"content"`
			ToolCalls []struct {
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
		StopReason   any    `json:"stop_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// ReplyFromChat reads a chat.completion's first choice. It wraps ErrNotChat
// when body is not one, or when a tool call's arguments are not JSON.
func ReplyFromChat(body []byte) (Reply, error) {
	var c chatCompletion
	if err := json.Unmarshal(body, &c); err != nil || len(c.Choices) == 0 || c.Choices[0].Message == nil {
		return Reply{}, ErrNotChat
	}
	ch := c.Choices[0]
	r := Reply{StopReason: StopReason(ch.FinishReason, stopString(ch.StopReason))}
	if ch.Message.Content != nil {
		r.Text = *ch.Message.Content
	}
	for _, tc := range ch.Message.ToolCalls {
		u, err := NewToolUse(tc.ID, tc.Function.Name, tc.Function.Arguments)
		if err != nil {
			return Reply{}, err
		}
		r.ToolUses = append(r.ToolUses, u)
	}
	if c.Usage != nil {
		r.Usage = Usage{InputTokens: c.Usage.PromptTokens, OutputTokens: c.Usage.CompletionTokens}
	}
	return r, nil
}

// stopString reports whether a stop_reason names a stop string.
func stopString(v any) bool {
	s, ok := v.(string)
	return ok && s != ""
}

// NewToolUse makes a ToolUse from an OpenAI call; empty arguments are {}.
func NewToolUse(id, name, arguments string) (ToolUse, error) {
	if arguments == "" {
		arguments = "{}"
	}
	if !json.Valid([]byte(arguments)) {
		return ToolUse{}, fmt.Errorf("%w: the arguments of its tool call %s are not JSON", ErrNotChat, name)
	}
	var buf bytes.Buffer
	_ = json.Compact(&buf, []byte(arguments)) // valid JSON compacts
	return ToolUse{ID: id, Name: name, Input: buf.Bytes()}, nil
}

// wire shapes of the Converse answer.
type (
	converseAnswer struct {
		Output     converseOutput `json:"output"`
		StopReason string         `json:"stopReason"`
		Usage      tokenUsage     `json:"usage"`
		Metrics    metrics        `json:"metrics"`
	}
	converseOutput struct {
		Message assistantTurn `json:"message"`
	}
	assistantTurn struct {
		Role    string         `json:"role"`
		Content []contentBlock `json:"content"`
	}
	contentBlock struct {
		Text    *string     `json:"text,omitempty"`
		ToolUse *toolUseOut `json:"toolUse,omitempty"`
	}
	toolUseOut struct {
		ToolUseID string          `json:"toolUseId"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
	}
	tokenUsage struct {
		InputTokens  int `json:"inputTokens"`
		OutputTokens int `json:"outputTokens"`
		TotalTokens  int `json:"totalTokens"`
	}
	metrics struct {
		LatencyMs int64 `json:"latencyMs"`
	}
)

// ConverseJSON returns the Converse answer: output.message with a text block
// (when there is text, or nothing else) and one toolUse block per call,
// stopReason, usage and metrics.latencyMs.
func (r Reply) ConverseJSON(latency time.Duration) []byte {
	var blocks []contentBlock
	if r.Text != "" || len(r.ToolUses) == 0 {
		blocks = append(blocks, contentBlock{Text: &r.Text})
	}
	for _, u := range r.ToolUses {
		blocks = append(blocks, contentBlock{ToolUse: &toolUseOut{ToolUseID: u.ID, Name: u.Name, Input: u.Input}})
	}
	return mustJSON(converseAnswer{
		Output:     converseOutput{Message: assistantTurn{Role: "assistant", Content: blocks}},
		StopReason: r.StopReason,
		Usage:      r.Usage.wire(),
		Metrics:    metrics{LatencyMs: latency.Milliseconds()},
	})
}

func (u Usage) wire() tokenUsage {
	return tokenUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.InputTokens + u.OutputTokens}
}
