package agent

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/protocol/eventstream"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/sagemakerruntime"
	"go.uber.org/zap"
)

// fakeCloud stands in for the two AWS services at the HTTP boundary (the
// machine has neither a managed reasoning model nor a SageMaker endpoint):
// Converse and ConverseStream answered by a planner function, InvokeEndpoint
// by an slm function, in the wire shapes the AWS SDK for Go reads. It
// records what it received. The e2e tests run the same agent against a
// real switchyard.
type fakeCloud struct {
	srv     *httptest.Server
	planner func(req converseBody) plannerReply
	slm     func(body []byte) (int, string)
	hold    chan struct{} // when set, a stream waits on it after its first text

	mu       sync.Mutex
	converse []converseCall
	invokes  []invokeCall
}

// converseBody is the part of a Converse request the fake reads.
type converseBody struct {
	Messages []struct {
		Role    string
		Content []map[string]json.RawMessage
	}
	System     []struct{ Text string }
	ToolConfig struct {
		Tools []struct {
			ToolSpec struct {
				Name, Description string
				InputSchema       struct{ JSON map[string]any }
			}
		}
	}
}

// lastBlock returns the last message's last content block.
func (c converseBody) lastBlock() map[string]json.RawMessage {
	m := c.Messages[len(c.Messages)-1]
	return m.Content[len(m.Content)-1]
}

type converseCall struct {
	path   string
	body   converseBody
	stream bool
}

type invokeCall struct {
	path   string
	header http.Header
	body   []byte
}

// plannerReply is one answer of the fake reasoning model, or an error.
type plannerReply struct {
	text    string
	calls   []fakeToolUse
	stop    string
	status  int    // an error answer when set
	errType string // its X-Amzn-ErrorType
}

type fakeToolUse struct{ id, name, input string }

func newFakeCloud(t testing.TB) *fakeCloud {
	t.Helper()
	f := &fakeCloud{planner: quotingPlanner, slm: func([]byte) (int, string) { return 200, chatAnswer("German (deu)") }}
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
	t.Cleanup(f.srv.Close)
	return f
}

// quotingPlanner behaves like the toolcaller fixture: after a tool result
// it quotes it; else it calls the first tool with the user's text.
func quotingPlanner(req converseBody) plannerReply {
	last := req.lastBlock()
	if raw, ok := last["toolResult"]; ok {
		var r struct{ Content []struct{ Text string } }
		_ = json.Unmarshal(raw, &r)
		return plannerReply{text: "The tool answered: " + r.Content[0].Text, stop: "end_turn"}
	}
	var text string
	_ = json.Unmarshal(last["text"], &text)
	input, _ := json.Marshal(map[string]string{"text": text})
	name := req.ToolConfig.Tools[0].ToolSpec.Name
	return plannerReply{calls: []fakeToolUse{{id: "tu-1", name: name, input: string(input)}}, stop: "tool_use"}
}

// chatAnswer returns a chat.completion answering text.
func chatAnswer(text string) string {
	b, _ := json.Marshal(map[string]any{"object": "chat.completion",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}}}})
	return string(b)
}

func (f *fakeCloud) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	switch {
	case strings.HasPrefix(r.URL.Path, "/model/"):
		f.answerConverse(w, r, body)
	case strings.HasPrefix(r.URL.Path, "/endpoints/"):
		f.mu.Lock()
		f.invokes = append(f.invokes, invokeCall{r.URL.Path, r.Header.Clone(), body})
		f.mu.Unlock()
		code, answer := f.slm(body)
		w.Header().Set("Content-Type", "application/json")
		if code != http.StatusOK {
			w.Header().Set("X-Amzn-ErrorType", "ModelError")
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, answer)
	default:
		http.NotFound(w, r)
	}
}

func (f *fakeCloud) answerConverse(w http.ResponseWriter, r *http.Request, body []byte) {
	var req converseBody
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	stream := strings.HasSuffix(r.URL.Path, "/converse-stream")
	f.mu.Lock()
	f.converse = append(f.converse, converseCall{r.URL.Path, req, stream})
	f.mu.Unlock()
	reply := f.planner(req)
	switch {
	case reply.status != 0:
		w.Header().Set("X-Amzn-ErrorType", reply.errType)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(reply.status)
		fmt.Fprintf(w, `{"message": "the fake says %s"}`, reply.errType)
	case stream:
		f.streamReply(w, reply)
	default:
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(wholeReply(reply))
	}
}

