package wire_test

import (
	"bytes"
	"fmt"

	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/worker/wire"
)

// Example sends a batch of two requests and splits the worker's reply.
func Example() {
	ins := []*message.Input{
		{Content: []message.Item{{Key: "data", Value: []byte("hello")}}},
		{Content: []message.Item{{Key: "data", Value: []byte("world")}}},
	}
	request, err := wire.AppendBatch(nil, ins)
	if err != nil {
		panic(err)
	}

	// A worker reads the batch and answers each request by its prefix.
	in, _ := wire.NewReader(bytes.NewReader(request), 0).ReadRequest()
	reply := &wire.Response{Code: 200, Message: "OK"}
	for _, it := range in.Content {
		reply.Content = append(reply.Content, message.Item{Key: it.Key, Value: bytes.ToUpper(it.Value)})
	}
	frame, _ := wire.AppendResponse(nil, reply)

	resp, _ := wire.NewReader(bytes.NewReader(frame), wire.DefaultMaxItem).ReadResponse()
	parts, _ := wire.SplitBatch(resp, len(ins))
	for i, p := range parts {
		fmt.Println(i, p.Code, string(p.Body))
	}
	// Output:
	// 0 200 HELLO
	// 1 200 WORLD
}

// ExampleReader_ReadChunk reads a streamed response.
func ExampleReader_ReadChunk() {
	frame, _ := wire.AppendResponse(nil, &wire.Response{Code: 200, Streaming: true})
	frame, _ = wire.AppendChunk(frame, []byte("Hel"), true)
	frame, _ = wire.AppendChunk(frame, []byte("lo"), true)
	frame, _ = wire.AppendStreamEnd(frame, "")

	r := wire.NewReader(bytes.NewReader(frame), 0)
	resp, _ := r.ReadResponse()
	fmt.Println("streaming:", resp.Streaming)
	for {
		data, more, err := r.ReadChunk()
		if err != nil || !more {
			fmt.Printf("end, error text %q\n", data)
			break
		}
		fmt.Printf("chunk %q\n", data)
	}
	// Output:
	// streaming: true
	// chunk "Hel"
	// chunk "lo"
	// end, error text ""
}
