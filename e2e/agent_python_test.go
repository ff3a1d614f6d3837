package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/agent"
	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// Issue 25: the agent as its users write it in Python (Strands Agents,
// boto3, the AgentCore SDK, LiteLLM; the real packages of requirements/)
// against a local switchyard, with environment variables only. The planner
// is the toolcaller stand-in, the small model langid (as "slm", recording
// what it receives).

// germanQuestion is the acceptance test's question, in German.
const germanQuestion = "Welche Sprache ist 'Guten Morgen, wie geht es dir?'"

// langidLabel is what langid answers for it, in the chat schema: the label
// the agent's result must carry exactly.
const langidLabel = "German (deu)"

// realReasoningModel is a real reasoning model's id as users configure it
// (an inference profile; it has a ':' and arrives URL-encoded in the path).
const realReasoningModel = "global.anthropic.claude-sonnet-4-5-20250929-v1:0" // TODO verify: current model ids

func TestAgentPython(t *testing.T) {
	m := startPythonModels(t)
	t.Run("the example answers the German question", func(t *testing.T) { checkExampleAnswer(t, m) })
	t.Run("the streaming entrypoint", func(t *testing.T) { checkExampleStream(t, m) })
	t.Run("no REASONING_MODEL_ID", func(t *testing.T) { checkExampleNoModelID(t, m) })
	t.Run("the courses are the Go agent's", func(t *testing.T) { checkExampleCourses(t) })
	t.Run("the shared client functions", func(t *testing.T) { checkExampleShared(t, m) })
	t.Run("a real reasoning model id through an alias", func(t *testing.T) { checkReasoningAlias(t) })
	t.Run("Strands SageMakerAIModel", func(t *testing.T) { checkStrandsSageMaker(t, m) })
	t.Run("boto3", func(t *testing.T) { checkBoto3Current(t, m) })
	t.Run("LiteLLM", func(t *testing.T) { checkLiteLLM(t, m) })
	t.Run("InvokeAgentRuntime", func(t *testing.T) { checkInvokeAgentRuntime(t, m) })
	t.Run("the runtime contract beside the AgentCore SDK's", func(t *testing.T) { checkRuntimeContract(t, m) })
	t.Run("round trip latency", func(t *testing.T) { measureRoundTrips(t, m) })
}

// checkExampleAnswer: app.py, unmodified, answers the German question with
// langid's exact label; the tool called the small model once, with the
// course's system prompt, max_tokens 256, temperature 0.1 and no
// max_new_tokens; the planner was called twice.
func checkExampleAnswer(t *testing.T, m pythonModels) {
	app := startPythonApp(t, "app.py", pythonAgentEnv(m.Server, "us.toolcaller"))
	before, planner := len(m.slmRequests(t)), requests(t, m.Server, "toolcaller")
	code, body, _ := invokeAgent(t, app.base, germanQuestion)
	var out struct{ Result string }
	if json.Unmarshal(body, &out) != nil || code != http.StatusOK {
		t.Fatalf("%d %s", code, body)
	}
	if !strings.Contains(out.Result, langidLabel) {
		t.Errorf("result %q does not carry langid's label %q", out.Result, langidLabel)
	}
	calls := m.slmRequests(t)[before:]
	if len(calls) != 1 {
		t.Fatalf("the small model received %d requests for one tool use, want exactly 1: %v", len(calls), calls)
	}
	course, err := agent.LoadCourse("classification")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"messages": []any{
			map[string]any{"role": "system", "content": course.SystemPrompt},
			map[string]any{"role": "user", "content": germanQuestion},
		},
		"max_tokens": 256.0, "temperature": 0.1,
	}
	if !reflect.DeepEqual(calls[0], want) {
		t.Errorf("the small model received %v\nwant %v", calls[0], want)
	}
	if n := requests(t, m.Server, "toolcaller") - planner; n != 2 {
		t.Errorf("the planner answered %d requests, want 2", n)
	}
}

