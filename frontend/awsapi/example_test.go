package awsapi_test

import (
	"fmt"
	"time"

	"github.com/switchyard/switchyard/frontend/awsapi"
)

// A Converse request becomes a chat request for the model's handler, and
// the handler's chat.completion becomes the Converse answer.
func Example() {
	req, err := awsapi.ChatFromConverse([]byte(`{
		"system": [{"text": "Answer in one word."}],
		"messages": [{"role": "user", "content": [{"text": "Which language is 'Guten Morgen'?"}]}],
		"inferenceConfig": {"maxTokens": 8}}`), false)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(req.Body))

	reply, err := awsapi.ReplyFromChat([]byte(`{"object": "chat.completion", "choices": [{"index": 0,
		"message": {"role": "assistant", "content": "German"}, "finish_reason": "stop"}],
		"usage": {"prompt_tokens": 12, "completion_tokens": 1, "total_tokens": 13}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(reply.ConverseJSON(3 * time.Millisecond)))
	// Output:
	// {"max_tokens":8,"messages":[{"content":"Answer in one word.","role":"system"},{"content":"Which language is 'Guten Morgen'?","role":"user"}],"stream":false}
	// {"output":{"message":{"role":"assistant","content":[{"text":"German"}]}},"stopReason":"end_turn","usage":{"inputTokens":12,"outputTokens":1,"totalTokens":13},"metrics":{"latencyMs":3}}
}

// Refusals name the field.
func ExampleChatFromConverse_refused() {
	_, err := awsapi.ChatFromConverse([]byte(`{"messages": [{"role": "user", "content": [{"text": "hi"}]}],
		"guardrailConfig": {"guardrailIdentifier": "g1", "guardrailVersion": "1"}}`), false)
	fmt.Println(err)
	// Output:
	// guardrailConfig: is not supported by switchyard's Converse
}

// A generation as ConverseStream events: each call returns the encoded
// event stream messages to send.
func ExampleConverseStream() {
	s := awsapi.NewConverseStream()
	var out []byte
	out = append(out, s.Text("Ger")...) // messageStart goes out with the first piece
	out = append(out, s.Text("man")...)
	out = append(out, s.Stop(awsapi.StopEndTurn, awsapi.Usage{InputTokens: 12, OutputTokens: 2}, time.Millisecond)...)
	fmt.Println(len(out) > 0)
	// Output:
	// true
}
