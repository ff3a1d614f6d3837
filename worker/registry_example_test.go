package worker_test

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/gpu"
	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/properties"
	"github.com/switchyard/switchyard/pyruntime"
	"github.com/switchyard/switchyard/worker"
)

// ExampleRegistry registers a model folder of the store, sends it one
// request, scales it and shuts the registry down. (It needs a Python
// runtime, so it is compiled but not run.)
func ExampleRegistry() {
	srv := properties.DefaultServer()
	srv.ModelStore = "/opt/ml/model"
	rt, err := pyruntime.Unpack(pyruntime.DefaultCacheDir())
	if err != nil {
		fmt.Println(err)
		return
	}
	reg, err := worker.NewRegistry(worker.Config{
		Server: srv, Engine: rt.Engine, PythonPath: []string{rt.PythonPath},
		GPU: gpu.CPUOnly(), Logger: zap.NewExample(),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), srv.ShutdownGrace)
		defer cancel()
		_ = reg.Shutdown(ctx) // queued requests get 503, workers stop
	}()

	ctx := context.Background()
	if _, err := reg.Register(ctx, api.RegisterRequest{URL: "echo", Synchronous: true}); err != nil {
		fmt.Println(err)
		return
	}
	in := message.Input{Content: []message.Item{{Key: "data", Value: []byte("hello")}}}
	job := batching.NewJob("req-1", in, time.Now(), time.Time{})
	if err := reg.Submit("echo", job); err != nil {
		fmt.Println(err)
		return
	}
	if resp, err := job.Wait(ctx); err == nil {
		fmt.Println(resp.Code, string(resp.Body))
	}

	// Two permanent workers from now on, at most four with temporary ones.
	err = reg.Scale(ctx, "echo", api.ScaleRequest{MinWorker: ptrTo(2), MaxWorker: ptrTo(4), Synchronous: true})
	fmt.Println(err, reg.Health()["echo"].Status)
}

func ptrTo(n int) *int { return &n }