// checkExampleStream: app_stream.py (the scaffolding's async entrypoint)
// streams agent.stream_async's model events as server-sent events; their
// text deltas end with the answer quoting langid's label; one tool call.
func checkExampleStream(t *testing.T, m pythonModels) {
	app := startPythonApp(t, "app_stream.py", pythonAgentEnv(m.Server, "us.toolcaller"))
	before := len(m.slmRequests(t))
	code, body, _ := invokeAgent(t, app.base, germanQuestion, "Accept", "text/event-stream")
	events, framed := sseEvents(string(body))
	if code != http.StatusOK || !framed || len(events) == 0 {
		t.Fatalf("%d, framed %v: %q", code, framed, body)
	}
	var text strings.Builder
	var toolUses []string
	for _, e := range events {
		var ev struct {
			Event struct {
				ContentBlockStart *struct {
					Start struct {
						ToolUse *struct{ Name string } `json:"toolUse"`
					}
				} `json:"contentBlockStart"`
				ContentBlockDelta *struct {
					Delta struct{ Text string }
				} `json:"contentBlockDelta"`
			}
		}
		if err := json.Unmarshal([]byte(e), &ev); err != nil {
			t.Fatalf("event %q: %v", e, err)
		}
		if s := ev.Event.ContentBlockStart; s != nil && s.Start.ToolUse != nil {
			toolUses = append(toolUses, s.Start.ToolUse.Name)
		}
		if d := ev.Event.ContentBlockDelta; d != nil {
			text.WriteString(d.Delta.Text)
		}
	}
	if got := text.String(); got != "The tool answered: "+langidLabel || !reflect.DeepEqual(toolUses, []string{"classify_language"}) {
		t.Errorf("streamed text %q, tool uses %v", got, toolUses)
	}
	if n := len(m.slmRequests(t)) - before; n != 1 {
		t.Errorf("the small model received %d requests, want 1", n)
	}
}

// checkExampleNoModelID: without REASONING_MODEL_ID both apps exit at once,
// non-zero, naming it.
func checkExampleNoModelID(t *testing.T, m pythonModels) {
	dir, _ := filepath.Abs(exampleAgent)
	for _, script := range []string{"app.py", "app_stream.py"} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, python, script)
		cmd.Dir = dir
		cmd.Env = pythonAgentEnv(m.Server, "", "PORT=1")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		cancel()
		if code := cmd.ProcessState.ExitCode(); err == nil || code <= 0 || !strings.Contains(string(out), "REASONING_MODEL_ID is not set") {
			t.Errorf("%s: exit %d (%v) after %v: %s", script, code, err, time.Since(start), out)
		}
	}
}

// checkExampleCourses: the example's four tools have the Go agent's
// built-in courses' names, descriptions, system prompts and limits.
func checkExampleCourses(t *testing.T) {
	var specs map[string]struct {
		Tool, Description, SystemPrompt string
		MaxTokens                       int
	}
	runPython(t, &specs, cleanEnv(), "example_courses.py")
	for _, name := range agent.BuiltinCourses() {
		c, err := agent.LoadCourse(name)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := specs[name]
		if !ok || got.Tool != c.Tool || got.SystemPrompt != c.SystemPrompt || got.MaxTokens != c.MaxTokens ||
			strings.Join(strings.Fields(got.Description), " ") != strings.Join(strings.Fields(c.Description), " ") {
			t.Errorf("course %s: the example has %+v, the Go agent %+v", name, got, c)
		}
	}
	if len(specs) != len(agent.BuiltinCourses()) {
		t.Errorf("the example has %d courses, the Go agent %d", len(specs), len(agent.BuiltinCourses()))
	}
}

// checkExampleShared: the shared module's three endpoint functions, each
// request as the model received it: the chat schema without
// max_new_tokens, the generation schema with parameters.max_new_tokens,
// the streamed chat read part by part.
func checkExampleShared(t *testing.T, m pythonModels) {
	slm, gen := len(m.slmRequests(t)), len(recorded(t, m.gen))
	var r struct {
		Chat, Generation json.RawMessage
		Stream           []string
	}
	runPython(t, &r, pythonAgentEnv(m.Server, ""), "example_shared.py")
	if string(r.Chat) != `"German (deu)"` || string(r.Generation) != `"Hallo Welt"` ||
		strings.Join(r.Stream, "") != "Guten Morgen, wie geht es dir heute?" || len(r.Stream) < 2 {
		t.Errorf("chat %s, generation %s, stream %q", r.Chat, r.Generation, r.Stream)
	}
	chat := m.slmRequests(t)[slm:]
	if len(chat) != 1 || !reflect.DeepEqual(chat[0], map[string]any{
		"messages": []any{map[string]any{"role": "system", "content": "Name the language."},
			map[string]any{"role": "user", "content": "Guten Morgen, wie geht es dir heute?"}},
		"max_tokens": 256.0, "temperature": 0.1}) {
		t.Errorf("the chat call as received: %v", chat)
	}
	if g := recorded(t, m.gen)[gen:]; len(g) != 1 || !reflect.DeepEqual(g[0], map[string]any{
		"inputs": "Hallo Welt", "parameters": map[string]any{"max_new_tokens": 32.0}}) {
		t.Errorf("the generation call as received: %v", g)
	}
}

