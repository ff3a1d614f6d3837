package agent

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
)

// TestToolRound is the loop on the fake services: the reasoning model asks
// for the tool, the tool makes one InvokeEndpoint call in the chat schema,
// and the second Converse call carries its answer as the toolResult.
func TestToolRound(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		name := map[bool]string{false: "Converse", true: "ConverseStream"}[streamed]
		t.Run(name, func(t *testing.T) {
			f := newFakeCloud(t)
			a := f.agent(t, "classification")
			a.Tool.TargetModel = "langid.tar.gz"
			var pieces []string
			var result string
			var err error
			if streamed {
				result, err = a.Stream(t.Context(), "Which language is 'Guten Morgen'?", func(s string) error {
					pieces = append(pieces, s)
					return nil
				})
			} else {
				result, err = a.Run(t.Context(), "Which language is 'Guten Morgen'?")
			}
			if err != nil {
				t.Fatal(err)
			}
			if result != "The tool answered: German (deu)" {
				t.Errorf("result %q", result)
			}
			if streamed && (len(pieces) < 2 || strings.Join(pieces, "") != result) {
				t.Errorf("streamed pieces %q, want the result in more than one piece", pieces)
			}
			converse, invokes := f.calls()
			checkConverse(t, converse, streamed, a.Tool.Course)
			checkInvoke(t, invokes, a.Tool.Course, "Which language is 'Guten Morgen'?")
		})
	}
}

// checkConverse: two calls of the reasoning model, on the stream route when
// streamed, with the tool offered by its name and description only, the
// planner's system prompt, and the tool's answer in the second.
func checkConverse(t *testing.T, calls []converseCall, streamed bool, c Course) {
	t.Helper()
	if len(calls) != 2 {
		t.Fatalf("%d Converse calls, want 2", len(calls))
	}
	route := map[bool]string{false: "/model/us.planner/converse", true: "/model/us.planner/converse-stream"}[streamed]
	for _, call := range calls {
		spec := call.body.ToolConfig.Tools[0].ToolSpec
		if call.path != route || spec.Name != c.Tool || spec.Description != c.Description ||
			len(call.body.System) != 1 || call.body.System[0].Text != c.PlannerPrompt {
			t.Errorf("call %s: tool %q %q, system %+v", call.path, spec.Name, spec.Description, call.body.System)
		}
		if req, _ := spec.InputSchema.JSON["required"].([]any); len(req) != 1 || req[0] != "text" {
			t.Errorf("input schema %v", spec.InputSchema.JSON)
		}
	}
	second := calls[1].body
	var result struct {
		ToolUseID string `json:"toolUseId"`
		Status    string
		Content   []struct{ Text string }
	}
	if len(second.Messages) != 3 || json.Unmarshal(second.lastBlock()["toolResult"], &result) != nil {
		t.Fatalf("second call's messages %+v", second.Messages)
	}
	if result.ToolUseID != "tu-1" || result.Status != "success" || result.Content[0].Text != "German (deu)" {
		t.Errorf("toolResult %+v", result)
	}
	if _, ok := second.Messages[1].Content[0]["toolUse"]; !ok || second.Messages[1].Role != "assistant" {
		t.Errorf("the assistant's tool use is not sent back: %+v", second.Messages[1])
	}
}

// checkInvoke: one InvokeEndpoint call with the chat schema.
func checkInvoke(t *testing.T, calls []invokeCall, c Course, text string) {
	t.Helper()
	if len(calls) != 1 {
		t.Fatalf("%d InvokeEndpoint calls, want 1", len(calls))
	}
	call := calls[0]
	var body struct {
		Messages    []chatMessage
		MaxTokens   int `json:"max_tokens"`
		Temperature float64
	}
	if err := json.Unmarshal(call.body, &body); err != nil {
		t.Fatal(err)
	}
	want := []chatMessage{{"system", c.SystemPrompt}, {"user", text}}
	if len(body.Messages) != 2 || body.Messages[0] != want[0] || body.Messages[1] != want[1] ||
		body.MaxTokens != 256 || body.Temperature != 0.1 {
		t.Errorf("tool body %s", call.body)
	}
	if call.path != "/endpoints/langid/invocations" || call.header.Get("Content-Type") != "application/json" ||
		call.header.Get("X-Amzn-SageMaker-Target-Model") != "langid.tar.gz" {
		t.Errorf("tool call %s %v", call.path, call.header)
	}
}

