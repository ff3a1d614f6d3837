package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	brtypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"
	smtypes "github.com/aws/aws-sdk-go-v2/service/sagemakerruntime/types"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// The AWS runtime APIs with the real SDKs, untouched but for their
// endpoint, against real workers: the langid and chat examples, the
// toolcaller fixture, and a gated model that holds its stream.

const (
	langidExample = "../examples/models/langid"
	toolFixture   = "../examples/fixtures/toolcaller"
	german        = "Guten Morgen, wie geht es dir heute? Ich hoffe, du hast gut geschlafen."
)

// gateModel streams one token, then waits (up to five minutes) for a file
// open-<tag> in its folder before it finishes, so that a test can see the
// first event arrive while the answer does not exist yet.
const gateModel = `import json
import os
import time

from djl_python import Output


def handle(inputs):
    if inputs.is_empty():
        return None
    req = json.loads(inputs.get_as_bytes() or b"{}")
    out = Output()
    out.add_property("content-type", "application/jsonlines")
    out.add_stream_content(lines(str(req.get("tag", "x"))))
    return out


def lines(tag):
    yield json.dumps({"token": {"id": 1, "text": "first"}}) + "\n"
    deadline = time.time() + 300
    while not os.path.exists("open-" + tag) and time.time() < deadline:
        time.sleep(0.01)
    yield json.dumps({"token": {"id": 2, "text": " second"}}) + "\n"
    yield json.dumps({"token": None, "generated_text": "first second", "finish_reason": "eos"}) + "\n"
`

// startAWSModels serves langid, the chat example as "chat", the toolcaller
// fixture and the gate model, and waits until all are Healthy.
func startAWSModels(t *testing.T) (*Server, string) {
	t.Helper()
	needE2E(t)
	store := t.TempDir()
	testutil.CopyDir(t, langidExample, filepath.Join(store, "langid"))
	testutil.CopyDir(t, chatExample, filepath.Join(store, "chat"))
	testutil.CopyDir(t, toolFixture, filepath.Join(store, "toolcaller"))
	gate := WriteModel(t, store, "gate", map[string]string{
		"model.py": gateModel, "serving.properties": "engine=Python\noption.rolling_batch=scheduler\n",
	})
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(loadLimit, api.StatusHealthy, "langid", "chat", "toolcaller", "gate")
	return s, gate
}

// TestAWSRuntimeAPIs is the acceptance test: the AWS SDK for Go v2,
// the AWS SDK for JavaScript v3 and Debian's boto3 against one server.
func TestAWSRuntimeAPIs(t *testing.T) {
	s, gate := startAWSModels(t)
	t.Run("go", func(t *testing.T) { checkGoSDK(t, s) })
	t.Run("node", func(t *testing.T) { checkNodeSDK(t, s) })
	t.Run("boto3", func(t *testing.T) { checkBoto3(t, s) })
	t.Run("first event leaves with the first token", func(t *testing.T) { checkFirstEvent(t, s, gate) })
	t.Run("no silent degradation", func(t *testing.T) { checkRefusals(t, s) })
	t.Run("OpenAI tools", func(t *testing.T) { checkOpenAITools(t, s) })
}

