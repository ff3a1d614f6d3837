package frontend_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/frontend"
	"github.com/switchyard/switchyard/message"
)

// spell is a one-model registry whose model "spell" streams its input back
// letter by letter as JSON lines, the way generative workers stream tokens.
type spell struct{ upper }

func (spell) Submit(model string, j *batching.Job) error {
	if model != "spell" {
		return fmt.Errorf("%w: %s", api.ErrModelNotFound, model)
	}
	st := message.NewStream()
	for i, r := range "hey" {
		st.Push(fmt.Appendf(nil, "{\"token\": {\"id\": %d, \"text\": %q}}\n", i, string(r)))
	}
	st.Push([]byte(`{"token": null, "generated_text": "hey", "finish_reason": "eos"}` + "\n"))
	st.Close(nil)
	j.Finish(&message.Response{Code: 200, Props: []message.Prop{{Key: "content-type", Value: "application/jsonlines"}}, Stream: st})
	return nil
}

func (spell) Names() []string { return []string{"spell"} }

// A streamed chat request on /v1/chat/completions: the worker's JSON lines
// go out as OpenAI chat.completion.chunk events, ending with [DONE].
func Example_chatStream() {
	srv, err := frontend.New(frontend.Config{InferenceAddr: "127.0.0.1:0", ManagementAddr: "127.0.0.1:0"}, spell{})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := srv.Listen(); err != nil {
		fmt.Println(err)
		return
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx) }()

	body := `{"model": "spell", "messages": [{"role": "user", "content": "hey"}], "stream": true}`
	resp, err := http.Post("http://"+srv.InferenceAddr()+"/v1/chat/completions", "application/json", strings.NewReader(body))
	if err == nil {
		events, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		fmt.Println(resp.Header.Get("Content-Type"))
		for _, ev := range strings.Split(strings.TrimSpace(string(events)), "\n\n") {
			fmt.Println(summary(strings.TrimPrefix(ev, "data: ")))
		}
	}

	stop()
	fmt.Println(<-served)
	http.DefaultClient.CloseIdleConnections()
	// Output:
	// text/event-stream
	// chat.completion.chunk spell {"role":"assistant","content":"h"} <nil>
	// chat.completion.chunk spell {"content":"e"} <nil>
	// chat.completion.chunk spell {"content":"y"} <nil>
	// chat.completion.chunk spell {} stop
	// [DONE]
	// <nil>
}

// summary prints the parts of a chunk that do not change between runs.
func summary(data string) string {
	var c struct {
		Object  string `json:"object"`
		Model   string `json:"model"`
		Choices []struct {
			Delta        json.RawMessage `json:"delta"`
			FinishReason *string         `json:"finish_reason"`
		} `json:"choices"`
	}
	if json.Unmarshal([]byte(data), &c) != nil || len(c.Choices) != 1 {
		return data
	}
	finish := "<nil>"
	if f := c.Choices[0].FinishReason; f != nil {
		finish = *f
	}
	return fmt.Sprintf("%s %s %s %s", c.Object, c.Model, c.Choices[0].Delta, finish)
}
