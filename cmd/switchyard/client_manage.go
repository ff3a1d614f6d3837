package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
)

// registerParams are register's count flags and the POST /models
// parameters they set.
var registerParams = []countParam{
	{"batch-size", "batch_size", "dynamic batch size `N` (batch_size)"},
	{"max-batch-delay", "max_batch_delay", "wait up to `MS` milliseconds to fill a batch (max_batch_delay)"},
	{"max-idle-time", "max_idle_time", "stop a temporary worker idle for `S` seconds (max_idle_time)"},
	{"queue-size", "job_queue_size", "hold at most `N` queued requests (job_queue_size)"},
	{"min-worker", "min_worker", "start and keep `N` workers (min_worker)"},
	{"max-worker", "max_worker", "scale up to `N` workers (max_worker)"},
}

// scaleParams are scale's count flags and the PUT /models/{name}
// parameters they set.
var scaleParams = []countParam{
	{"min", "min_worker", "keep at least `N` workers (min_worker)"},
	{"max", "max_worker", "scale up to `N` workers (max_worker)"},
}

// register registers a model: POST /models with query parameters.
func (e clientEnv) register(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("register", "URL [flags]",
		"Registers the model folder at URL (a folder of the model store, or a path inside the\n"+
			"server's allowed_model_roots; only local folders) and, unless --async, waits until\n"+
			"it is loaded.")
	f := e.addManagementFlags(fs, loadTimeout)
	name := fs.String("name", "", "model `NAME` (default: the last element of URL)")
	async := fs.Bool("async", false, "answer once the load is scheduled (synchronous=false)")
	counts := addCounts(fs, registerParams)
	pos, err := parseArgs(fs, args, stdout, stderr, 1, "a model URL")
	if err != nil {
		return err
	}
	q := url.Values{"url": {pos[0]}}
	if *name != "" {
		q.Set("model_name", *name)
	}
	setCounts(q, counts)
	setAsync(q, *async)
	return manage(ctx, f, stdout, http.MethodPost, q, "models")
}

// scale changes a model's worker counts: PUT /models/{name}.
func (e clientEnv) scale(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("scale", "NAME [--min N] [--max N] [flags]",
		"Changes a model's worker counts and, unless --async, waits until the workers are there.")
	f := e.addManagementFlags(fs, loadTimeout)
	async := fs.Bool("async", false, "answer once the change is scheduled (synchronous=false)")
	counts := addCounts(fs, scaleParams)
	pos, err := parseArgs(fs, args, stdout, stderr, 1, "a model name")
	if err != nil {
		return err
	}
	q := url.Values{}
	if setCounts(q, counts) == 0 {
		return fmt.Errorf("%w: scale needs --min, --max or both", errUsage)
	}
	setAsync(q, *async)
	return manage(ctx, f, stdout, http.MethodPut, q, "models", pos[0])
}

// unregister unregisters a model: DELETE /models/{name}.
func (e clientEnv) unregister(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("unregister", "NAME [flags]",
		"Unregisters a model: its workers stop and its queued requests get 503.")
	f := e.addManagementFlags(fs, defaultTimeout)
	pos, err := parseArgs(fs, args, stdout, stderr, 1, "a model name")
	if err != nil {
		return err
	}
	return manage(ctx, f, stdout, http.MethodDelete, nil, "models", pos[0])
}

// setAsync asks for an answer once the work is scheduled.
func setAsync(q url.Values, async bool) {
	if async {
		q.Set("synchronous", "false")
	}
}

// manage makes one management request and prints the status message of
// its answer, or the answer as is with --json.
func manage(ctx context.Context, f *managementFlags, stdout io.Writer, method string, q url.Values, segs ...string) error {
	c, err := f.client()
	if err != nil {
		return err
	}
	defer c.close()
	body, err := c.call(ctx, method, q, segs...)
	if err != nil {
		return err
	}
	if f.json {
		return writeRaw(stdout, body)
	}
	_, err = fmt.Fprintln(stdout, statusMessage(body))
	return err
}

// statusMessage returns the "status" of a {"status": "..."} answer, or the
// answer's text when it has another shape.
func statusMessage(body []byte) string {
	var answer struct {
		Status string `json:"status"`
	}
	if json.Unmarshal(body, &answer) == nil && answer.Status != "" {
		return answer.Status
	}
	return oneLine(body, maxErrorText)
}
