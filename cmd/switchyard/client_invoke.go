package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"
)

// invokeFlags are the flags of invoke.
type invokeFlags struct {
	base        string
	timeout     time.Duration
	data        string
	contentType string
	headers     headerList
	stream      bool
}

// addInvokeFlags declares invoke's flags on fs.
func (e clientEnv) addInvokeFlags(fs *flag.FlagSet) *invokeFlags {
	f := &invokeFlags{}
	fs.StringVar(&f.base, "inference-url", e.envOr(envInferenceURL, defaultInferenceURL),
		"inference API base `URL`; $"+envInferenceURL+" sets the default")
	fs.DurationVar(&f.timeout, "timeout", defaultTimeout, "give up after this long, reading the answer included; 0 waits forever")
	fs.StringVar(&f.data, "data", "", "request body `DATA`: the text itself, @FILE for a file's bytes, @- for standard input")
	fs.StringVar(&f.contentType, "content-type", "", "Content-Type `TYPE` of the body (default: application/json for JSON, else sniffed from the bytes)")
	fs.Var(&f.headers, "header", "add the request header `'Key: Value'` (repeatable)")
	fs.BoolVar(&f.stream, "stream", false, "print the answer piece by piece as it arrives")
	return f
}

// invoke sends a request to a model, POST /predictions/{name}, and prints
// the answer's body.
func (e clientEnv) invoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("invoke", "NAME [--data JSON | --data @FILE | --data @-] [flags]",
		"Sends a request to a model and prints the answer's body as it is.")
	f := e.addInvokeFlags(fs)
	pos, err := parseArgs(fs, args, stdout, stderr, 1, "a model name")
	if err != nil {
		return err
	}
	c, err := newAPIClient(f.base, f.timeout, "--inference-url or $"+envInferenceURL)
	if err != nil {
		return err
	}
	defer c.close()
	body, err := readData(f.data, e.stdin)
	if err != nil {
		return err
	}
	req, err := c.newRequest(ctx, http.MethodPost, nil, bytes.NewReader(body), "predictions", pos[0])
	if err != nil {
		return err
	}
	setInvokeHeaders(req, body, f)
	return c.predict(req, stdout, f.stream)
}

// readData returns the body --data names: nothing, a file's bytes
// ("@path"), standard input ("@-"), or the text itself.
func readData(data string, stdin io.Reader) ([]byte, error) {
	switch {
	case data == "":
		return nil, nil
	case data == "@-":
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("--data @-: reading standard input: %w", err)
		}
		return b, nil
	case strings.HasPrefix(data, "@"):
		b, err := os.ReadFile(data[1:])
		if err != nil {
			return nil, fmt.Errorf("--data: %w", err)
		}
		return b, nil
	default:
		return []byte(data), nil
	}
}

// setInvokeHeaders sets the body's Content-Type, then the --header fields.
// A --header Content-Type replaces the first; Host sets the request's host.
func setInvokeHeaders(req *http.Request, body []byte, f *invokeFlags) {
	if ct := contentType(body, f.contentType); ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	for _, h := range f.headers {
		switch http.CanonicalHeaderKey(h.key) {
		case "Host":
			req.Host = h.value
		case "Content-Type":
			req.Header.Set(h.key, h.value)
		default:
			req.Header.Add(h.key, h.value)
		}
	}
}

// contentType returns the Content-Type for body: the one given, none for
// an empty body, application/json for valid JSON, else a sniffed one
// (text/plain for text, application/octet-stream for unknown bytes).
func contentType(body []byte, given string) string {
	switch {
	case given != "":
		return given
	case len(body) == 0:
		return ""
	case json.Valid(body):
		return "application/json"
	default:
		return http.DetectContentType(body)
	}
}

// predict sends an inference request and writes the answer's body to w:
// all at once when it is complete, or, with stream, each piece as it
// arrives. A body that breaks off is an error either way.
func (c *apiClient) predict(req *http.Request, w io.Writer, stream bool) error {
	resp, err := c.send(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if stream {
		return c.copyAnswer(w, resp.Body)
	}
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return c.bodyError(err)
	}
	_, err = w.Write(body)
	return err
}

// copyAnswer copies an answer's body to w as it arrives.
func (c *apiClient) copyAnswer(w io.Writer, body io.Reader) error {
	buf := make([]byte, 32<<10)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return werr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return c.bodyError(err)
		}
	}
}
