package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"
)

// ErrTool means the tool's call of the small model's endpoint failed.
var ErrTool = errors.New("agent: the tool's endpoint failed")

// ToolInput is the one field of the tool's input: the text to work on.
const ToolInput = "text"

// Tool is the course's tool: one InvokeEndpoint call of the small model
// per use, in the chat schema. It only returns the model's text; judging it
// is the reasoning model's job.
type Tool struct {
	API         EndpointAPI // the SageMaker Runtime client, never the Bedrock one
	Endpoint    string      // EndpointName
	TargetModel string      // TargetModel on a multi-model endpoint, or ""
	Course      Course
}

// chatRequest is the body of a tool call: the small model's chat schema.
type chatRequest struct {
	Messages    []chatMessage `json:"messages"`
	MaxTokens   int           `json:"max_tokens"`
	Temperature float64       `json:"temperature"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Body returns the JSON body of a call with text: the course's system
// prompt, then text as the user's message; max_tokens from the course,
// temperature ToolTemperature.
func (t Tool) Body(text string) []byte {
	b, _ := json.Marshal(chatRequest{
		Messages: []chatMessage{
			{Role: "system", Content: t.Course.SystemPrompt},
			{Role: "user", Content: text},
		},
		MaxTokens: t.Course.MaxTokens, Temperature: ToolTemperature,
	})
	return b
}

// Call sends text to the small model and returns its answer's text.
func (t Tool) Call(ctx context.Context, text string) (string, error) {
	in := &sagemakerruntime.InvokeEndpointInput{
		EndpointName: aws.String(t.Endpoint),
		ContentType:  aws.String("application/json"),
		Accept:       aws.String("application/json"),
		Body:         t.Body(text),
	}
	if t.TargetModel != "" {
		in.TargetModel = aws.String(t.TargetModel)
	}
	out, err := t.API.InvokeEndpoint(ctx, in)
	if err != nil {
		return "", fmt.Errorf("%w: endpoint %q: %w", ErrTool, t.Endpoint, err)
	}
	answer, err := ChatText(out.Body)
	if err != nil {
		return "", fmt.Errorf("%w: endpoint %q: %w", ErrTool, t.Endpoint, err)
	}
	return answer, nil
}

// ChatText returns the text of a chat answer: an OpenAI chat.completion's
// first choice (the shape of chat-completions servers: vLLM, LMI, TGI's
// Messages API, switchyard), or a text-generation answer's generated_text.
func ChatText(body []byte) (string, error) {
	var chat struct {
		Choices []struct {
			Message *struct {
				Content *string `json:"content"`
			} `json:"message"`
		} `json:"choices"`
		GeneratedText *string `json:"generated_text"`
	}
	if err := json.Unmarshal(body, &chat); err != nil {
		var list []struct {
			GeneratedText *string `json:"generated_text"`
		}
		if json.Unmarshal(body, &list) == nil && len(list) == 1 && list[0].GeneratedText != nil {
			return *list[0].GeneratedText, nil
		}
		return "", fmt.Errorf("the answer is not a chat completion: %s", quote(body))
	}
	switch {
	case len(chat.Choices) > 0 && chat.Choices[0].Message != nil && chat.Choices[0].Message.Content != nil:
		return *chat.Choices[0].Message.Content, nil
	case chat.GeneratedText != nil:
		return *chat.GeneratedText, nil
	}
	return "", fmt.Errorf("the answer has no choices[0].message.content: %s", quote(body))
}

// Spec returns the tool as toolConfig offers it: the course's name and
// description, and an input of one required string, text.
func (t Tool) Spec() types.Tool {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			ToolInput: map[string]any{"type": "string", "description": "the text to work on, in full"},
		},
		"required": []string{ToolInput},
	}
	return &types.ToolMemberToolSpec{Value: types.ToolSpecification{
		Name:        aws.String(t.Course.Tool),
		Description: aws.String(t.Course.Description),
		InputSchema: &types.ToolInputSchemaMemberJson{Value: document.NewLazyDocument(schema)},
	}}
}

// quote returns the start of b for an error message.
func quote(b []byte) string {
	const most = 200
	s := strings.ToValidUTF8(string(b), "?")
	if len(s) > most {
		return fmt.Sprintf("%q...", s[:most])
	}
	return fmt.Sprintf("%q", s)
}