// TestRoundBound: a reasoning model that keeps asking for the tool is cut
// off after MaxRounds calls, with the tool run only between them.
func TestRoundBound(t *testing.T) {
	f := newFakeCloud(t)
	f.planner = func(req converseBody) plannerReply {
		return plannerReply{calls: []fakeToolUse{{id: "again", name: "extract_structured_json", input: `{"text": "x"}`}}, stop: "tool_use"}
	}
	a := f.agent(t, "extraction")
	a.MaxRounds = 3
	_, err := a.Run(t.Context(), "loop")
	if !errors.Is(err, ErrRounds) {
		t.Fatalf("error %v, want ErrRounds", err)
	}
	converse, invokes := f.calls()
	if len(converse) != 3 || len(invokes) != 2 {
		t.Errorf("%d Converse and %d InvokeEndpoint calls, want 3 and 2", len(converse), len(invokes))
	}
	if code, kind := failure(err); code != http.StatusBadGateway || kind != "RoundLimitExceeded" {
		t.Errorf("failure %d %s", code, kind)
	}
}

// TestCallsTheToolCannotTake: a call of another tool, or without text, is
// answered with an error result for the reasoning model, not sent to the
// endpoint.
func TestCallsTheToolCannotTake(t *testing.T) {
	cases := []struct{ name, tool, input, says string }{
		{"other tool", "summarize", `{"text": "a"}`, `no tool named "summarize"`},
		{"no text", "extract_structured_json", `{"body": "a"}`, `needs its input's "text"`},
		{"text not a string", "extract_structured_json", `{"text": 5}`, `needs its input's "text"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeCloud(t)
			f.planner = func(req converseBody) plannerReply {
				if _, ok := req.lastBlock()["toolResult"]; ok {
					return quotingPlanner(req)
				}
				return plannerReply{calls: []fakeToolUse{{id: "x", name: tc.tool, input: tc.input}}, stop: "tool_use"}
			}
			a := f.agent(t, "extraction")
			result, err := a.Run(t.Context(), "hello")
			if err != nil || !strings.Contains(result, tc.says) {
				t.Errorf("result %q, %v; want the error result quoted", result, err)
			}
			converse, invokes := f.calls()
			var r struct{ Status string }
			_ = json.Unmarshal(converse[1].body.lastBlock()["toolResult"], &r)
			if len(invokes) != 0 || r.Status != "error" {
				t.Errorf("%d endpoint calls, result status %q", len(invokes), r.Status)
			}
		})
	}
}

// TestUpstreamFailures: what the services answer decides the status a
// caller of the runtime gets.
func TestUpstreamFailures(t *testing.T) {
	cases := []struct {
		name    string
		planner plannerReply
		slm     int
		code    int
		kind    string
	}{
		{"reasoning model throttled", plannerReply{status: 429, errType: "ThrottlingException"}, 200, 503, "ReasoningModelUnavailable"},
		{"reasoning model refuses", plannerReply{status: 400, errType: "ValidationException"}, 200, 502, "ReasoningModelError"},
		{"reasoning model timeout", plannerReply{status: 408, errType: "ModelTimeoutException"}, 200, 504, "ReasoningModelTimeout"},
		{"endpoint's model error", plannerReply{}, 424, 502, "ToolError"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeCloud(t)
			if tc.planner.status != 0 {
				f.planner = func(converseBody) plannerReply { return tc.planner }
			}
			f.slm = func([]byte) (int, string) {
				return tc.slm, `{"OriginalStatusCode": 400, "OriginalMessage": "bad", "Message": "Received client error (400)"}`
			}
			_, err := f.agent(t, "extraction").Run(t.Context(), "hello")
			if code, kind := failure(err); code != tc.code || kind != tc.kind {
				t.Errorf("error %v: %d %s, want %d %s", err, code, kind, tc.code, tc.kind)
			}
		})
	}
}

// TestCanceled: a caller that leaves stops the loop.
func TestCanceled(t *testing.T) {
	f := newFakeCloud(t)
	ctx, cancel := context.WithCancel(t.Context())
	f.slm = func([]byte) (int, string) { cancel(); return 200, chatAnswer("late") }
	_, err := f.agent(t, "extraction").Run(ctx, "hello")
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

// TestTurnsAreSeparated: text the reasoning model writes before calling
// the tool streams too, and a blank line parts it from the answer.
func TestTurnsAreSeparated(t *testing.T) {
	f := newFakeCloud(t)
	f.planner = func(req converseBody) plannerReply {
		r := quotingPlanner(req)
		if r.stop == "tool_use" {
			r.text = "Let me check."
		}
		return r
	}
	var streamed strings.Builder
	result, err := f.agent(t, "classification").Stream(t.Context(), "Hej", func(s string) error {
		streamed.WriteString(s)
		return nil
	})
	if err != nil || result != "The tool answered: German (deu)" || streamed.String() != "Let me check.\n\n"+result {
		t.Errorf("result %q, streamed %q, %v", result, streamed.String(), err)
	}
}
