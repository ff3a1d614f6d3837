package frontend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/document"
	brtypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
	"github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"
	smtypes "github.com/aws/aws-sdk-go-v2/service/sagemakerruntime/types"
	"github.com/aws/smithy-go"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
)

// The AWS SDK for Go v2, untouched but for its endpoint, against the
// front-end over a fake registry whose models answer as scripted below.

var awsCreds = credentials.NewStaticCredentialsProvider("AKIDLOCAL", "local-secret", "")

func smClient(base string) *sagemakerruntime.Client {
	return sagemakerruntime.New(sagemakerruntime.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(base), Credentials: awsCreds, RetryMaxAttempts: 1,
		HTTPClient: sdkHTTPClient(),
	})
}

func brClient(base string) *bedrockruntime.Client {
	return bedrockruntime.New(bedrockruntime.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(base), Credentials: awsCreds, RetryMaxAttempts: 1,
		HTTPClient: sdkHTTPClient(),
	})
}

// sdkHTTPClient is an HTTP client whose request bodies lose their WriteTo
// method, to keep these tests clear of an AWS SDK for Go race that a server
// as fast as this fake one hits about once in a hundred streams: the SDK
// closes the request body as soon as the answer's headers arrive; Go's
// transport, finishing the request, then reads the body once more, gets
// io.EOF as an error from WriteTo and closes the connection under the
// answer still streaming in (aws/aws-sdk-go-v2#2737). docs/api.md says what
// SDK users can do; e2e/aws_sdk_test.go runs the SDKs untouched.
func sdkHTTPClient() *http.Client {
	return &http.Client{Transport: plainBodies{&http.Transport{}}}
}

// plainBodies hides a request body's WriteTo.
type plainBodies struct{ next http.RoundTripper }

func (p plainBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return p.next.RoundTrip(r)
	}
	out := r.Clone(r.Context())
	out.Body = struct{ io.ReadCloser }{r.Body}
	return p.next.RoundTrip(out)
}

// scripted answers jobs by model name and records the bodies it saw.
type scripted struct {
	mu     sync.Mutex
	bodies map[string][]byte
}

func (s *scripted) last(model string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bodies[model]
}

func (s *scripted) respond(model string, j *batching.Job) {
	body := j.Input.Content[0].Value
	s.mu.Lock()
	s.bodies[model] = body
	s.mu.Unlock()
	switch model {
	case "fail400":
		j.Finish(&message.Response{Code: 400, Props: []message.Prop{{Key: "content-type", Value: "application/json"}},
			Body: []byte(`{"code":400,"message":"n=2 is too many","error":"n=2 is too many","param":"n","error_code":"unsupported_value"}`)})
	case "fail424":
		j.Finish(&message.Response{Code: 424, Body: []byte(`{"code":424,"message":"boom","error":"boom"}`)})
	case "lines":
		j.Finish(&message.Response{Code: 200, Props: []message.Prop{{Key: "content-type", Value: "application/jsonlines"}},
			Stream: scriptedStream(string(body))})
	case "chat":
		j.Finish(&message.Response{Code: 200, Props: []message.Prop{{Key: "content-type", Value: "application/json"}},
			Body: chatAnswer(body)})
	default:
		props := []message.Prop{{Key: "Content-Type", Value: "text/plain"}, {Key: "X-Model", Value: model}}
		if v := propOf(j.Input.Props, "x-amzn-sagemaker-custom-attributes"); v != "" {
			props = append(props, message.Prop{Key: "X-Amzn-SageMaker-Custom-Attributes", Value: "echo " + v})
		}
		j.Finish(&message.Response{Code: 200, Props: props, Body: body})
	}
}

func propOf(props []message.Prop, key string) string {
	for _, p := range props {
		if p.Key == key {
			return p.Value
		}
	}
	return ""
}

