package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// runtimeARN is an InvokeAgentRuntime ARN as the SDKs put it in the path.
var runtimeARN = "/runtimes/" + url.PathEscape("arn:aws:bedrock-agentcore:us-east-1:123456789012:runtime/slmagent-AbCdE12345") + "/invocations"

// TestDataPlaneRoute: InvokeAgentRuntime's route answers as /invocations
// does and echoes the session id; a session id shorter than 33 or longer
// than 256 characters is refused as the service refuses it; a missing one
// is made; a failure of the runtime is a RuntimeClientError.
func TestDataPlaneRoute(t *testing.T) {
	s := startServer(t, runnerFunc{
		run: func(_ context.Context, prompt string) (string, error) {
			if prompt == "fail" {
				return "", fmt.Errorf("%w: the endpoint is down", ErrTool)
			}
			return "ok: " + prompt, nil
		},
		stream: func(_ context.Context, prompt string, emit func(string) error) (string, error) {
			return prompt, emit(prompt)
		},
	})
	id := strings.Repeat("s", MinSessionID)
	resp, body := s.do(t, "POST", runtimeARN+"?qualifier=DEFAULT", `{"prompt": "hi"}`, SessionHeader, id)
	if resp.StatusCode != 200 || strings.TrimSpace(body) != `{"result":"ok: hi"}` || resp.Header.Get(SessionHeader) != id {
		t.Errorf("%d %q, session %q", resp.StatusCode, body, resp.Header.Get(SessionHeader))
	}
	resp, body = s.do(t, "POST", runtimeARN, `{"prompt": "hi"}`, SessionHeader, id, "Accept", "text/event-stream")
	if resp.StatusCode != 200 || body != "data: \"hi\"\n\n" || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Errorf("streamed: %d %q", resp.StatusCode, body)
	}
	resp, _ = s.do(t, "POST", runtimeARN, `{"prompt": "hi"}`)
	if made := resp.Header.Get(SessionHeader); resp.StatusCode != 200 || len(made) != 36 {
		t.Errorf("no session id: %d, made %q", resp.StatusCode, made)
	}
	for _, tc := range []struct {
		id, says string
	}{
		{strings.Repeat("s", MinSessionID-1), "greater than or equal to 33"},
		{strings.Repeat("s", MaxSessionID+1), "less than or equal to 256"},
	} {
		resp, body := s.do(t, "POST", runtimeARN, `{"prompt": "hi"}`, SessionHeader, tc.id)
		var e awsErrorBody
		if json.Unmarshal([]byte(body), &e) != nil || resp.StatusCode != 400 || resp.Header.Get("X-Amzn-ErrorType") != "ValidationException" ||
			!strings.Contains(e.Message, "'runtimeSessionId'") || !strings.Contains(e.Message, tc.says) || e.Reason != "FieldValidationFailed" {
			t.Errorf("session id of %d: %d %s %q", len(tc.id), resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), body)
		}
	}
	for _, tc := range []struct{ body, says string }{
		{`{"prompt": "fail"}`, "the agent runtime answered 502 ToolError: "},
		{`not json`, "the agent runtime answered 400 BadRequest"},
	} {
		resp, body := s.do(t, "POST", runtimeARN, tc.body, SessionHeader, id)
		var e awsErrorBody
		if json.Unmarshal([]byte(body), &e) != nil || resp.StatusCode != http.StatusFailedDependency ||
			resp.Header.Get("X-Amzn-ErrorType") != "RuntimeClientError" || !strings.Contains(e.Message, tc.says) {
			t.Errorf("%s: %d %s %q", tc.body, resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"), body)
		}
	}
	resp, _ = s.do(t, "GET", runtimeARN, "")
	if resp.StatusCode != 405 || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: %d", resp.StatusCode)
	}
	for _, path := range []string{"/runtimes/invocations", "/runtimes//x", "/runtimes/a/invocation"} {
		if resp, _ := s.do(t, "POST", path, `{"prompt": "hi"}`); resp.StatusCode != 404 {
			t.Errorf("%s: %d, want 404", path, resp.StatusCode)
		}
	}
}
