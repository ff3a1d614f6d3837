package worker

import (
	"context"
	"time"

	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/worker/process"
)

// Runner is what the registry asks of one started worker process, as
// go-plugin's runner.Runner is what its client asks of a plugin process.
// Package process's *Process is the real one; the registry's tests run an
// in-memory one, so that backoff, scaling and shutdown can be tested in
// virtual time.
type Runner interface {
	// Dispatch sends one request, or several as one dynamic batch, and
	// returns once it is sent, so that the next batch may follow while the
	// worker runs this one (see process.Process.Dispatch). It calls answer
	// exactly once for each request, then done once the batch has ended on
	// the worker. An answer error wrapping process.ErrNotSent means the
	// request never reached the worker, or the worker never started it; a
	// done error wrapping api.ErrPredictTimeout means the worker was killed
	// at its predict timeout while it ran this batch.
	Dispatch(ctx context.Context, ins []*message.Input, answer func(i int, resp *message.Response, err error), done func(error)) error
	// Track sends one rolling-batch request tagged with id and calls answer
	// exactly once, with the reply's first frame or the error that kept it
	// from one, then done once the request has ended on the worker (see
	// process.Process.Track). An error wrapping process.ErrNotSent means
	// the request never reached the worker.
	Track(ctx context.Context, id string, in *message.Input, answer func(*message.Response, error), done func())
	// Done is closed once the process has exited; Err then says why.
	Done() <-chan struct{}
	Err() error
	// StderrTail returns the last lines the worker wrote on stderr.
	StderrTail() []string
	// Stop ends the worker and waits for it; requests still outstanding
	// fail.
	Stop(ctx context.Context) error
	// PID, Socket and Started describe the process for describe records;
	// InitProps are the properties of its reply to the initialization
	// request.
	PID() int
	Socket() string
	Started() time.Time
	InitProps() []message.Prop
}

// StartFunc starts one worker process for spec and returns it once it has
// loaded the model. On failure nothing of the process is left, and a
// *process.StartError may carry its last stderr lines.
type StartFunc func(ctx context.Context, spec process.Spec) (Runner, error)

// startProcess is the default StartFunc: a real worker process.
func startProcess(ctx context.Context, spec process.Spec) (Runner, error) {
	p, err := process.Start(ctx, spec)
	if err != nil {
		return nil, err // not a typed nil inside the interface
	}
	return p, nil
}

var _ Runner = (*process.Process)(nil)