// checkOpenAITools sends OpenAI tools to the toolcaller fixture on
// /v1/chat/completions: a whole answer with tool_calls, the same calls
// streamed as deltas, and the tool message's turn.
func checkOpenAITools(t *testing.T, s *Server) {
	const tools = `"tools": [{"type": "function", "function": {"name": "classify_language",
		"parameters": {"type": "object", "properties": {"text": {"type": "string"}}}}}]`
	var whole struct {
		Choices []struct {
			Message struct {
				Content   *string
				ToolCalls []struct {
					ID       string
					Type     string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason string `json:"finish_reason"`
		}
	}
	a := call(t, http.MethodPost, s.Inference+"/v1/chat/completions", chatBody("toolcaller", german, tools))
	if err := json.Unmarshal(a.body, &whole); err != nil || a.code != http.StatusOK || len(whole.Choices) != 1 {
		t.Fatalf("answer %d %s", a.code, a.body)
	}
	ch := whole.Choices[0]
	if ch.FinishReason != "tool_calls" || ch.Message.Content != nil || len(ch.Message.ToolCalls) != 1 ||
		ch.Message.ToolCalls[0].Function.Name != "classify_language" || !strings.Contains(ch.Message.ToolCalls[0].Function.Arguments, "Guten Morgen") {
		t.Errorf("whole answer %s", a.body)
	}
	streamed := call(t, http.MethodPost, s.Inference+"/v1/chat/completions", chatBody("toolcaller", german, tools, `"stream": true`))
	var args strings.Builder
	deltas := 0
	for _, d := range sseData(t, streamed.body) {
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						ID       string
						Function struct{ Name, Arguments string }
					} `json:"tool_calls"`
				}
			}
		}
		if d == "[DONE]" || json.Unmarshal([]byte(d), &c) != nil || len(c.Choices) == 0 {
			continue
		}
		for _, tc := range c.Choices[0].Delta.ToolCalls {
			deltas++
			args.WriteString(tc.Function.Arguments)
		}
	}
	if deltas < 2 || args.String() != ch.Message.ToolCalls[0].Function.Arguments {
		t.Errorf("%d deltas, arguments %q, whole %q", deltas, args.String(), ch.Message.ToolCalls[0].Function.Arguments)
	}
	call0 := ch.Message.ToolCalls[0]
	second := fmt.Sprintf(`{"model": "toolcaller", %s, "messages": [{"role": "user", "content": %q},
		{"role": "assistant", "content": null, "tool_calls": [{"id": %q, "type": "function", "function": {"name": %q, "arguments": %q}}]},
		{"role": "tool", "tool_call_id": %q, "content": "deu"}]}`, tools, german, call0.ID, call0.Function.Name, call0.Function.Arguments, call0.ID)
	c := decodeCompletion(t, call(t, http.MethodPost, s.Inference+"/v1/chat/completions", second))
	if c.Choices[0].Message.Content != "The tool answered: deu" || c.Choices[0].FinishReason != "stop" {
		t.Errorf("second turn %+v", c.Choices[0])
	}
}

var awsCreds = credentials.NewStaticCredentialsProvider("AKIDLOCAL", "local-secret", "")

func checkGoSDK(t *testing.T, s *Server) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sm := sagemakerruntime.New(sagemakerruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.Inference),
		Credentials: awsCreds})
	br := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(s.Inference),
		Credentials: awsCreds})
	t.Run("InvokeEndpoint", func(t *testing.T) {
		body := []byte(fmt.Sprintf(`{"inputs": %q}`, german))
		for _, in := range []*sagemakerruntime.InvokeEndpointInput{
			{EndpointName: aws.String("my-endpoint"), TargetModel: aws.String("langid.tar.gz"), Body: body, ContentType: aws.String("application/json")},
			{EndpointName: aws.String("langid"), Body: body, ContentType: aws.String("application/json")},
		} {
			out, err := sm.InvokeEndpoint(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if top := topLabel(t, string(out.Body)); top != "deu" || aws.ToString(out.InvokedProductionVariant) != "AllTraffic" {
				t.Errorf("target %q: top label %q, variant %q", aws.ToString(in.TargetModel), top, aws.ToString(out.InvokedProductionVariant))
			}
		}
	})
	t.Run("ModelError", func(t *testing.T) {
		_, err := sm.InvokeEndpoint(ctx, &sagemakerruntime.InvokeEndpointInput{EndpointName: aws.String("chat"),
			Body: []byte(`{"messages": 5}`), ContentType: aws.String("application/json")})
		var me *smtypes.ModelError
		if !errors.As(err, &me) || aws.ToInt32(me.OriginalStatusCode) != 400 || !strings.Contains(aws.ToString(me.OriginalMessage), "messages must be a list") {
			t.Fatalf("error %v, want ModelError with OriginalStatusCode 400", err)
		}
	})
	t.Run("InvokeEndpointWithResponseStream", func(t *testing.T) { checkGoPayloadStream(t, ctx, sm) })
	t.Run("Converse", func(t *testing.T) {
		out, err := br.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String("us.chat"),
			Messages:        []brtypes.Message{userText("What does cruft mean?")},
			InferenceConfig: &brtypes.InferenceConfiguration{MaxTokens: aws.Int32(24), Temperature: aws.Float32(0)}})
		if err != nil {
			t.Fatal(err)
		}
		text := out.Output.(*brtypes.ConverseOutputMemberMessage).Value.Content[0].(*brtypes.ContentBlockMemberText).Value
		if text == "" || (out.StopReason != brtypes.StopReasonEndTurn && out.StopReason != brtypes.StopReasonMaxTokens) ||
			aws.ToInt32(out.Usage.OutputTokens) == 0 || out.Metrics == nil {
			t.Errorf("answer %q, %s, %+v", text, out.StopReason, out.Usage)
		}
		streamed, events := goConverseStream(t, ctx, br, &bedrockruntime.ConverseStreamInput{ModelId: aws.String("chat"),
			Messages:        []brtypes.Message{userText("What does cruft mean?")},
			InferenceConfig: &brtypes.InferenceConfiguration{MaxTokens: aws.Int32(24), Temperature: aws.Float32(0)}})
		if streamed != text || events[0] != "messageStart" || events[len(events)-1] != "metadata" {
			t.Errorf("stream %q %v, whole %q", streamed, events, text)
		}
	})
	t.Run("Converse tool round trip", func(t *testing.T) { checkGoToolRound(t, ctx, br) })
}

