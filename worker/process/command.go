package process

import (
	"strconv"
	"strings"

	"github.com/switchyard/switchyard/message"
)

// workerLogLevel is the --log-level of the workers: the server's level, in
// lower case, "info" when it has none (DJL passes "debug" or "info").
func workerLogLevel(level string) string {
	if level == "" {
		return "info"
	}
	return strings.ToLower(level)
}

// asyncFlag is the last argument of a worker's command line.
func asyncFlag(async bool) string {
	if async {
		return "--async-mode"
	}
	return "--no-async-mode"
}

// commandLine is a worker's argument list after the interpreter: DJL 0.36's,
// argument for argument (Connection.getPythonStartCmd, the non-MPI case on
// a Unix socket), so that DJL's own djl_python_engine.py can be the engine.
func commandLine(s Spec, sock string) []string {
	return []string{s.Engine,
		"--sock-type", "unix",
		"--sock-name", sock,
		"--model-dir", s.ModelDir,
		"--entry-point", s.EntryPoint,
		"--device-id", strconv.Itoa(s.DeviceID),
		"--cluster-size", "1",
		"--recommended-entry-point", s.Recommended,
		"--log-level", workerLogLevel(s.LogLevel),
		asyncFlag(s.AsyncMode),
	}
}

// HandlerKey is the property that names the handler function a request is
// for.
const HandlerKey = "handler"

// defaultHandler is the handler function of a model that names none.
const defaultHandler = "handle"

// handlerProp is what a request frame adds to in's properties: the handler
// function, when in names none (nil in: a batch, whose own properties never
// do). DJL's front-end names it on every request, the initialization
// included, and DJL's engine calls getattr(module, handler) with it.
func (p *Process) handlerProp(in *message.Input) []message.Prop {
	if in != nil {
		for _, pr := range in.Props {
			if pr.Key == HandlerKey {
				return nil
			}
		}
	}
	return p.handler
}
