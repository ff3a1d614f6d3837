package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

var (
	errNoDone   = errors.New("chatbench: the stream ended without data: [DONE]")
	errNoUsage  = errors.New("chatbench: the answer has no usage")
	errInStream = errors.New("chatbench: the stream reported an error")
)

// bench sends the requests of one run.
type bench struct {
	cfg    config
	client *http.Client
}

// sample is one request's timing.
type sample struct {
	ttfb, total time.Duration
	tokens      int
}

// chatRequest is the body of every request.
type chatRequest struct {
	Model         string         `json:"model"`
	Messages      []message      `json:"messages"`
	MaxTokens     int            `json:"max_tokens"`
	Temperature   float64        `json:"temperature"`
	Stream        bool           `json:"stream"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// usageOf is the part of a chat.completion or chunk that counts tokens.
type usageOf struct {
	Usage *struct {
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// body returns the JSON of a request: an agent's temperature 0.1, and
// usage in the stream so that the tokens can be counted.
func (b *bench) body(stream bool) []byte {
	req := chatRequest{
		Model: b.cfg.model, Messages: []message{{Role: "user", Content: b.cfg.question}},
		MaxTokens: b.cfg.tokens, Temperature: 0.1, Stream: stream,
	}
	if stream {
		req.StreamOptions = &streamOptions{IncludeUsage: true}
	}
	out, _ := json.Marshal(req)
	return out
}

// once sends one chat request and times its first byte and its end.
func (b *bench) once(ctx context.Context, stream bool) (sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.cfg.url+"/v1/chat/completions", bytes.NewReader(b.body(stream)))
	if err != nil {
		return sample{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := b.client.Do(req)
	if err != nil {
		return sample{}, err
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if _, err := br.Peek(1); err != nil {
		return sample{}, fmt.Errorf("chatbench: no body (status %d): %w", resp.StatusCode, err)
	}
	s := sample{ttfb: time.Since(start)}
	if resp.StatusCode != http.StatusOK {
		text, _ := io.ReadAll(br)
		return s, fmt.Errorf("chatbench: status %d: %s", resp.StatusCode, bytes.TrimSpace(text))
	}
	if stream {
		s.tokens, err = streamTokens(br)
	} else {
		s.tokens, err = wholeTokens(br)
	}
	s.total = time.Since(start)
	return s, err
}

// streamTokens reads an event stream to data: [DONE] and returns the
// completion tokens of its usage chunk.
func streamTokens(r io.Reader) (int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	tokens := -1
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		if data == "[DONE]" {
			return counted(tokens)
		}
		var u usageOf
		if err := json.Unmarshal([]byte(data), &u); err != nil {
			return 0, fmt.Errorf("chatbench: event %q: %w", data, err)
		}
		if len(u.Error) > 0 && string(u.Error) != "null" {
			return 0, fmt.Errorf("%w: %s", errInStream, u.Error)
		}
		if u.Usage != nil {
			tokens = u.Usage.CompletionTokens
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, errNoDone
}

// wholeTokens reads a chat.completion and returns its completion tokens.
func wholeTokens(r io.Reader) (int, error) {
	var u usageOf
	if err := json.NewDecoder(r).Decode(&u); err != nil {
		return 0, fmt.Errorf("chatbench: the answer is not JSON: %w", err)
	}
	if u.Usage == nil {
		return 0, errNoUsage
	}
	return u.Usage.CompletionTokens, nil
}

func counted(tokens int) (int, error) {
	if tokens < 0 {
		return 0, errNoUsage
	}
	return tokens, nil
}