// topLabel returns the first label of a langid answer.
func topLabel(t *testing.T, body string) string {
	t.Helper()
	var labels []struct{ Label string }
	if err := json.Unmarshal([]byte(body), &labels); err != nil || len(labels) == 0 {
		t.Fatalf("langid answer %q: %v", body, err)
	}
	return labels[0].Label
}

func userText(text string) brtypes.Message {
	return brtypes.Message{Role: brtypes.ConversationRoleUser, Content: []brtypes.ContentBlock{&brtypes.ContentBlockMemberText{Value: text}}}
}

// sdkClosedItself reports whether a stream broke because the AWS SDK for Go
// closed its own connection: it closes the request body as soon as the
// answer's headers arrive, and Go's transport, still finishing the request,
// then reads the body once more, takes the io.EOF for an error and tears
// the connection down under the answer (aws/aws-sdk-go-v2#2737). Against a
// local server that answers within microseconds this happens about once in
// a hundred streams; the SDK retries whole operations on it, not streams.
func sdkClosedItself(err error) bool {
	return errors.Is(err, net.ErrClosed) || err != nil && strings.Contains(err.Error(), "unexpected EOF reading trailer")
}

// readStream runs read, once more when the SDK closed its own connection.
func readStream(t *testing.T, read func() error) {
	t.Helper()
	err := read()
	if sdkClosedItself(err) {
		t.Logf("the SDK closed its own connection (aws/aws-sdk-go-v2#2737), once more: %v", err)
		err = read()
	}
	if err != nil {
		t.Fatal(err)
	}
}