// scriptedStream streams two tokens, or, when the request says so, a tool
// call in pieces, an error line, or a break.
func scriptedStream(req string) *message.Stream {
	st := message.NewStream()
	go func() {
		switch {
		case strings.Contains(req, `"tools"`):
			st.Push([]byte(`{"token":{"id":1,"text":""},"tool_calls":[{"index":0,"id":"call_7","type":"function","function":{"name":"classify","arguments":""}}]}` + "\n"))
			st.Push([]byte(`{"token":{"id":2,"text":""},"tool_calls":[{"index":0,"function":{"arguments":"{\"text\":"}}]}` + "\n"))
			st.Push([]byte(`{"token":{"id":3,"text":""},"tool_calls":[{"index":0,"function":{"arguments":"\"hi\"}"}}]}` + "\n"))
			st.Push([]byte(`{"token":null,"generated_text":"","finish_reason":"tool_calls","usage":{"prompt_tokens":4,"completion_tokens":3,"total_tokens":7}}` + "\n"))
		default:
			st.Push([]byte(`{"token":{"id":1,"text":"Hal"}}` + "\n"))
			st.Push([]byte(`{"token":{"id":2,"text":"lo"}}` + "\n"))
			switch {
			case strings.Contains(req, "error-line"):
				st.Push([]byte(`{"token":null,"generated_text":"Hallo","finish_reason":"error","error":"engine: out of cheese"}` + "\n"))
			case strings.Contains(req, "break"):
				st.Close(fmt.Errorf("worker: stream ended with an error: lost"))
				return
			default:
				st.Push([]byte(`{"token":null,"generated_text":"Hallo","finish_reason":"eos","usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}` + "\n"))
			}
		}
		st.Close(nil)
	}()
	return st
}

