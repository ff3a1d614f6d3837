package worker

import (
	"context"
	"time"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/worker/process"
)

// Runner is what the registry asks of one started worker process, as
// go-plugin's runner.Runner is what its client asks of a plugin process.
// Package process's *Process is the real one; the registry's tests run an
// in-memory one, so that backoff, scaling and shutdown can be tested in
// virtual time.
type Runner interface {
	// Dispatch sends one request, or several as one dynamic batch, and
	// calls answer exactly once for each (see process.Process.Dispatch).
	// An error wrapping process.ErrNotSent means the requests never reached
	// the worker; one wrapping api.ErrPredictTimeout means the worker was
	// killed at its predict timeout.
	Dispatch(ctx context.Context, ins []*batching.Input, answer func(i int, resp *batching.Response, err error)) error
	// Track sends one rolling-batch request tagged with id and calls answer
	// exactly once, with the reply's first frame or the error that kept it
	// from one, then done once the request has ended on the worker (see
	// process.Process.Track). An error wrapping process.ErrNotSent means
	// the request never reached the worker.
	Track(ctx context.Context, id string, in *batching.Input, answer func(*batching.Response, error), done func())
	// WaitIdle blocks until the worker can take the next request: nothing
	// is outstanding on it (a stream still being read counts).
	WaitIdle(ctx context.Context) error
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
	InitProps() []batching.Prop
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