// checkGoPayloadStream streams the chat model through PayloadParts: a chat
// request's stream is one OpenAI chat.completion.chunk and a newline per
// part: text, then the finish reason, then the usage alone.
func checkGoPayloadStream(t *testing.T, ctx context.Context, sm *sagemakerruntime.Client) {
	type chunk struct {
		Object  string
		Choices []struct {
			Delta        struct{ Content *string }
			FinishReason *string `json:"finish_reason"`
		}
		Usage *struct {
			CompletionTokens int `json:"completion_tokens"`
		}
	}
	var out *sagemakerruntime.InvokeEndpointWithResponseStreamOutput
	var chunks []chunk
	readStream(t, func() error {
		var err error
		out, err = sm.InvokeEndpointWithResponseStream(ctx, &sagemakerruntime.InvokeEndpointWithResponseStreamInput{
			EndpointName: aws.String("chat"), ContentType: aws.String("application/json"),
			Body: []byte(`{"messages": [{"role": "user", "content": "What does cruft mean?"}], "max_tokens": 24, "temperature": 0, "stream": true}`)})
		if err != nil {
			return err
		}
		st := out.GetStream()
		defer st.Close()
		chunks = nil
		for ev := range st.Events() {
			if p, ok := ev.(*smtypes.ResponseStreamMemberPayloadPart); ok {
				var c chunk
				if !bytes.HasSuffix(p.Value.Bytes, []byte("\n")) || json.Unmarshal(p.Value.Bytes, &c) != nil || c.Object != "chat.completion.chunk" {
					t.Errorf("part %q is not one chat.completion.chunk and a newline", p.Value.Bytes)
				}
				chunks = append(chunks, c)
			}
		}
		return st.Err()
	})
	n := len(chunks)
	if n < 3 {
		t.Fatalf("%d parts", n)
	}
	var text strings.Builder
	for _, c := range chunks[:n-2] {
		if len(c.Choices) != 1 || c.Choices[0].FinishReason != nil {
			t.Errorf("a text chunk %+v", c)
			continue
		}
		if c.Choices[0].Delta.Content != nil {
			text.WriteString(*c.Choices[0].Delta.Content)
		}
	}
	finish, usage := chunks[n-2], chunks[n-1]
	if text.Len() == 0 || len(finish.Choices) != 1 || finish.Choices[0].FinishReason == nil || usage.Usage == nil ||
		usage.Usage.CompletionTokens == 0 || len(usage.Choices) != 0 {
		t.Errorf("text %q, finish %+v, usage %+v", text.String(), finish, usage)
	}
}

// goConverseStream reads a ConverseStream answer: the text and the events' names.
func goConverseStream(t *testing.T, ctx context.Context, br *bedrockruntime.Client, in *bedrockruntime.ConverseStreamInput) (string, []string) {
	t.Helper()
	var text strings.Builder
	var events []string
	readStream(t, func() error {
		text.Reset()
		events = nil
		out, err := br.ConverseStream(ctx, in)
		if err != nil {
			return err
		}
		st := out.GetStream()
		defer st.Close()
		converseEvents(st.Events(), &text, &events)
		return st.Err()
	})
	return text.String(), events
}

// converseEvents names the events of a ConverseStream answer and collects
// its text (and its tool input).
func converseEvents(evs <-chan brtypes.ConverseStreamOutput, text *strings.Builder, events *[]string) {
	for ev := range evs {
		switch v := ev.(type) {
		case *brtypes.ConverseStreamOutputMemberMessageStart:
			*events = append(*events, "messageStart")
		case *brtypes.ConverseStreamOutputMemberContentBlockStart:
			u := v.Value.Start.(*brtypes.ContentBlockStartMemberToolUse).Value
			*events = append(*events, "toolUse "+aws.ToString(u.Name))
		case *brtypes.ConverseStreamOutputMemberContentBlockDelta:
			switch d := v.Value.Delta.(type) {
			case *brtypes.ContentBlockDeltaMemberText:
				text.WriteString(d.Value)
				*events = append(*events, "text")
			case *brtypes.ContentBlockDeltaMemberToolUse:
				text.WriteString(aws.ToString(d.Value.Input))
				*events = append(*events, "input")
			}
		case *brtypes.ConverseStreamOutputMemberContentBlockStop:
			*events = append(*events, "contentBlockStop")
		case *brtypes.ConverseStreamOutputMemberMessageStop:
			*events = append(*events, "messageStop "+string(v.Value.StopReason))
		case *brtypes.ConverseStreamOutputMemberMetadata:
			*events = append(*events, "metadata")
		}
	}
}

