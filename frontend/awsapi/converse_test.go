package awsapi

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestModelCandidates(t *testing.T) {
	tests := []struct {
		id   string
		want []string
	}{
		{"chat", []string{"chat"}},
		{"us.chat", []string{"us.chat", "chat"}},
		{"global.anthropic.claude", []string{"global.anthropic.claude", "anthropic.claude"}},
		{"apac.x", []string{"apac.x", "x"}},
		{"us.", []string{"us."}},
		{"arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.planner",
			[]string{"arn:aws:bedrock:us-east-1:123456789012:inference-profile/eu.planner", "eu.planner", "planner"}},
	}
	for _, tt := range tests {
		if got := ModelCandidates(tt.id); !slices.Equal(got, tt.want) {
			t.Errorf("ModelCandidates(%q) = %q, want %q", tt.id, got, tt.want)
		}
	}
}

// compactJSON re-encodes s with sorted keys, so that equal JSON compares equal.
func compactJSON(t *testing.T, s []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(s, &v); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestChatFromConverse(t *testing.T) {
	tests := []struct {
		name, body string
		stream     bool
		want       string
		tools      bool
	}{
		{"text", `{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`, false,
			`{"messages":[{"content":"hi","role":"user"}],"stream":false}`, false},
		{"system, config, two text blocks", `{"system":[{"text":"Be brief."},{"cachePoint":{"type":"default"}},{"text":"No jokes."}],
			"messages":[{"role":"user","content":[{"text":"a"},{"text":"b"}]}],
			"inferenceConfig":{"maxTokens":64,"temperature":0.1,"topP":0.9,"stopSequences":["###"]},
			"requestMetadata":{"app":"test"}}`, true,
			`{"max_tokens":64,"messages":[{"content":"Be brief.\nNo jokes.","role":"system"},{"content":"a\nb","role":"user"}],` +
				`"stop":["###"],"stream":true,"temperature":0.1,"top_p":0.9}`, false},
		{"tools and a tool round", `{"messages":[
			{"role":"user","content":[{"text":"Guten Morgen?"}]},
			{"role":"assistant","content":[{"text":"Let me check."},{"toolUse":{"toolUseId":"t1","name":"classify","input":{"text": "Guten Morgen?"}}}]},
			{"role":"user","content":[{"toolResult":{"toolUseId":"t1","content":[{"text":"deu"},{"json":{"score": 0.9}}]}},{"text":"Thanks"}]},
			{"role":"user","content":[{"toolResult":{"toolUseId":"t2","status":"error","content":[{"text":"boom"}]}}]}],
			"toolConfig":{"tools":[{"toolSpec":{"name":"classify","description":"Names a language.",
				"inputSchema":{"json":{"type":"object","properties":{"text":{"type":"string"}}}}}}],"toolChoice":{"any":{}}}}`, false,
			`{"messages":[{"content":"Guten Morgen?","role":"user"},` +
				`{"content":"Let me check.","role":"assistant","tool_calls":[{"function":{"arguments":"{\"text\":\"Guten Morgen?\"}","name":"classify"},"id":"t1","type":"function"}]},` +
				`{"content":"deu\n{\"score\":0.9}","role":"tool","tool_call_id":"t1"},{"content":"Thanks","role":"user"},` +
				`{"content":"Error: boom","role":"tool","tool_call_id":"t2"}],"stream":false,"tool_choice":"required",` +
				`"tools":[{"function":{"description":"Names a language.","name":"classify","parameters":{"properties":{"text":{"type":"string"}},"type":"object"}},"type":"function"}]}`, true},
		{"named tool choice", `{"messages":[{"role":"user","content":[{"text":"x"}]}],"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{}}}}],"toolChoice":{"tool":{"name":"f"}}}}`, false,
			`{"messages":[{"content":"x","role":"user"}],"stream":false,"tool_choice":{"function":{"name":"f"},"type":"function"},"tools":[{"function":{"name":"f","parameters":{}},"type":"function"}]}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ChatFromConverse([]byte(tt.body), tt.stream)
			if err != nil {
				t.Fatal(err)
			}
			if g := compactJSON(t, got.Body); g != tt.want {
				t.Errorf("chat =\n%s\nwant\n%s", g, tt.want)
			}
			if got.Tools != tt.tools {
				t.Errorf("Tools = %v", got.Tools)
			}
		})
	}
}

func TestChatFromConverseRefuses(t *testing.T) {
	user := `{"role":"user","content":[{"text":"x"}]}`
	tests := []struct{ name, body, field string }{
		{"not an object", `[1]`, "body"},
		{"no messages", `{}`, "messages"},
		{"guardrails", `{"messages":[` + user + `],"guardrailConfig":{"guardrailIdentifier":"g"}}`, "guardrailConfig"},
		{"additional fields", `{"messages":[` + user + `],"additionalModelRequestFields":{"top_k":5}}`, "additionalModelRequestFields"},
		{"unknown field", `{"messages":[` + user + `],"temperature":1}`, "temperature"},
		{"image block", `{"messages":[{"role":"user","content":[{"image":{"format":"png"}}]}]}`, "messages[0].content[0].image"},
		{"two members", `{"messages":[{"role":"user","content":[{"text":"a","image":{}}]}]}`, "messages[0].content[0]"},
		{"role", `{"messages":[{"role":"system","content":[{"text":"a"}]}]}`, "messages[0].role"},
		{"tool result without id", `{"messages":[{"role":"user","content":[{"toolResult":{"content":[]}}]}]}`, "messages[0].content[0].toolResult.toolUseId"},
		{"tool result image", `{"messages":[{"role":"user","content":[{"toolResult":{"toolUseId":"a","content":[{"image":{}}]}}]}]}`,
			"messages[0].content[0].toolResult.content[0].image"},
		{"tool result status", `{"messages":[{"role":"user","content":[{"toolResult":{"toolUseId":"a","content":[],"status":"maybe"}}]}]}`,
			"messages[0].content[0].toolResult.status"},
		{"maxTokens zero", `{"messages":[` + user + `],"inferenceConfig":{"maxTokens":0}}`, "inferenceConfig.maxTokens"},
		{"maxTokens string", `{"messages":[` + user + `],"inferenceConfig":{"maxTokens":"9"}}`, "inferenceConfig.maxTokens"},
		{"system tool", `{"messages":[` + user + `],"toolConfig":{"tools":[{"systemTool":{"name":"web"}}]}}`, "toolConfig.tools[0].systemTool"},
		{"no tool", `{"messages":[` + user + `],"toolConfig":{"tools":[]}}`, "toolConfig.tools"},
		{"tool without schema", `{"messages":[` + user + `],"toolConfig":{"tools":[{"toolSpec":{"name":"f"}}]}}`, "toolConfig.tools[0].toolSpec.inputSchema.json"},
		{"strict", `{"messages":[` + user + `],"toolConfig":{"tools":[{"toolSpec":{"name":"f","strict":true,"inputSchema":{"json":{}}}}]}}`, "toolConfig.tools[0].toolSpec.strict"},
		{"tool choice", `{"messages":[` + user + `],"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{}}}}],"toolChoice":{"none":{}}}}`, "toolConfig.toolChoice.none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ChatFromConverse([]byte(tt.body), false)
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field {
				t.Fatalf("error %v, want a ValidationError about %s", err, tt.field)
			}
			if !strings.HasPrefix(err.Error(), tt.field+": ") {
				t.Errorf("message %q does not start with the field", err)
			}
		})
	}
}

func FuzzChatFromConverse(f *testing.F) {
	f.Add([]byte(`{"messages":[{"role":"user","content":[{"text":"hi"}]}],"inferenceConfig":{"maxTokens":5}}`))
	f.Add([]byte(`{"system":[{"text":"s"}],"messages":[{"role":"assistant","content":[{"toolUse":{"toolUseId":"a","name":"f","input":{}}}]},` +
		`{"role":"user","content":[{"toolResult":{"toolUseId":"a","content":[{"json":[1]}]}}]}],` +
		`"toolConfig":{"tools":[{"toolSpec":{"name":"f","inputSchema":{"json":{}}}}],"toolChoice":{"auto":{}}}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := ChatFromConverse(body, true)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %v is not a ValidationError", err)
			}
			return
		}
		var chat struct {
			Messages []map[string]any `json:"messages"`
			Stream   bool             `json:"stream"`
		}
		if json.Unmarshal(got.Body, &chat) != nil || len(chat.Messages) == 0 || !chat.Stream {
			t.Fatalf("chat request %s", got.Body)
		}
	})
}