// chatAnswer is a chat.completion: a tool call when the request offers
// tools, else "Hallo".
func chatAnswer(req []byte) []byte {
	if strings.Contains(string(req), `"tools"`) {
		return []byte(`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":null,` +
			`"tool_calls":[{"id":"call_1","type":"function","function":{"name":"classify","arguments":"{\"text\":\"hi\"}"}}]},` +
			`"finish_reason":"tool_calls","stop_reason":null}],"usage":{"prompt_tokens":9,"completion_tokens":4,"total_tokens":13}}`)
	}
	return []byte(`{"object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hallo"},` +
		`"finish_reason":"stop","stop_reason":"###"}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)
}

func startAWS(t *testing.T, names ...string) (*testServer, *scripted, *fakeModels) {
	t.Helper()
	f := newFake(names...)
	sc := &scripted{bodies: map[string][]byte{}}
	f.respond = sc.respond
	f.gens = map[string]api.Generation{"chat": {ContextLength: 256, SupportsTools: true, MaxChoices: 1},
		"lines": {SupportsTools: true}}
	return startServer(t, f), sc, f
}

func TestInvokeEndpoint(t *testing.T) {
	ts, _, _ := startAWS(t, "langid", "chat", "fail400")
	c := smClient(ts.inf)
	ctx := context.Background()
	cases := []struct{ name, endpoint, target, want string }{
		{"target model", "my-endpoint", "langid.tar.gz", "langid"},
		{"endpoint named like the model", "langid", "", "langid"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := &sagemakerruntime.InvokeEndpointInput{EndpointName: aws.String(tc.endpoint), Body: []byte("bonjour"),
				ContentType: aws.String("text/plain"), CustomAttributes: aws.String("trace=1")}
			if tc.target != "" {
				in.TargetModel = aws.String(tc.target)
			}
			out, err := c.InvokeEndpoint(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if string(out.Body) != "bonjour" || aws.ToString(out.ContentType) != "text/plain" ||
				aws.ToString(out.InvokedProductionVariant) != "AllTraffic" || aws.ToString(out.CustomAttributes) != "echo trace=1" {
				t.Errorf("answer %q %q %q %q", out.Body, aws.ToString(out.ContentType),
					aws.ToString(out.InvokedProductionVariant), aws.ToString(out.CustomAttributes))
			}
		})
	}
	t.Run("handler error", func(t *testing.T) {
		_, err := c.InvokeEndpoint(ctx, &sagemakerruntime.InvokeEndpointInput{EndpointName: aws.String("fail400"), Body: []byte("{}")})
		var me *smtypes.ModelError
		if !errors.As(err, &me) || aws.ToInt32(me.OriginalStatusCode) != 400 || !strings.Contains(aws.ToString(me.OriginalMessage), "n=2 is too many") {
			t.Fatalf("error %v, want ModelError with OriginalStatusCode 400", err)
		}
	})
	t.Run("no such model", func(t *testing.T) {
		for _, in := range []*sagemakerruntime.InvokeEndpointInput{
			{EndpointName: aws.String("nobody"), Body: []byte("x")},
			{EndpointName: aws.String("e"), TargetModel: aws.String("zz"), Body: []byte("x")},
		} {
			_, err := c.InvokeEndpoint(ctx, in)
			var ve *smtypes.ValidationError
			if !errors.As(err, &ve) {
				t.Errorf("error %v, want ValidationError", err)
			}
		}
	})
}

func TestInvokeEndpointRetryableErrors(t *testing.T) {
	ts, _, f := startAWS(t, "langid")
	c := smClient(ts.inf)
	for _, tc := range []struct {
		err  error
		code string
	}{{batching.ErrQueueFull, "ThrottlingException"}, {api.ErrNotReady, "ServiceUnavailable"}} {
		f.set(func(f *fakeModels) { f.submitErr = tc.err })
		_, err := c.InvokeEndpoint(context.Background(), &sagemakerruntime.InvokeEndpointInput{
			EndpointName: aws.String("e"), Body: []byte("x")})
		var ae smithy.APIError
		if !errors.As(err, &ae) || ae.ErrorCode() != tc.code {
			t.Errorf("%v: error %v, want %s", tc.err, err, tc.code)
		}
	}
}

func TestInvokeEndpointWithResponseStream(t *testing.T) {
	ts, _, _ := startAWS(t, "lines", "langid")
	c := smClient(ts.inf)
	read := func(t *testing.T, endpoint, body string) (string, int, *sagemakerruntime.InvokeEndpointWithResponseStreamOutput, error) {
		out, err := c.InvokeEndpointWithResponseStream(context.Background(), &sagemakerruntime.InvokeEndpointWithResponseStreamInput{
			EndpointName: aws.String(endpoint), Body: []byte(body), ContentType: aws.String("application/json")})
		if err != nil {
			t.Fatal(err)
		}
		st := out.GetStream()
		defer st.Close()
		var joined strings.Builder
		parts := 0
		for ev := range st.Events() {
			if p, ok := ev.(*smtypes.ResponseStreamMemberPayloadPart); ok {
				parts++
				joined.Write(p.Value.Bytes)
			}
		}
		return joined.String(), parts, out, st.Err()
	}
	text, parts, out, err := read(t, "lines", `{"stream": true}`)
	if err != nil || parts != 3 || !strings.HasSuffix(text, `"finish_reason":"eos","usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`+"\n") {
		t.Errorf("%d parts %q, %v", parts, text, err)
	}
	if aws.ToString(out.ContentType) != "application/jsonlines" || aws.ToString(out.InvokedProductionVariant) != "AllTraffic" {
		t.Errorf("content type %q, variant %q", aws.ToString(out.ContentType), aws.ToString(out.InvokedProductionVariant))
	}
	_, parts, _, err = read(t, "lines", `{"stream": true, "x": "error-line"}`)
	var mse *smtypes.ModelStreamError
	if !errors.As(err, &mse) || aws.ToString(mse.ErrorCode_) != "StreamBroken" || !strings.Contains(aws.ToString(mse.Message), "out of cheese") || parts != 3 {
		t.Errorf("error line: %d parts, %v; want ModelStreamError", parts, err)
	}
	_, parts, _, err = read(t, "lines", `{"stream": true, "x": "break"}`)
	if !errors.As(err, &mse) || parts != 2 {
		t.Errorf("break: %d parts, %v; want ModelStreamError", parts, err)
	}
	text, parts, _, err = read(t, "langid", "whole")
	if err != nil || parts != 1 || text != "whole" {
		t.Errorf("whole answer as a stream: %d parts %q, %v", parts, text, err)
	}
}