// classifyTool is the tool an agent offers its planner.
func classifyTool() *brtypes.ToolConfiguration {
	schema := document.NewLazyDocument(map[string]any{"type": "object",
		"properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []string{"text"}})
	return &brtypes.ToolConfiguration{Tools: []brtypes.Tool{&brtypes.ToolMemberToolSpec{Value: brtypes.ToolSpecification{
		Name: aws.String("classify_language"), Description: aws.String("Names the language of a text."),
		InputSchema: &brtypes.ToolInputSchemaMemberJson{Value: schema}}}}}
}

// checkGoToolRound is an agent's loop on the toolcaller fixture: tool_use,
// the tool runs (InvokeEndpoint on langid), and the second call carrying
// the toolResult ends with end_turn quoting it. ConverseStream makes the
// same call as a stream.
func checkGoToolRound(t *testing.T, ctx context.Context, br *bedrockruntime.Client) {
	question := userText("Which language is '" + german + "'?")
	first, err := br.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String("global.toolcaller"),
		Messages: []brtypes.Message{question}, ToolConfig: classifyTool()})
	if err != nil {
		t.Fatal(err)
	}
	turn := first.Output.(*brtypes.ConverseOutputMemberMessage).Value
	use := turn.Content[0].(*brtypes.ContentBlockMemberToolUse).Value
	var args map[string]string
	if err := use.Input.UnmarshalSmithyDocument(&args); err != nil || first.StopReason != brtypes.StopReasonToolUse ||
		aws.ToString(use.Name) != "classify_language" || !strings.Contains(args["text"], german) {
		t.Fatalf("first turn %s %+v %v (%v)", first.StopReason, use, args, err)
	}
	result := &brtypes.ContentBlockMemberToolResult{Value: brtypes.ToolResultBlock{ToolUseId: use.ToolUseId,
		Content: []brtypes.ToolResultContentBlock{&brtypes.ToolResultContentBlockMemberText{Value: "deu"}}}}
	second, err := br.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String("global.toolcaller"), ToolConfig: classifyTool(),
		Messages: []brtypes.Message{question, turn, {Role: brtypes.ConversationRoleUser, Content: []brtypes.ContentBlock{result}}}})
	if err != nil {
		t.Fatal(err)
	}
	text := second.Output.(*brtypes.ConverseOutputMemberMessage).Value.Content[0].(*brtypes.ContentBlockMemberText).Value
	if second.StopReason != brtypes.StopReasonEndTurn || text != "The tool answered: deu" {
		t.Errorf("second turn %s %q", second.StopReason, text)
	}
	input, events := goConverseStream(t, ctx, br, &bedrockruntime.ConverseStreamInput{ModelId: aws.String("toolcaller"),
		Messages: []brtypes.Message{question}, ToolConfig: classifyTool()})
	if !strings.Contains(strings.Join(events, ","), "messageStart,toolUse classify_language,input,input") ||
		events[len(events)-2] != "messageStop tool_use" || !strings.Contains(input, german) {
		t.Errorf("streamed tool use %v %q", events, input)
	}
}

// awsSDKReport is what e2e/node/aws_sdk.mjs prints.
type awsSDKReport map[string]struct {
	OK    json.RawMessage `json:"ok"`
	Error *struct {
		Name               string `json:"name"`
		Status             int    `json:"status"`
		Message            string `json:"message"`
		OriginalStatusCode int    `json:"originalStatusCode"`
	} `json:"error"`
}