// wholeReply is a Converse answer.
func wholeReply(r plannerReply) []byte {
	var content []any
	if r.text != "" {
		content = append(content, map[string]any{"text": r.text})
	}
	for _, c := range r.calls {
		content = append(content, map[string]any{"toolUse": map[string]any{
			"toolUseId": c.id, "name": c.name, "input": json.RawMessage(c.input)}})
	}
	b, _ := json.Marshal(map[string]any{
		"output":     map[string]any{"message": map[string]any{"role": "assistant", "content": content}},
		"stopReason": r.stop, "usage": map[string]int{"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
		"metrics": map[string]int{"latencyMs": 1},
	})
	return b
}

// streamReply answers as ConverseStream: the text word by word, then each
// tool use with its input in two pieces.
func (f *fakeCloud) streamReply(w http.ResponseWriter, r plannerReply) {
	w.Header().Set("Content-Type", "application/vnd.amazon.eventstream")
	w.WriteHeader(http.StatusOK)
	send := func(eventType string, payload any) {
		b, _ := json.Marshal(payload)
		var h eventstream.Headers
		h.Set(":event-type", eventstream.StringValue(eventType))
		h.Set(":content-type", eventstream.StringValue("application/json"))
		h.Set(":message-type", eventstream.StringValue("event"))
		_ = eventstream.NewEncoder().Encode(w, eventstream.Message{Headers: h, Payload: b})
		w.(http.Flusher).Flush()
	}
	send("messageStart", map[string]string{"role": "assistant"})
	for i, word := range strings.SplitAfter(r.text, " ") {
		if word == "" {
			continue
		}
		send("contentBlockDelta", map[string]any{"contentBlockIndex": 0, "delta": map[string]string{"text": word}})
		if i == 0 && f.hold != nil {
			<-f.hold
		}
	}
	for i, c := range r.calls {
		index := i + 1
		send("contentBlockStart", map[string]any{"contentBlockIndex": index,
			"start": map[string]any{"toolUse": map[string]string{"toolUseId": c.id, "name": c.name}}})
		half := len(c.input) / 2
		for _, piece := range []string{c.input[:half], c.input[half:]} {
			send("contentBlockDelta", map[string]any{"contentBlockIndex": index, "delta": map[string]any{"toolUse": map[string]string{"input": piece}}})
		}
		send("contentBlockStop", map[string]any{"contentBlockIndex": index})
	}
	send("messageStop", map[string]string{"stopReason": r.stop})
	send("metadata", map[string]any{"usage": map[string]int{"inputTokens": 1, "outputTokens": 1, "totalTokens": 2},
		"metrics": map[string]int{"latencyMs": 1}})
}

// calls returns what the fake received so far.
func (f *fakeCloud) calls() ([]converseCall, []invokeCall) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]converseCall(nil), f.converse...), append([]invokeCall(nil), f.invokes...)
}

var testCreds = credentials.NewStaticCredentialsProvider("AKIDTEST", "test-secret", "")

// agent returns an Agent whose two clients are the real SDK clients,
// pointed at the fake, with the course named.
func (f *fakeCloud) agent(t testing.TB, course string) *Agent {
	t.Helper()
	c, err := LoadCourse(course)
	if err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	httpClient := plainBodies{&http.Client{Transport: tr}}
	br := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(f.srv.URL),
		Credentials: testCreds, HTTPClient: httpClient, RetryMaxAttempts: 1})
	sm := sagemakerruntime.New(sagemakerruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(f.srv.URL),
		Credentials: testCreds, HTTPClient: httpClient, RetryMaxAttempts: 1})
	return &Agent{Planner: br, ModelID: "us.planner", MaxRounds: DefaultMaxRounds, Log: zap.NewNop(),
		Tool: Tool{API: sm, Endpoint: "langid", Course: c}}
}