// TestChatResponseStream: a request in the chat schema is answered on
// InvokeEndpointWithResponseStream with one OpenAI chat.completion.chunk
// and a newline per PayloadPart: the text, the tool-call deltas, a finish
// reason on every choice (null until the last), then the usage alone with
// OpenAI's three keys; a worker's error line still ends in a
// ModelStreamError.
func TestChatResponseStream(t *testing.T) {
	ts, _, _ := startAWS(t, "lines")
	c := smClient(ts.inf)
	type chunk struct {
		ID, Object, Model string
		Choices           []struct {
			Delta struct {
				Role      string
				Content   *string
				ToolCalls []struct {
					Index    int
					ID, Type string
					Function struct{ Name, Arguments string }
				} `json:"tool_calls"`
			}
			FinishReason json.RawMessage `json:"finish_reason"`
		}
		Usage map[string]any
	}
	read := func(t *testing.T, body string) ([]chunk, error) {
		out, err := c.InvokeEndpointWithResponseStream(context.Background(), &sagemakerruntime.InvokeEndpointWithResponseStreamInput{
			EndpointName: aws.String("lines"), Body: []byte(body), ContentType: aws.String("application/json")})
		if err != nil {
			t.Fatal(err)
		}
		st := out.GetStream()
		defer st.Close()
		var chunks []chunk
		for ev := range st.Events() {
			p, ok := ev.(*smtypes.ResponseStreamMemberPayloadPart)
			if !ok {
				continue
			}
			var ch chunk
			b := p.Value.Bytes
			if !bytes.HasSuffix(b, []byte("\n")) || bytes.Count(b, []byte("\n")) != 1 || json.Unmarshal(b, &ch) != nil ||
				ch.Object != "chat.completion.chunk" || ch.Model != "lines" || !strings.HasPrefix(ch.ID, "chatcmpl-") {
				t.Errorf("part %q is not one chat.completion.chunk and a newline", b)
			}
			chunks = append(chunks, ch)
		}
		return chunks, st.Err()
	}
	chat := `{"messages": [{"role": "user", "content": "hi"}], "stream": true`
	chunks, err := read(t, chat+`}`)
	if err != nil || len(chunks) != 4 {
		t.Fatalf("%d chunks, %v; want text, text, finish, usage", len(chunks), err)
	}
	var text string
	for i, ch := range chunks[:3] {
		if len(ch.Choices) != 1 || (i < 2) != (string(ch.Choices[0].FinishReason) == "null") {
			t.Errorf("chunk %d: %+v", i, ch)
			continue
		}
		if ch.Choices[0].Delta.Content != nil {
			text += *ch.Choices[0].Delta.Content
		}
	}
	if text != "Hallo" || chunks[0].Choices[0].Delta.Role != "assistant" || string(chunks[2].Choices[0].FinishReason) != `"stop"` {
		t.Errorf("text %q, role %q, finish %s", text, chunks[0].Choices[0].Delta.Role, chunks[2].Choices[0].FinishReason)
	}
	if u := chunks[3].Usage; len(chunks[3].Choices) != 0 || len(u) != 3 || u["prompt_tokens"] != 5.0 || u["completion_tokens"] != 2.0 || u["total_tokens"] != 7.0 {
		t.Errorf("usage chunk %+v", chunks[3])
	}
	chunks, err = read(t, chat+`, "tools": [{"type": "function", "function": {"name": "classify"}}]}`)
	if err != nil || len(chunks) != 5 {
		t.Fatalf("tool call: %d chunks, %v", len(chunks), err)
	}
	first := chunks[0].Choices[0].Delta.ToolCalls
	var args string
	for _, ch := range chunks[:3] {
		for _, tc := range ch.Choices[0].Delta.ToolCalls {
			args += tc.Function.Arguments
		}
	}
	if len(first) != 1 || first[0].ID != "call_7" || first[0].Type != "function" || first[0].Function.Name != "classify" ||
		args != `{"text":"hi"}` || string(chunks[3].Choices[0].FinishReason) != `"tool_calls"` {
		t.Errorf("tool call %+v, arguments %q, finish %s", first, args, chunks[3].Choices[0].FinishReason)
	}
	_, err = read(t, chat+`, "x": "error-line"}`)
	var mse *smtypes.ModelStreamError
	if !errors.As(err, &mse) || !strings.Contains(aws.ToString(mse.Message), "out of cheese") {
		t.Errorf("error line: %v; want ModelStreamError", err)
	}
}