func checkNodeSDK(t *testing.T, s *Server) {
	node := needNode(t)
	for _, pkg := range []string{"@aws-sdk/client-sagemaker-runtime", "@aws-sdk/client-bedrock-runtime"} {
		if _, err := os.Stat(filepath.Join(nodeDir, "node_modules", pkg, "package.json")); err != nil {
			t.Fatalf("%s is not installed in e2e/node: run scripts/deps.sh (npm ci there): %v", pkg, err)
		}
	}
	var r awsSDKReport
	runJSON(t, &r, nodeDir, node, "aws_sdk.mjs", s.Inference)
	for _, key := range []string{"invokeTarget", "invokeNamed", "stream", "converse", "converseStream", "toolRound"} {
		if r[key].Error != nil || r[key].OK == nil {
			t.Errorf("%s failed: %+v", key, r[key].Error)
		}
	}
	if t.Failed() {
		return
	}
	var invoke struct{ Body, Variant string }
	for _, key := range []string{"invokeTarget", "invokeNamed"} {
		if err := json.Unmarshal(r[key].OK, &invoke); err != nil || topLabel(t, invoke.Body) != "deu" || invoke.Variant != "AllTraffic" {
			t.Errorf("%s: %s", key, r[key].OK)
		}
	}
	if e := r["modelError"].Error; e == nil || e.Name != "ModelError" || e.OriginalStatusCode != 400 || e.Status != 424 {
		t.Errorf("modelError: %+v", e)
	}
	var stream struct {
		Parts  int
		Joined string
	}
	if err := json.Unmarshal(r["stream"].OK, &stream); err != nil || stream.Parts < 3 ||
		strings.Count(stream.Joined, `"object":"chat.completion.chunk"`) != stream.Parts || !strings.Contains(stream.Joined, `"usage":{"prompt_tokens"`) {
		t.Errorf("stream: a chat request's parts are one chat.completion.chunk each: %s", r["stream"].OK)
	}
	var conv struct {
		Content    []struct{ Text string }
		StopReason string
	}
	if err := json.Unmarshal(r["converse"].OK, &conv); err != nil || len(conv.Content) == 0 || conv.Content[0].Text == "" {
		t.Errorf("converse: %s", r["converse"].OK)
	}
	var cs struct {
		Events []string
		Text   string
	}
	if err := json.Unmarshal(r["converseStream"].OK, &cs); err != nil || cs.Text != conv.Content[0].Text ||
		cs.Events[0] != "messageStart" || cs.Events[len(cs.Events)-1] != "metadata" {
		t.Errorf("converseStream: %s (whole: %q)", r["converseStream"].OK, conv.Content[0].Text)
	}
	var round struct{ FirstStop, SecondStop, SecondText string }
	if err := json.Unmarshal(r["toolRound"].OK, &round); err != nil || round.FirstStop != "tool_use" ||
		round.SecondStop != "end_turn" || round.SecondText != "The tool answered: deu" {
		t.Errorf("toolRound: %s", r["toolRound"].OK)
	}
	if e := r["tooLong"].Error; e == nil || e.Name != "ValidationException" || !strings.Contains(e.Message, "context length is 256 tokens") {
		t.Errorf("tooLong: %+v", e)
	}
}

// runJSON runs a client script in dir and decodes the JSON it prints.
func runJSON(t *testing.T, v any, dir string, argv ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, stderr.String())
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
}

func checkBoto3(t *testing.T, s *Server) {
	if exec.Command(python, "-c", "import boto3").Run() != nil {
		t.Fatal("Debian's python3-boto3 is not installed: run scripts/deps.sh")
	}
	var r struct {
		Versions   map[string]string
		HasStream  bool `json:"has_stream"`
		Target     struct{ Body, Variant string }
		Named      struct{ Body, Variant string }
		ModelError *struct {
			Code               string
			Status             int
			OriginalStatusCode int
		}
	}
	runJSON(t, &r, "python", python, "boto3_invoke.py", s.Inference)
	t.Logf("boto3 %s, botocore %s; invoke_endpoint_with_response_stream present: %v", r.Versions["boto3"], r.Versions["botocore"], r.HasStream)
	for name, a := range map[string]struct{ Body, Variant string }{"target": r.Target, "named": r.Named} {
		if topLabel(t, a.Body) != "deu" || a.Variant != "AllTraffic" {
			t.Errorf("%s: %+v", name, a)
		}
	}
	if e := r.ModelError; e == nil || e.Code != "ModelError" || e.OriginalStatusCode != 400 || e.Status != 424 {
		t.Errorf("ModelError: %+v", e)
	}
}

