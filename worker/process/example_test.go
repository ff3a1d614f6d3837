package process_test

import (
	"context"
	"fmt"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/worker/process"
)

// ExampleStart starts a worker for one model folder, dispatches a request
// to it and stops it. (It needs a Python runtime, so it is compiled but not run.)
func ExampleStart() {
	ctx := context.Background()
	p, err := process.Start(ctx, process.Spec{
		Model:       "echo",
		ModelDir:    "/opt/ml/model/echo",
		Python:      "/usr/bin/python3",
		Engine:      "/var/cache/switchyard/runtime/switchyard_engine.py",
		PythonPath:  []string{"/var/cache/switchyard/runtime"},
		DeviceID:    -1,
		SocketDir:   "/tmp",
		InitProps:   []message.Prop{{Key: "entryPoint", Value: "model.py"}},
		LoadTimeout: 4 * time.Minute,
		Logger:      zap.NewExample(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Stop(ctx)

	in := &message.Input{
		Props:   []message.Prop{{Key: "content-type", Value: "text/plain"}},
		Content: []message.Item{{Key: "data", Value: []byte("hello")}},
	}
	ended := make(chan struct{})
	// Every request is answered through the callback exactly once, errors
	// included; it may run on the reading goroutine after Dispatch has
	// returned (Dispatch returns once the batch is written: the next one
	// may be sent while the worker runs this one). done runs once the batch
	// has ended on the worker.
	_ = p.Dispatch(ctx, []*message.Input{in}, func(_ int, resp *message.Response, err error) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(resp.Code, string(resp.Body))
	}, func(error) { close(ended) })
	<-ended
}

// ExampleProcess_Track streams the tokens of one rolling-batch request.
func ExampleProcess_Track() {
	var p *process.Process // started with Start for a rolling-batch model
	ended := make(chan struct{})
	defer func() { <-ended }() // last: the request has ended on the worker
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel() // leaving early cancels the request on the worker

	in := &message.Input{Content: []message.Item{{Key: "data", Value: []byte(`{"inputs":"Hi","stream":true}`)}}}
	first := make(chan *message.Response, 1)
	p.Track(ctx, "req-1", in, func(resp *message.Response, err error) {
		if err != nil {
			fmt.Println(err)
		}
		first <- resp // nil after an error
	}, func() { close(ended) })

	resp := <-first
	switch {
	case resp == nil:
		return
	case resp.Stream == nil:
		fmt.Println(string(resp.Body))
		return
	}
	for {
		tok, err := resp.Stream.Next(ctx)
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Print(string(tok))
	}
}