// TestResponseStreamAmbiguousEndpoint: the response stream has no
// TargetModel, so its error for an endpoint that picks no model says that
// the endpoint's name picks it, and gives no TargetModel advice.
func TestResponseStreamAmbiguousEndpoint(t *testing.T) {
	ts, _, _ := startAWS(t, "lines", "langid")
	_, err := smClient(ts.inf).InvokeEndpointWithResponseStream(context.Background(), &sagemakerruntime.InvokeEndpointWithResponseStreamInput{
		EndpointName: aws.String("my-endpoint"), Body: []byte("x")})
	var ve *smtypes.ValidationError
	if !errors.As(err, &ve) || strings.Contains(ve.ErrorMessage(), "TargetModel") || !strings.Contains(ve.ErrorMessage(), "endpoint name picks") ||
		!strings.Contains(ve.ErrorMessage(), "my-endpoint") {
		t.Errorf("error %v", err)
	}
}

// TestModelAliases: model_aliases names a model on Converse (a modelId no
// folder can have), as a SageMaker endpoint and as an OpenAI model.
func TestModelAliases(t *testing.T) {
	f := newFake("chat", "langid")
	sc := &scripted{bodies: map[string][]byte{}}
	f.respond = sc.respond
	f.gens = map[string]api.Generation{"chat": {ContextLength: 256, SupportsTools: true, MaxChoices: 1}}
	const sonnet = "global.anthropic.claude-sonnet-4-5-20250929-v1:0"
	ts := startServer(t, f, func(c *Config) {
		c.ModelAliases = map[string]string{sonnet: "chat", "prod-endpoint": "langid", "gpt-4o": "chat"}
	})
	out, err := brClient(ts.inf).Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String(sonnet),
		Messages: []brtypes.Message{{Role: brtypes.ConversationRoleUser, Content: []brtypes.ContentBlock{&brtypes.ContentBlockMemberText{Value: "Hallo?"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if text := out.Output.(*brtypes.ConverseOutputMemberMessage).Value.Content[0].(*brtypes.ContentBlockMemberText).Value; text != "Hallo" {
		t.Errorf("converse through the alias: %q", text)
	}
	inv, err := smClient(ts.inf).InvokeEndpoint(context.Background(), &sagemakerruntime.InvokeEndpointInput{
		EndpointName: aws.String("prod-endpoint"), Body: []byte("bonjour"), ContentType: aws.String("text/plain")})
	if err != nil || string(inv.Body) != "bonjour" || sc.last("langid") == nil {
		t.Errorf("endpoint alias: %v", err)
	}
	resp, body := ts.do(t, "POST", ts.inf+"/v1/chat/completions", `{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}`, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"Hallo"`) || sc.last("chat") == nil {
		t.Errorf("OpenAI model alias: %d %s", resp.StatusCode, body)
	}
	_, err = brClient(ts.inf).Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String("global.anthropic.other-v1:0"),
		Messages: []brtypes.Message{{Role: brtypes.ConversationRoleUser, Content: []brtypes.ContentBlock{&brtypes.ContentBlockMemberText{Value: "x"}}}}})
	var rnf *brtypes.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Errorf("an id that is no alias: %v", err)
	}
}

func TestConverse(t *testing.T) {
	ts, sc, _ := startAWS(t, "chat", "langid", "fail400", "fail424")
	c := brClient(ts.inf)
	ctx := context.Background()
	user := func(text string) brtypes.Message {
		return brtypes.Message{Role: brtypes.ConversationRoleUser, Content: []brtypes.ContentBlock{&brtypes.ContentBlockMemberText{Value: text}}}
	}
	out, err := c.Converse(ctx, &bedrockruntime.ConverseInput{
		ModelId: aws.String("us.chat"), Messages: []brtypes.Message{user("Hallo?")},
		System:          []brtypes.SystemContentBlock{&brtypes.SystemContentBlockMemberText{Value: "Be brief."}},
		InferenceConfig: &brtypes.InferenceConfiguration{MaxTokens: aws.Int32(16), Temperature: aws.Float32(0.5), StopSequences: []string{"###"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	msg := out.Output.(*brtypes.ConverseOutputMemberMessage).Value
	if text := msg.Content[0].(*brtypes.ContentBlockMemberText).Value; text != "Hallo" || out.StopReason != brtypes.StopReasonStopSequence ||
		aws.ToInt32(out.Usage.TotalTokens) != 6 || out.Metrics == nil {
		t.Errorf("answer %q %s %+v", text, out.StopReason, out.Usage)
	}
	var chat map[string]any
	if err := json.Unmarshal(sc.last("chat"), &chat); err != nil || chat["max_tokens"] != 16.0 || chat["stream"] != false ||
		len(chat["messages"].([]any)) != 2 {
		t.Errorf("chat request %s", sc.last("chat"))
	}

	schema := document.NewLazyDocument(map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}})
	tools := &brtypes.ToolConfiguration{Tools: []brtypes.Tool{&brtypes.ToolMemberToolSpec{Value: brtypes.ToolSpecification{
		Name: aws.String("classify"), Description: aws.String("Names a language."), InputSchema: &brtypes.ToolInputSchemaMemberJson{Value: schema}}}}}
	out, err = c.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String("chat"), Messages: []brtypes.Message{user("hi")}, ToolConfig: tools})
	if err != nil {
		t.Fatal(err)
	}
	use := out.Output.(*brtypes.ConverseOutputMemberMessage).Value.Content[0].(*brtypes.ContentBlockMemberToolUse).Value
	var input map[string]string
	if err := use.Input.UnmarshalSmithyDocument(&input); err != nil || input["text"] != "hi" || aws.ToString(use.ToolUseId) != "call_1" ||
		out.StopReason != brtypes.StopReasonToolUse {
		t.Errorf("tool use %+v %v (%v)", use, input, err)
	}

	for _, tc := range []struct {
		name string
		in   *bedrockruntime.ConverseInput
		want any
	}{
		{"tools to a model without them", &bedrockruntime.ConverseInput{ModelId: aws.String("langid"), Messages: []brtypes.Message{user("x")}, ToolConfig: tools},
			new(*brtypes.ValidationException)},
		{"unknown model", &bedrockruntime.ConverseInput{ModelId: aws.String("eu.nobody"), Messages: []brtypes.Message{user("x")}},
			new(*brtypes.ResourceNotFoundException)},
		{"handler refusal", &bedrockruntime.ConverseInput{ModelId: aws.String("fail400"), Messages: []brtypes.Message{user("x")}},
			new(*brtypes.ValidationException)},
		{"handler error", &bedrockruntime.ConverseInput{ModelId: aws.String("fail424"), Messages: []brtypes.Message{user("x")}},
			new(*brtypes.ModelErrorException)},
		{"not a chat model", &bedrockruntime.ConverseInput{ModelId: aws.String("langid"), Messages: []brtypes.Message{user("x")}},
			new(*brtypes.ModelErrorException)},
		{"unsupported block", &bedrockruntime.ConverseInput{ModelId: aws.String("chat"), Messages: []brtypes.Message{{Role: brtypes.ConversationRoleUser,
			Content: []brtypes.ContentBlock{&brtypes.ContentBlockMemberImage{Value: brtypes.ImageBlock{Format: brtypes.ImageFormatPng,
				Source: &brtypes.ImageSourceMemberBytes{Value: []byte{1}}}}}}}}, new(*brtypes.ValidationException)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.Converse(ctx, tc.in)
			if !errors.As(err, tc.want) {
				t.Errorf("error %v, want %T", err, tc.want)
			}
		})
	}
	_, err = c.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String("fail424"), Messages: []brtypes.Message{user("x")}})
	if me := new(brtypes.ModelErrorException); !errors.As(err, &me) || aws.ToInt32(me.OriginalStatusCode) != 424 || aws.ToString(me.ResourceName) != "fail424" {
		t.Errorf("ModelErrorException %v", err)
	}
}

// streamEvents reads a ConverseStream answer as one line per event.
func streamEvents(t *testing.T, c *bedrockruntime.Client, in *bedrockruntime.ConverseStreamInput) ([]string, error) {
	t.Helper()
	out, err := c.ConverseStream(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	st := out.GetStream()
	defer st.Close()
	var evs []string
	for ev := range st.Events() {
		switch v := ev.(type) {
		case *brtypes.ConverseStreamOutputMemberMessageStart:
			evs = append(evs, "start "+string(v.Value.Role))
		case *brtypes.ConverseStreamOutputMemberContentBlockStart:
			u := v.Value.Start.(*brtypes.ContentBlockStartMemberToolUse).Value
			evs = append(evs, fmt.Sprintf("block %d tool %s %s", aws.ToInt32(v.Value.ContentBlockIndex), aws.ToString(u.ToolUseId), aws.ToString(u.Name)))
		case *brtypes.ConverseStreamOutputMemberContentBlockDelta:
			switch d := v.Value.Delta.(type) {
			case *brtypes.ContentBlockDeltaMemberText:
				evs = append(evs, fmt.Sprintf("delta %d %q", aws.ToInt32(v.Value.ContentBlockIndex), d.Value))
			case *brtypes.ContentBlockDeltaMemberToolUse:
				evs = append(evs, fmt.Sprintf("input %d %s", aws.ToInt32(v.Value.ContentBlockIndex), aws.ToString(d.Value.Input)))
			}
		case *brtypes.ConverseStreamOutputMemberContentBlockStop:
			evs = append(evs, fmt.Sprintf("stop %d", aws.ToInt32(v.Value.ContentBlockIndex)))
		case *brtypes.ConverseStreamOutputMemberMessageStop:
			evs = append(evs, "end "+string(v.Value.StopReason))
		case *brtypes.ConverseStreamOutputMemberMetadata:
			evs = append(evs, fmt.Sprintf("usage %d/%d", aws.ToInt32(v.Value.Usage.InputTokens), aws.ToInt32(v.Value.Usage.OutputTokens)))
		}
	}
	return evs, st.Err()
}

func TestConverseStream(t *testing.T) {
	ts, sc, _ := startAWS(t, "lines", "chat", "fail424")
	c := brClient(ts.inf)
	user := []brtypes.Message{{Role: brtypes.ConversationRoleUser, Content: []brtypes.ContentBlock{&brtypes.ContentBlockMemberText{Value: "hi"}}}}
	evs, err := streamEvents(t, c, &bedrockruntime.ConverseStreamInput{ModelId: aws.String("global.lines"), Messages: user})
	want := `start assistant|delta 0 "Hal"|delta 0 "lo"|stop 0|end end_turn|usage 5/2`
	if err != nil || strings.Join(evs, "|") != want {
		t.Errorf("events %q (%v), want %s", evs, err, want)
	}
	if !strings.Contains(string(sc.last("lines")), `"stream":true`) {
		t.Errorf("chat request %s does not stream", sc.last("lines"))
	}

	schema := document.NewLazyDocument(map[string]any{"type": "object"})
	tools := &brtypes.ToolConfiguration{Tools: []brtypes.Tool{&brtypes.ToolMemberToolSpec{Value: brtypes.ToolSpecification{
		Name: aws.String("classify"), InputSchema: &brtypes.ToolInputSchemaMemberJson{Value: schema}}}}}
	evs, err = streamEvents(t, c, &bedrockruntime.ConverseStreamInput{ModelId: aws.String("lines"), Messages: user, ToolConfig: tools})
	want = `start assistant|block 0 tool call_7 classify|input 0 {"text":|input 0 "hi"}|stop 0|end tool_use|usage 4/3`
	if err != nil || strings.Join(evs, "|") != want {
		t.Errorf("tool events %q (%v), want %s", evs, err, want)
	}

	evs, err = streamEvents(t, c, &bedrockruntime.ConverseStreamInput{ModelId: aws.String("chat"), Messages: user})
	want = `start assistant|delta 0 "Hallo"|stop 0|end stop_sequence|usage 5/1`
	if err != nil || strings.Join(evs, "|") != want {
		t.Errorf("whole answer as a stream %q (%v), want %s", evs, err, want)
	}

	for _, text := range []string{"error-line", "break"} {
		msgs := []brtypes.Message{{Role: brtypes.ConversationRoleUser, Content: []brtypes.ContentBlock{&brtypes.ContentBlockMemberText{Value: text}}}}
		evs, err = streamEvents(t, c, &bedrockruntime.ConverseStreamInput{ModelId: aws.String("lines"), Messages: msgs})
		if mse := new(brtypes.ModelStreamErrorException); !errors.As(err, &mse) || len(evs) != 3 {
			t.Errorf("%s: events %q, error %v; want 3 events and ModelStreamErrorException", text, evs, err)
		}
	}
	_, err = c.ConverseStream(context.Background(), &bedrockruntime.ConverseStreamInput{ModelId: aws.String("fail424"), Messages: user})
	if me := new(brtypes.ModelErrorException); !errors.As(err, &me) {
		t.Errorf("error before the stream: %v, want ModelErrorException", err)
	}
}

func TestConverseFoldsAStream(t *testing.T) {
	ts, _, _ := startAWS(t, "lines")
	c := brClient(ts.inf)
	user := []brtypes.Message{{Role: brtypes.ConversationRoleUser, Content: []brtypes.ContentBlock{&brtypes.ContentBlockMemberText{Value: "hi"}}}}
	out, err := c.Converse(context.Background(), &bedrockruntime.ConverseInput{
		ModelId: aws.String("arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.lines"), Messages: user})
	if err != nil {
		t.Fatal(err)
	}
	msg := out.Output.(*brtypes.ConverseOutputMemberMessage).Value
	if text := msg.Content[0].(*brtypes.ContentBlockMemberText).Value; text != "Hallo" || out.StopReason != brtypes.StopReasonEndTurn {
		t.Errorf("folded answer %q %s", text, out.StopReason)
	}
	msgs := []brtypes.Message{{Role: brtypes.ConversationRoleUser, Content: []brtypes.ContentBlock{&brtypes.ContentBlockMemberText{Value: "break"}}}}
	if _, err := c.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String("lines"), Messages: msgs}); err == nil {
		t.Error("a broken stream folded into an answer")
	}
}

func TestChatLimits(t *testing.T) {
	ts, _, f := startAWS(t, "chat", "langid", "fail400")
	f.set(func(f *fakeModels) { f.gens["chat"] = api.Generation{SupportsTools: true, MaxChoices: 2} })
	tool := `"tools":[{"type":"function","function":{"name":"f"}}]`
	cases := []struct {
		name, body       string
		code             int
		param, errorCode string
	}{
		{"tools declared", `{"model":"chat","messages":[],` + tool + `}`, 200, "", ""},
		{"n declared", `{"model":"chat","messages":[],"n":2}`, 200, "", ""},
		{"tools not declared", `{"model":"langid","messages":[],` + tool + `}`, 400, "tools", "unsupported_parameter"},
		{"n above the limit", `{"model":"chat","messages":[],"n":3}`, 400, "n", "unsupported_value"},
		{"n not a number", `{"model":"chat","n":"2"}`, 400, "n", ""},
		{"handler refusal", `{"model":"fail400","messages":[]}`, 400, "n", "unsupported_value"},
		{"unknown model", `{"model":"nope"}`, 400, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := ts.do(t, "POST", ts.inf+"/v1/chat/completions", c.body, nil)
			if resp.StatusCode != c.code {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.code, body)
			}
			if c.code == 200 {
				return
			}
			e := mustOpenAIError(t, resp, body)
			if e.Type != "invalid_request_error" || aws.ToString(e.Param) != c.param || aws.ToString(e.Code) != c.errorCode {
				t.Errorf("error %+v (param %q code %q)", e, aws.ToString(e.Param), aws.ToString(e.Code))
			}
		})
	}
}

// TestChatToolCallStream: tool-call deltas on the worker's lines become
// OpenAI delta.tool_calls chunks (openai's TestChatFramerWholeCalls checks
// that a last line's whole calls go out when no delta did).
func TestChatToolCallStream(t *testing.T) {
	ts, _, _ := startAWS(t, "lines")
	chunks := chatEvents(t, ts, `{"model":"lines","stream":true,"messages":[],"tools":[{"type":"function","function":{"name":"classify"}}]}`)
	var args strings.Builder
	var first toolCallDelta
	for i, c := range chunks {
		for _, d := range c.Choices[0].Delta.ToolCalls {
			if i == 0 {
				first = d
			}
			args.WriteString(d.Function.Arguments)
		}
	}
	last := chunks[len(chunks)-1].Choices[0]
	if first.ID != "call_7" || first.Function.Name != "classify" || first.Type != "function" || args.String() != `{"text":"hi"}` ||
		last.FinishReason == nil || *last.FinishReason != "tool_calls" || chunks[0].Choices[0].Delta.Role != "assistant" {
		t.Errorf("chunks %+v", chunks)
	}
}
