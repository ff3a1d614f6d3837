package awsapi

import (
	"errors"
	"testing"
	"time"
)

func TestStopReason(t *testing.T) {
	tests := []struct {
		finish string
		seq    bool
		want   string
	}{
		{"stop", false, "end_turn"}, {"eos", false, "end_turn"}, {"", false, "end_turn"},
		{"stop", true, "stop_sequence"}, {"length", false, "max_tokens"}, {"tool_calls", false, "tool_use"},
		{"content_filter", false, "content_filtered"},
	}
	for _, tt := range tests {
		if got := StopReason(tt.finish, tt.seq); got != tt.want {
			t.Errorf("StopReason(%q, %v) = %q, want %q", tt.finish, tt.seq, got, tt.want)
		}
	}
}

func TestReplyFromChat(t *testing.T) {
	tests := []struct{ name, chat, want string }{
		{"text", `{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hallo"},` +
			`"finish_reason":"stop","stop_reason":null}],"usage":{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}}`,
			`{"metrics":{"latencyMs":42},"output":{"message":{"content":[{"text":"Hallo"}],"role":"assistant"}},` +
				`"stopReason":"end_turn","usage":{"inputTokens":3,"outputTokens":1,"totalTokens":4}}`},
		{"stop string", `{"choices":[{"message":{"content":"a"},"finish_reason":"stop","stop_reason":"###"}]}`,
			`{"metrics":{"latencyMs":42},"output":{"message":{"content":[{"text":"a"}],"role":"assistant"}},` +
				`"stopReason":"stop_sequence","usage":{"inputTokens":0,"outputTokens":0,"totalTokens":0}}`},
		{"tool call", `{"choices":[{"message":{"content":null,"tool_calls":[{"id":"call_1","type":"function",` +
			`"function":{"name":"classify","arguments":"{\"text\": \"hi\"}"}}]},"finish_reason":"tool_calls"}],` +
			`"usage":{"prompt_tokens":2,"completion_tokens":5}}`,
			`{"metrics":{"latencyMs":42},"output":{"message":{"content":[{"toolUse":{"input":{"text":"hi"},"name":"classify",` +
				`"toolUseId":"call_1"}}],"role":"assistant"}},"stopReason":"tool_use","usage":{"inputTokens":2,"outputTokens":5,"totalTokens":7}}`},
		{"length", `{"choices":[{"message":{"content":""},"finish_reason":"length"}]}`,
			`{"metrics":{"latencyMs":42},"output":{"message":{"content":[{"text":""}],"role":"assistant"}},` +
				`"stopReason":"max_tokens","usage":{"inputTokens":0,"outputTokens":0,"totalTokens":0}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := ReplyFromChat([]byte(tt.chat))
			if err != nil {
				t.Fatal(err)
			}
			if got := compactJSON(t, r.ConverseJSON(42*time.Millisecond)); got != tt.want {
				t.Errorf("answer =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
	for _, bad := range []string{`nope`, `{"choices":[]}`, `[{"generated_text":"x"}]`,
		`{"choices":[{"message":{"tool_calls":[{"id":"a","function":{"name":"f","arguments":"{nope"}}]}}]}`} {
		if _, err := ReplyFromChat([]byte(bad)); !errors.Is(err, ErrNotChat) {
			t.Errorf("ReplyFromChat(%s) = %v, want ErrNotChat", bad, err)
		}
	}
}