// checkReasoningAlias: the example, configured with a real reasoning
// model's id, reaches the local stand-in through an alias in switchyard's
// configuration.
func checkReasoningAlias(t *testing.T) {
	store := t.TempDir()
	testutil.CopyDir(t, langidExample, filepath.Join(store, "langid"))
	testutil.CopyDir(t, toolFixture, filepath.Join(store, "toolcaller"))
	s := StartServer(t, Options{Store: store, Config: map[string]string{"model_aliases": realReasoningModel + "=toolcaller"}})
	s.WaitStatus(loadLimit, api.StatusHealthy, "langid", "toolcaller")
	app := startPythonApp(t, "app.py", pythonAgentEnv(s, realReasoningModel, "SLM_ENDPOINT_NAME=langid"))
	code, body, _ := invokeAgent(t, app.base, germanQuestion)
	if code != http.StatusOK || !strings.Contains(string(body), langidLabel) {
		t.Errorf("%d %s", code, body)
	}
}

// checkStrandsSageMaker: a Strands Agent on SageMakerAIModel completes a
// tool round trip on the toolcaller endpoint, whole and streamed; and the
// payload parts the streamed one needs (the front-end's own OpenAI chunks,
// one per part) carry it through Strands' parser.
func checkStrandsSageMaker(t *testing.T, m pythonModels) {
	env := pythonAgentEnv(m.Server, "")
	type report struct {
		Result, Error string
		Calls         []string
		Parts         []string
	}
	check := func(t *testing.T, r report) {
		if r.Error != "" || r.Result != "The tool answered: German (deu)" || len(r.Calls) != 1 {
			t.Errorf("%+v", r)
		}
	}
	t.Run("whole", func(t *testing.T) {
		var r report
		runPython(t, &r, env, "strands_sagemaker.py", "toolcaller", "0")
		check(t, r)
	})
	t.Run("the wanted payload parts", func(t *testing.T) {
		var r report
		runPython(t, &r, env, "strands_wanted_wire.py", m.Inference)
		check(t, r)
		for _, p := range r.Parts {
			var chunk struct {
				Object  string
				Choices []json.RawMessage
			}
			if !strings.HasSuffix(p, "\n") || strings.Count(p, "\n") != 1 || json.Unmarshal([]byte(p), &chunk) != nil ||
				chunk.Object != "chat.completion.chunk" {
				t.Errorf("part %q is not one chat.completion.chunk and a newline", p)
			}
		}
	})
	t.Run("streamed", func(t *testing.T) {
		var r report
		runPython(t, &r, env, "strands_sagemaker.py", "toolcaller", "1")
		check(t, r)
	})
}

// awsOutcome is one call's outcome in the client scripts' reports.
type awsOutcome struct {
	OK    json.RawMessage
	Error *struct {
		Code, Message      string
		Status             int
		OriginalStatusCode int
		Sent               bool
	}
}

