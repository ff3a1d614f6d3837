package awsapi

import (
	"bytes"
	"encoding/json"
	"strings"
)

// InferenceProfilePrefixes are the geography prefixes of Bedrock's
// cross-region inference profiles ("us.anthropic.claude-..."): a modelId
// with one reaches the model named without it.
var InferenceProfilePrefixes = []string{"us.", "eu.", "apac.", "global."}

// ModelCandidates returns the model names a Converse modelId may mean, in
// the order to try them: the id itself, then (for an ARN) its last path
// element, then each of those without an inference-profile prefix.
func ModelCandidates(modelID string) []string {
	ids := []string{modelID}
	if strings.HasPrefix(modelID, "arn:") {
		if i := strings.LastIndexByte(modelID, '/'); i >= 0 && i+1 < len(modelID) {
			ids = append(ids, modelID[i+1:])
		}
	}
	out := ids
	for _, id := range ids {
		for _, p := range InferenceProfilePrefixes {
			if rest, ok := strings.CutPrefix(id, p); ok && rest != "" {
				out = append(out, rest)
			}
		}
	}
	return out
}

// converseRequest is the body of Converse and ConverseStream. Fields that
// switchyard cannot honour are kept raw so that their presence is refused.
type converseRequest struct {
	Messages        []converseMessage `json:"messages"`
	System          []json.RawMessage `json:"system"`
	InferenceConfig *inferenceConfig  `json:"inferenceConfig"`
	ToolConfig      *toolConfig       `json:"toolConfig"`
}

type converseMessage struct {
	Role    string            `json:"role"`
	Content []json.RawMessage `json:"content"`
}

type inferenceConfig struct {
	MaxTokens     *int     `json:"maxTokens"`
	Temperature   *float64 `json:"temperature"`
	TopP          *float64 `json:"topP"`
	StopSequences []string `json:"stopSequences"`
}

type toolConfig struct {
	Tools      []json.RawMessage `json:"tools"`
	ToolChoice json.RawMessage   `json:"toolChoice"`
}

// Fields of a Converse body: those read, those accepted and ignored
// (requestMetadata only labels invocation logs), and the rest, refused.
var (
	converseFields = []string{"messages", "system", "inferenceConfig", "toolConfig"}
	ignoredFields  = []string{"requestMetadata", "modelId"}
)

// ChatRequest is a Converse request in switchyard's chat schema.
type ChatRequest struct {
	// Body is the chat request's JSON: messages, max_tokens, temperature,
	// top_p, stop, tools, tool_choice and stream.
	Body []byte
	// Tools reports whether the request offers tools.
	Tools bool
}

// ChatFromConverse translates a Converse body into the chat schema the
// model's handler reads; stream sets the chat request's "stream". A body
// that does not fit the API, or that uses a field or content block
// switchyard does not emulate, is a *ValidationError naming it.
//
// The mapping: system text blocks become one system message; text blocks
// of a message are joined by newlines; an assistant's toolUse blocks become
// its tool_calls (input as the JSON arguments string); a user's toolResult
// blocks become tool messages (tool_call_id = toolUseId) ahead of its text,
// their text and json contents joined by newlines, prefixed "Error: " when
// the status is error; inferenceConfig maps to max_tokens, temperature,
// top_p and stop; toolConfig.tools[].toolSpec become OpenAI function tools
// and toolChoice auto/any/tool become "auto", "required" and a named
// function. cachePoint blocks, which only steer billing-side caching, are
// skipped.
func ChatFromConverse(body []byte, stream bool) (ChatRequest, error) {
	req, err := decodeConverse(body)
	if err != nil {
		return ChatRequest{}, err
	}
	chat := map[string]any{"stream": stream}
	msgs, err := systemMessages(req.System)
	if err != nil {
		return ChatRequest{}, err
	}
	conv, err := chatMessages(req.Messages)
	if err != nil {
		return ChatRequest{}, err
	}
	chat["messages"] = append(msgs, conv...)
	if err := putInference(chat, req.InferenceConfig); err != nil {
		return ChatRequest{}, err
	}
	tools, err := putTools(chat, req.ToolConfig)
	if err != nil {
		return ChatRequest{}, err
	}
	b, err := json.Marshal(chat)
	if err != nil {
		return ChatRequest{}, invalid("body", "cannot be re-encoded: %v", err)
	}
	return ChatRequest{Body: b, Tools: tools}, nil
}

