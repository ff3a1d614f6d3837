package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/switchyard/switchyard/agent"
)

const agentInvokeSummary = `Sends {"prompt": TEXT} to a running agent runtime's POST /invocations and
prints the result; with --stream, asks for server-sent events and prints
the text as it arrives.`

// invoke calls a running runtime.
func (e agentEnv) invoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("agent invoke", "--prompt TEXT [flags]", agentInvokeSummary)
	prompt := fs.String("prompt", "", "the `text` to send (required)")
	base := fs.String("url", firstNonEmpty(e.getenv(envAgentURL), "http://"+defaultAgentAddress), "the runtime's base `URL`; $"+envAgentURL+" sets the default")
	stream := fs.Bool("stream", false, "print the answer's text as it is generated")
	timeout := fs.Duration("timeout", agent.DefaultTimeout+10*time.Second, "give up after this long; 0 waits forever")
	if _, err := parseArgs(fs, args, stdout, stderr, 0, ""); err != nil {
		return err
	}
	if *prompt == "" {
		return fmt.Errorf("%w: --prompt is required", errUsage)
	}
	if *timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, *timeout)
		defer cancel()
	}
	body, _ := json.Marshal(map[string]string{"prompt": *prompt})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(*base, "/")+"/invocations", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("%w: --url: %w", errUsage, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if *stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return fmt.Errorf("%w: %w", errUnreachable, err)
	}
	defer resp.Body.Close()
	return printAgentAnswer(resp, stdout)
}

// agentError is the runtime's error body.
type agentError struct {
	Error string `json:"error"`
	Type  string `json:"error_type"`
}

// printAgentAnswer prints a result, a stream's text, or the error.
func printAgentAnswer(resp *http.Response, stdout io.Writer) error {
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		var e agentError
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			return fmt.Errorf("%d: %s", resp.StatusCode, strings.TrimSpace(string(b)))
		}
		return fmt.Errorf("%d %s: %s", resp.StatusCode, e.Type, e.Error)
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return printEvents(resp.Body, stdout)
	}
	var out struct {
		Result *string `json:"result"`
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%w: %w", errBrokenAnswer, err)
	}
	if json.Unmarshal(b, &out) != nil || out.Result == nil {
		return fmt.Errorf("%w: no result in %q", errBadAnswer, b)
	}
	_, err = fmt.Fprintln(stdout, *out.Result)
	return err
}

// printEvents prints each event's text as it arrives; an error event ends
// the answer with that error.
func printEvents(body io.Reader, stdout io.Writer) error {
	err := agent.ReadStream(body, func(text string) error {
		_, err := fmt.Fprint(stdout, text)
		return err
	})
	fmt.Fprintln(stdout)
	var broken *agent.StreamError
	switch {
	case errors.As(err, &broken):
		return fmt.Errorf("%w: %s: %s", errBrokenAnswer, broken.Type, broken.Message)
	case err != nil:
		return fmt.Errorf("%w: %w", errBadAnswer, err)
	}
	return nil
}

const agentCreateSummary = `Writes a new course folder NAME (in --dir) holding course.json: the tool's
name, the description the reasoning model reads, the system prompt the small
model was trained with, max_tokens (256 for extraction and classification,
512 for summarization and domain QA), the reasoning model's system prompt
and a sample text. NAME: letters and digits only, at most 23 characters.`

// create writes a course folder from a template.
func (e agentEnv) create(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("agent create", "NAME [flags]", agentCreateSummary)
	dir := fs.String("dir", ".", "the `folder` to create the course folder in")
	from := fs.String("from", agent.DefaultCourse, "the `course` to start from: "+joinCourses()+", or a course folder")
	pos, err := parseArgs(fs, args, stdout, stderr, 1, "a course name")
	if err != nil {
		return err
	}
	tmpl, err := agent.LoadCourse(*from)
	if err != nil {
		return err
	}
	path, err := agent.CreateCourse(*dir, pos[0], tmpl)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Wrote %s (from the course %s).\nEdit its tool, description, system_prompt and max_tokens; then run it: switchyard agent serve --course %s\n",
		path, tmpl.Name, strings.TrimSuffix(path, "/"+agent.CourseFile))
	return nil
}

const agentVerifySummary = `Makes one real tool call to the small model's endpoint ENDPOINT, in REGION
(default $CLOUD_REGION): the course's system prompt and a text, in the chat
schema, through SageMaker Runtime InvokeEndpoint, as the agent's tool does.
Prints the answer and how long the call took.`

// verifyLocal makes one tool call and reports the answer and its latency.
func (e agentEnv) verifyLocal(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("agent verify-local", "ENDPOINT [REGION] [flags]", agentVerifySummary)
	course := fs.String("course", "", "the `course` whose tool to call; default $"+agent.EnvCourse+", else "+agent.DefaultCourse)
	target := fs.String("target-model", "", "TargetModel `name` on a multi-model endpoint; default $"+agent.EnvTargetModel)
	text := fs.String("text", "", "the `text` to send; default: the course's sample")
	pos, err := parseInterleaved(fs, args, stdout, stderr)
	if err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 || pos[0] == "" {
		return fmt.Errorf("%w: verify-local needs ENDPOINT and takes an optional REGION, got %q", errUsage, pos)
	}
	region := e.getenv(agent.EnvCloudRegion)
	if len(pos) == 2 {
		region = pos[1]
	}
	c, err := agent.LoadCourse(firstNonEmpty(*course, e.getenv(agent.EnvCourse), agent.DefaultCourse))
	if err != nil {
		return err
	}
	client, err := agent.NewEndpointClient(ctx, region)
	if err != nil {
		return err
	}
	if agent.InCloud(client.Options().BaseEndpoint) {
		fmt.Fprint(stdout, agent.Billable{Endpoint: pos[0], EndpointRegion: client.Options().Region}.Notice(""))
	}
	tool := agent.Tool{API: client, Endpoint: pos[0], TargetModel: firstNonEmpty(*target, e.getenv(agent.EnvTargetModel)), Course: c}
	sent := firstNonEmpty(*text, c.Sample)
	start := time.Now()
	answer, err := tool.Call(ctx, sent)
	took := time.Since(start)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Endpoint:  %s (%s, %s)\nTool:      %s (course %s, max_tokens %d)\nSent:      %q\nAnswer:    %s\nLatency:   %d ms\n",
		pos[0], endpointOf(client.Options().BaseEndpoint), client.Options().Region, c.Tool, c.Name, c.MaxTokens, sent, answer, took.Milliseconds())
	return nil
}
