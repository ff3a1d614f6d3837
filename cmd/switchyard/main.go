// Command switchyard is a multi-model inference server: it serves the model
// folders of a model store through DJL Serving's and SageMaker's HTTP
// contracts, one Python worker process per model worker. Its client
// subcommands talk to a running server's APIs.
package main

import (
	"context"
	"os"
)

func main() { os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr)) }