// decodeConverse reads the body, refusing unknown and unsupported fields.
func decodeConverse(body []byte) (converseRequest, error) {
	var req converseRequest
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(body, &raw); err != nil || raw == nil {
		return req, invalid("body", "is not a JSON object")
	}
	for k, v := range raw {
		if !contains(converseFields, k) && !contains(ignoredFields, k) && !isNull(v) {
			return req, invalid(k, "is not supported by switchyard's Converse")
		}
	}
	d := json.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(&req); err != nil {
		return req, invalid(fieldOf(err), "has the wrong type: %v", err)
	}
	if len(req.Messages) == 0 {
		return req, invalid("messages", "must hold at least one message")
	}
	return req, nil
}

// fieldOf names the field a json.UnmarshalTypeError is about.
func fieldOf(err error) string {
	if te, ok := err.(*json.UnmarshalTypeError); ok && te.Field != "" {
		return te.Field
	}
	return "body"
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func isNull(v json.RawMessage) bool { return string(bytes.TrimSpace(v)) == "null" }

// block reads one content block, a union: exactly one member set. It
// returns the member's name and value.
func block(raw json.RawMessage, field string) (string, json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return "", nil, invalid(field, "must be an object with one member")
	}
	var name string
	var value json.RawMessage
	for k, v := range m {
		if isNull(v) {
			continue
		}
		if name != "" {
			return "", nil, invalid(field, "must have exactly one member, it has %s and %s", name, k)
		}
		name, value = k, v
	}
	if name == "" {
		return "", nil, invalid(field, "must have exactly one member")
	}
	return name, value, nil
}

// systemMessages turns the system blocks into at most one system message.
func systemMessages(blocks []json.RawMessage) ([]any, error) {
	said, err := texts(blocks, func(i int) string { return path("system", i) }, "", nil)
	if err != nil || len(said) == 0 {
		return nil, err
	}
	return []any{map[string]any{"role": "system", "content": strings.Join(said, "\n")}}, nil
}

// texts walks content blocks: it collects the text of text blocks, skips
// cachePoint blocks, passes each block of the kind named by kind (if any)
// to take, and refuses any other block. at names block i's field.
func texts(blocks []json.RawMessage, at func(i int) string, kind string, take func(v json.RawMessage, field string) error) ([]string, error) {
	var out []string
	for i, raw := range blocks {
		field := at(i)
		k, v, err := block(raw, field)
		if err != nil {
			return nil, err
		}
		switch {
		case k == "text":
			s, err := str(v, path(field, "text"))
			if err != nil {
				return nil, err
			}
			out = append(out, s)
		case k == "cachePoint":
		case k == kind && take != nil:
			if err := take(v, path(field, kind)); err != nil {
				return nil, err
			}
		default:
			return nil, unsupportedBlock(field, k)
		}
	}
	return out, nil
}

func unsupportedBlock(field, kind string) error {
	return invalid(path(field, kind), "content blocks of this type are not supported by switchyard's Converse")
}

func str(v json.RawMessage, field string) (string, error) {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", invalid(field, "must be a string")
	}
	return s, nil
}