// checkBoto3Current: current boto3 on every runtime operation: both
// streams read to the end (a chat request's response stream as OpenAI
// chunks, one per part), the tool call of converse_stream, the seed's
// error row (a chat template rendered locally and sent as inputs to a chat
// model) and the ambiguous endpoint of the response stream.
func checkBoto3Current(t *testing.T, m pythonModels) {
	var r map[string]awsOutcome
	runPython(t, &r, cleanEnv(), "boto3_runtime.py", m.Inference)
	for _, key := range []string{"invokeTarget", "invokeNamed"} {
		var out struct{ Body, Variant string }
		if r[key].Error != nil || json.Unmarshal(r[key].OK, &out) != nil || topLabel(t, out.Body) != "deu" || out.Variant != "AllTraffic" {
			t.Errorf("%s: %+v %s", key, r[key].Error, r[key].OK)
		}
	}
	var stream struct {
		Parts       []string
		ContentType string
	}
	if r["stream"].Error != nil || json.Unmarshal(r["stream"].OK, &stream) != nil || len(stream.Parts) < 2 {
		t.Errorf("stream: %+v %s", r["stream"].Error, r["stream"].OK)
	}
	var text strings.Builder
	for _, p := range stream.Parts {
		var chunk struct {
			Object  string
			Choices []struct {
				Delta struct{ Content *string }
			}
		}
		if strings.Count(p, "\n") != 1 || !strings.HasSuffix(p, "\n") || json.Unmarshal([]byte(p), &chunk) != nil ||
			chunk.Object != "chat.completion.chunk" {
			t.Errorf("part %q is not one chat.completion.chunk and a newline", p)
		}
		for _, c := range chunk.Choices {
			if c.Delta.Content != nil {
				text.WriteString(*c.Delta.Content)
			}
		}
	}
	if text.String() != german {
		t.Errorf("the chat stream's text %q, want the echo %q", text.String(), german)
	}
	var conv struct {
		Text, StopReason string
	}
	if r["converse"].Error != nil || json.Unmarshal(r["converse"].OK, &conv) != nil || conv.Text != german || conv.StopReason != "end_turn" {
		t.Errorf("converse: %+v %s", r["converse"].Error, r["converse"].OK)
	}
	var cs struct {
		Events     []string
		Tool       string
		Input      map[string]string
		StopReason string
	}
	if r["converseStream"].Error != nil || json.Unmarshal(r["converseStream"].OK, &cs) != nil || cs.Tool != "classify_language" ||
		cs.Input["text"] != german || cs.StopReason != "tool_use" || cs.Events[0] != "messageStart" || cs.Events[len(cs.Events)-1] != "metadata" {
		t.Errorf("converseStream: %+v %s", r["converseStream"].Error, r["converseStream"].OK)
	}
	if e := r["rawInputs"].Error; e == nil || e.Code != "ModelError" || e.Status != 424 || e.OriginalStatusCode != 400 ||
		!strings.Contains(e.Message, "messages is required") {
		t.Errorf("a rendered string as inputs to a chat model: %+v", e)
	}
	if e := r["streamAmbiguous"].Error; e == nil || e.Code != "ValidationError" || e.Status != 400 || !strings.Contains(e.Message, "my-endpoint") {
		t.Errorf("the response stream on an ambiguous endpoint: %+v", e)
	}
	t.Run("the ambiguous stream's message", func(t *testing.T) {
		e := r["streamAmbiguous"].Error
		if e == nil || strings.Contains(e.Message, "X-Amzn-SageMaker-Target-Model") || strings.Contains(e.Message, "name one with TargetModel") ||
			!strings.Contains(e.Message, "endpoint name") {
			t.Errorf("%+v: the operation has no TargetModel; the message must say that the endpoint name picks the model", e)
		}
	})
}

// checkLiteLLM: completion() on bedrock/converse/<model> (reaching
// switchyard through AWS_BEDROCK_RUNTIME_ENDPOINT) and on
// sagemaker_chat/<endpoint> (through sagemaker_base_url), whole and
// streamed.
func checkLiteLLM(t *testing.T, m pythonModels) {
	var r map[string]json.RawMessage
	env := append(cleanEnv(), "AWS_BEDROCK_RUNTIME_ENDPOINT="+m.Inference)
	runPython(t, &r, env, "litellm_routes.py", m.Inference, "us.toolcaller", "toolcaller")
	for _, key := range []string{"bedrock whole", "bedrock streamed", "sagemaker whole", "sagemaker streamed"} {
		t.Run(key, func(t *testing.T) {
			if key == "sagemaker streamed" {
			}
			var out struct {
				OK *struct {
					Text, Finish string
				}
				Error string
			}
			if json.Unmarshal(r[key], &out) != nil || out.OK == nil || out.OK.Text != "Guten Morgen, wie geht es dir?" || out.OK.Finish != "stop" {
				t.Errorf("%s", r[key])
			}
		})
	}
}