// checkFirstEvent reads the first event of the gate model's stream on both
// event-stream routes while the model still waits for its gate: if the
// front-end held the first event back until the answer was complete, the
// read would wait for the gate that only opens after it.
func checkFirstEvent(t *testing.T, s *Server, gate string) {
	routes := map[string]string{
		"/endpoints/gate/invocations-response-stream": `{"tag": "sm"}`,
		"/model/gate/converse-stream":                 `{"messages": [{"role": "user", "content": [{"text": "hi"}]}]}`,
	}
	for route, body := range routes {
		t.Run(route, func(t *testing.T) {
			tag := "sm"
			if strings.Contains(route, "converse") {
				tag = "x" // the chat body has no tag
			}
			_ = os.Remove(filepath.Join(gate, "open-"+tag))
			_, br := openStream(t, s, route, body)
			dec := eventstream.NewDecoder()
			first, err := dec.Decode(br, nil)
			if err != nil {
				t.Fatalf("first event: %v", err)
			}
			if err := os.WriteFile(filepath.Join(gate, "open-"+tag), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			rest := readEvents(t, dec, br)
			kind := first.Headers.Get(":event-type").String()
			ok := kind == "messageStart" || kind == "PayloadPart" && strings.Contains(string(first.Payload), "first")
			if !ok || len(rest) == 0 {
				t.Errorf("first event %s %s, then %d more", kind, first.Payload, len(rest))
			}
		})
	}
}

func readEvents(t *testing.T, dec *eventstream.Decoder, br *bufio.Reader) []eventstream.Message {
	t.Helper()
	var out []eventstream.Message
	for {
		m, err := dec.Decode(br, nil)
		if err != nil {
			return out
		}
		out = append(out, m)
	}
}

// checkRefusals sends what the chat model cannot honour: a prompt longer
// than its context, n = 2, tools; each is a 400 naming the field and the
// limit, in OpenAI's shape on /v1 and as ValidationException on Converse.
func checkRefusals(t *testing.T, s *Server) {
	if g := s.Describe("chat").Generation; g == nil || g.ContextLength != 256 || g.SupportsTools || g.Choices() != 1 {
		t.Errorf("describe chat: generation %+v", g)
	}
	if g := s.Describe("toolcaller").Generation; g == nil || !g.SupportsTools {
		t.Errorf("describe toolcaller: generation %+v", g)
	}
	long := strings.Repeat("cruft ", 6000)
	cases := []struct{ name, body, param, code, msg string }{
		{"prompt longer than the context", chatBody("chat", long), "messages", "context_length_exceeded", "context length is 256 tokens"},
		{"max_tokens beyond the context", chatBody("chat", "What does cruft mean?", `"max_tokens": 250`), "max_tokens",
			"context_length_exceeded", "context length is 256 tokens"},
		{"n = 2", chatBody("chat", "hi", `"n": 2`), "n", "unsupported_value", "at most 1"},
		{"tools", chatBody("chat", "hi", `"tools": [{"type": "function", "function": {"name": "f"}}]`), "tools",
			"unsupported_parameter", "does not support tools"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := call(t, http.MethodPost, s.Inference+"/v1/chat/completions", c.body)
			var e struct {
				Error struct {
					Message, Type string
					Param, Code   *string
				}
			}
			if a.code != http.StatusBadRequest || json.Unmarshal(a.body, &e) != nil || aws.ToString(e.Error.Param) != c.param ||
				aws.ToString(e.Error.Code) != c.code || !strings.Contains(e.Error.Message, c.msg) {
				t.Errorf("answer %d %s", a.code, a.body)
			}
		})
	}
	a := call(t, http.MethodPost, s.Inference+"/model/chat/converse",
		fmt.Sprintf(`{"messages": [{"role": "user", "content": [{"text": %q}]}]}`, long))
	if a.code != http.StatusBadRequest || a.header.Get("X-Amzn-ErrorType") != "ValidationException" || !strings.Contains(string(a.body), "context length is 256 tokens") {
		t.Errorf("Converse with a long prompt: %d %s %s", a.code, a.header.Get("X-Amzn-ErrorType"), a.body)
	}
}