// chatMessages translates the conversation.
func chatMessages(msgs []converseMessage) ([]any, error) {
	var out []any
	for i, m := range msgs {
		field := path("messages", i)
		var more []any
		var err error
		switch m.Role {
		case "user":
			more, err = userMessages(m.Content, field)
		case "assistant":
			more, err = assistantMessage(m.Content, field)
		default:
			err = invalid(path(field, "role"), "must be user or assistant, not %q", m.Role)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	return out, nil
}

// userMessages returns a user turn: one tool message per toolResult, then
// a user message with the text, if any.
func userMessages(content []json.RawMessage, field string) ([]any, error) {
	var out []any
	said, err := texts(content, contentAt(field), "toolResult", func(v json.RawMessage, at string) error {
		msg, err := toolResult(v, at)
		out = append(out, msg)
		return err
	})
	if err != nil {
		return nil, err
	}
	if len(said) > 0 || len(out) == 0 {
		out = append(out, map[string]any{"role": "user", "content": strings.Join(said, "\n")})
	}
	return out, nil
}

// contentAt names the content blocks of the message at field.
func contentAt(field string) func(int) string {
	return func(i int) string { return path(field, "content", i) }
}

// toolResultBlock is a Converse toolResult.
type toolResultBlock struct {
	ToolUseID string            `json:"toolUseId"`
	Content   []json.RawMessage `json:"content"`
	Status    string            `json:"status"`
}

// toolResult turns a toolResult block into an OpenAI tool message.
func toolResult(v json.RawMessage, field string) (any, error) {
	var tr toolResultBlock
	if err := json.Unmarshal(v, &tr); err != nil {
		return nil, invalid(field, "must be an object with toolUseId and content")
	}
	if tr.ToolUseID == "" {
		return nil, invalid(path(field, "toolUseId"), "is required")
	}
	var parts []string
	for k, raw := range tr.Content {
		at := path(field, "content", k)
		kind, cv, err := block(raw, at)
		if err != nil {
			return nil, err
		}
		switch kind {
		case "text":
			s, err := str(cv, path(at, "text"))
			if err != nil {
				return nil, err
			}
			parts = append(parts, s)
		case "json":
			var buf bytes.Buffer
			if err := json.Compact(&buf, cv); err != nil {
				return nil, invalid(path(at, "json"), "is not JSON")
			}
			parts = append(parts, buf.String())
		default:
			return nil, unsupportedBlock(at, kind)
		}
	}
	text := strings.Join(parts, "\n")
	switch tr.Status {
	case "", "success":
	case "error":
		text = "Error: " + text
	default:
		return nil, invalid(path(field, "status"), "must be success or error, not %q", tr.Status)
	}
	return map[string]any{"role": "tool", "tool_call_id": tr.ToolUseID, "content": text}, nil
}

// toolUseBlock is a Converse toolUse.
type toolUseBlock struct {
	ToolUseID string          `json:"toolUseId"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
}

// assistantMessage turns an assistant turn into one message with its text
// and tool calls.
func assistantMessage(content []json.RawMessage, field string) ([]any, error) {
	var calls []any
	said, err := texts(content, contentAt(field), "toolUse", func(v json.RawMessage, at string) error {
		call, err := toolCall(v, at)
		calls = append(calls, call)
		return err
	})
	if err != nil {
		return nil, err
	}
	msg := map[string]any{"role": "assistant", "content": strings.Join(said, "\n")}
	if len(calls) > 0 {
		msg["tool_calls"] = calls
	}
	return []any{msg}, nil
}

// toolCall turns a toolUse block into an OpenAI tool call.
func toolCall(v json.RawMessage, field string) (any, error) {
	var tu toolUseBlock
	if err := json.Unmarshal(v, &tu); err != nil {
		return nil, invalid(field, "must be an object with toolUseId, name and input")
	}
	if tu.ToolUseID == "" || tu.Name == "" {
		return nil, invalid(field, "needs toolUseId and name")
	}
	args := []byte("{}")
	if len(tu.Input) > 0 && !isNull(tu.Input) {
		var buf bytes.Buffer
		if err := json.Compact(&buf, tu.Input); err != nil {
			return nil, invalid(path(field, "input"), "is not JSON")
		}
		args = buf.Bytes()
	}
	return map[string]any{"id": tu.ToolUseID, "type": "function",
		"function": map[string]any{"name": tu.Name, "arguments": string(args)}}, nil
}

// putInference copies inferenceConfig into the chat request.
func putInference(chat map[string]any, ic *inferenceConfig) error {
	if ic == nil {
		return nil
	}
	if ic.MaxTokens != nil {
		if *ic.MaxTokens < 1 {
			return invalid("inferenceConfig.maxTokens", "must be at least 1, not %d", *ic.MaxTokens)
		}
		chat["max_tokens"] = *ic.MaxTokens
	}
	if ic.Temperature != nil {
		chat["temperature"] = *ic.Temperature
	}
	if ic.TopP != nil {
		chat["top_p"] = *ic.TopP
	}
	if len(ic.StopSequences) > 0 {
		chat["stop"] = ic.StopSequences
	}
	return nil
}

// toolSpec is a Converse toolSpec.
type toolSpec struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	InputSchema *struct {
		JSON json.RawMessage `json:"json"`
	} `json:"inputSchema"`
	Strict *bool `json:"strict"`
}

// putTools copies toolConfig into the chat request; it reports whether
// any tool is offered.
func putTools(chat map[string]any, tc *toolConfig) (bool, error) {
	if tc == nil {
		return false, nil
	}
	var tools []any
	for i, raw := range tc.Tools {
		field := path("toolConfig", "tools", i)
		kind, v, err := block(raw, field)
		if err != nil {
			return false, err
		}
		switch kind {
		case "toolSpec":
			t, err := functionTool(v, path(field, "toolSpec"))
			if err != nil {
				return false, err
			}
			tools = append(tools, t)
		case "cachePoint":
		default:
			return false, unsupportedBlock(field, kind)
		}
	}
	if len(tools) == 0 {
		return false, invalid("toolConfig.tools", "must hold at least one toolSpec")
	}
	chat["tools"] = tools
	if len(tc.ToolChoice) > 0 && !isNull(tc.ToolChoice) {
		choice, err := toolChoice(tc.ToolChoice)
		if err != nil {
			return false, err
		}
		chat["tool_choice"] = choice
	}
	return true, nil
}

// functionTool turns a toolSpec into an OpenAI function tool.
func functionTool(v json.RawMessage, field string) (any, error) {
	var ts toolSpec
	if err := json.Unmarshal(v, &ts); err != nil {
		return nil, invalid(field, "must be an object with name, description and inputSchema")
	}
	if ts.Name == "" {
		return nil, invalid(path(field, "name"), "is required")
	}
	if ts.Strict != nil && *ts.Strict {
		return nil, invalid(path(field, "strict"), "strict schema adherence is not supported by switchyard")
	}
	fn := map[string]any{"name": ts.Name}
	if ts.Description != "" {
		fn["description"] = ts.Description
	}
	if ts.InputSchema == nil || len(ts.InputSchema.JSON) == 0 || isNull(ts.InputSchema.JSON) {
		return nil, invalid(path(field, "inputSchema", "json"), "is required")
	}
	fn["parameters"] = ts.InputSchema.JSON
	return map[string]any{"type": "function", "function": fn}, nil
}

// toolChoice maps Converse's toolChoice union to OpenAI's tool_choice.
func toolChoice(raw json.RawMessage) (any, error) {
	kind, v, err := block(raw, "toolConfig.toolChoice")
	if err != nil {
		return nil, err
	}
	switch kind {
	case "auto":
		return "auto", nil
	case "any":
		return "required", nil
	case "tool":
		var named struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(v, &named) != nil || named.Name == "" {
			return nil, invalid("toolConfig.toolChoice.tool.name", "is required")
		}
		return map[string]any{"type": "function", "function": map[string]any{"name": named.Name}}, nil
	}
	return nil, invalid(path("toolConfig.toolChoice", kind), "is not a tool choice (auto, any or tool)")
}