// checkInvokeAgentRuntime: boto3's invoke_agent_runtime reaches `switchyard
// agent serve` through AWS_ENDPOINT_URL_BEDROCK_AGENTCORE: a 33-character
// session id is answered (and echoed), a 32-character one refused, by
// botocore before sending and by the runtime when sent anyway.
func checkInvokeAgentRuntime(t *testing.T, m pythonModels) {
	a := startAgent(t, m.Server, "us.toolcaller")
	var r map[string]awsOutcome
	runPython(t, &r, append(cleanEnv(), "AWS_ENDPOINT_URL_BEDROCK_AGENTCORE="+a.base), "agentcore_invoke.py")
	var ok struct {
		Body, ContentType, SessionID string
		Status                       int
	}
	if r["session33"].Error != nil || json.Unmarshal(r["session33"].OK, &ok) != nil || ok.Status != 200 ||
		ok.SessionID != strings.Repeat("s", 33) || !strings.Contains(ok.Body, `"result":"The tool answered: German (deu)"`) {
		t.Errorf("33 characters: %+v %s", r["session33"].Error, r["session33"].OK)
	}
	if e := r["session32"].Error; e == nil || e.Code != "ParamValidationError" || e.Sent || !strings.Contains(e.Message, "runtimeSessionId") {
		t.Errorf("32 characters: %+v", e)
	}
	if e := r["session32Sent"].Error; e == nil || !e.Sent || e.Code != "ValidationException" || e.Status != 400 ||
		!strings.Contains(e.Message, "greater than or equal to 33") {
		t.Errorf("32 characters, sent: %+v", e)
	}
	var streamed struct{ Body, ContentType string }
	if r["streamed"].Error != nil || json.Unmarshal(r["streamed"].OK, &streamed) != nil || streamed.ContentType != "text/event-stream" {
		t.Fatalf("streamed: %+v %s", r["streamed"].Error, r["streamed"].OK)
	}
	var text strings.Builder
	if err := agent.ReadStream(strings.NewReader(streamed.Body), func(s string) error { text.WriteString(s); return nil }); err != nil ||
		!strings.HasSuffix(text.String(), "The tool answered: German (deu)") {
		t.Errorf("streamed %q: %v", text.String(), err)
	}
}

// checkRuntimeContract: `switchyard agent serve` and the example on
// BedrockAgentCoreApp, given the same requests. What agrees is checked
// equal; each difference is the one docs/agent.md documents.
func checkRuntimeContract(t *testing.T, m pythonModels) {
	goRT := startAgent(t, m.Server, "us.gatedplanner")
	pyRT := startPythonApp(t, "app.py", pythonAgentEnv(m.Server, "us.gatedplanner"))
	pyStream := startPythonApp(t, "app_stream.py", pythonAgentEnv(m.Server, "us.toolcaller"))
	open := filepath.Join(m.gate, "open")
	mustWrite(t, open, "") // the gate open: nothing waits until the busy check closes it
	session := "X-Amzn-Bedrock-AgentCore-Runtime-Session-Id"
	for name, base := range map[string]string{"go": goRT.base, "python": pyRT.base} {
		t.Run(name, func(t *testing.T) {
			a := call(t, http.MethodGet, base+"/ping", "")
			var ping struct {
				Status           string `json:"status"`
				TimeOfLastUpdate int64  `json:"time_of_last_update"`
			}
			var keys map[string]any
			if a.code != 200 || json.Unmarshal(a.body, &ping) != nil || json.Unmarshal(a.body, &keys) != nil || len(keys) != 2 ||
				ping.Status != "Healthy" || time.Since(time.Unix(ping.TimeOfLastUpdate, 0)) > time.Hour {
				t.Errorf("ping: %d %s", a.code, a.body)
			}
			a = call(t, http.MethodPost, base+"/invocations", `{"prompt": "hi"`)
			var bad struct{ Error string }
			if a.code != 400 || json.Unmarshal(a.body, &bad) != nil || bad.Error == "" || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
				t.Errorf("bad JSON: %d %s", a.code, a.body)
			}
			a = call(t, http.MethodPost, base+"/invocations", `{"input": "hi"}`)
			if a.code != 400 || json.Unmarshal(a.body, &bad) != nil || !strings.Contains(bad.Error, "prompt is missing or empty") {
				t.Errorf("no prompt: %d %s", a.code, a.body)
			}
			a = call(t, http.MethodPost, base+"/invocations", `{"prompt": "Which language is 'Hallo'?"}`, session, strings.Repeat("s", 40))
			var ok struct{ Result string }
			if a.code != 200 || json.Unmarshal(a.body, &ok) != nil || !strings.Contains(ok.Result, "German (deu)") || a.header.Get(session) != "" {
				t.Errorf("with a session id: %d %s (echoed %q)", a.code, a.body, a.header.Get(session))
			}
			if a := call(t, http.MethodGet, base+"/invocations", ""); a.code != 405 {
				t.Errorf("GET /invocations: %d", a.code)
			}
			if a := call(t, http.MethodGet, base+"/nowhere", ""); a.code != 404 {
				t.Errorf("GET /nowhere: %d", a.code)
			}
		})
	}
	t.Run("streamed framing", func(t *testing.T) {
		for name, base := range map[string]string{"go": goRT.base, "python": pyStream.base} {
			code, body, _ := invokeAgent(t, base, "Which language is 'Hallo'?", "Accept", "text/event-stream")
			events, framed := sseEvents(string(body))
			if code != 200 || !framed || len(events) < 2 {
				t.Errorf("%s: %d, framed %v: %q", name, code, framed, body)
			}
			for _, e := range events {
				if !json.Valid([]byte(e)) {
					t.Errorf("%s: event %q is not JSON", name, e)
				}
			}
		}
	})
	t.Run("HealthyBusy", func(t *testing.T) {
		// Go: HealthyBusy while an invocation runs. The AgentCore SDK:
		// Healthy, since only its async tasks (@app.async_task,
		// add_async_task) count as busy.
		for _, rt := range []struct{ name, base, want string }{{"go", goRT.base, "HealthyBusy"}, {"python", pyRT.base, "Healthy"}} {
			_ = os.Remove(open)
			// The Go runtime's tool reaches langid, the Python one's the recorder.
			toolCalls := func() int { return len(m.slmRequests(t)) + requests(t, m.Server, "langid") }
			before := toolCalls()
			done := make(chan struct{})
			go func() {
				defer close(done)
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rt.base+"/invocations", strings.NewReader(`{"prompt": "Which language is 'Hallo'?"}`))
				if resp, err := http.DefaultClient.Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			// Once the tool has run, the gate holds the planner's second turn.
			for deadline := time.Now().Add(time.Minute); toolCalls() == before && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(200 * time.Millisecond)
			var ping struct{ Status string }
			a := call(t, http.MethodGet, rt.base+"/ping", "")
			_ = json.Unmarshal(a.body, &ping)
			select {
			case <-done:
				t.Errorf("%s: the invocation ended before the gate opened", rt.name)
			default:
			}
			mustWrite(t, open, "")
			<-done
			if ping.Status != rt.want {
				t.Errorf("%s: /ping said %s during an invocation, want %q", rt.name, a.body, rt.want)
			}
		}
	})
}

// measureRoundTrips logs p50 and p90 of 30 round trips (the German
// question, one tool call, the answer) through the Python stack (app.py on
// BedrockAgentCoreApp, Strands, boto3) and through `switchyard agent serve`,
// against the same server.
func measureRoundTrips(t *testing.T, m pythonModels) {
	const n = 30
	goRT := startAgent(t, m.Server, "us.toolcaller")
	pyRT := startPythonApp(t, "app.py", pythonAgentEnv(m.Server, "us.toolcaller"))
	for _, rt := range []struct{ name, base string }{{"python (app.py: AgentCore SDK, Strands, boto3)", pyRT.base}, {"go (switchyard agent serve)", goRT.base}} {
		var ds []time.Duration
		for i := 0; i < n+2; i++ {
			code, body, d := invokeAgent(t, rt.base, germanQuestion)
			if code != 200 || !strings.Contains(string(body), langidLabel) {
				t.Fatalf("%s: %d %s", rt.name, code, body)
			}
			if i >= 2 { // two warm-up calls
				ds = append(ds, d)
			}
		}
		p50, p90 := percentiles(ds)
		t.Logf("%s: %d round trips, p50 %v, p90 %v", rt.name, n, p50.Round(100*time.Microsecond), p90.Round(100*time.Microsecond))
	}
}
