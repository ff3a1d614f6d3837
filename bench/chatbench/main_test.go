package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeChat answers chat requests like switchyard's OpenAI route: a stream
// of one event per token plus a usage chunk, or a whole chat.completion.
// It records every request body.
type fakeChat struct {
	bodies atomic.Int64
	broken bool // streams end with an error chunk
	status int  // a non-zero status answers every request with it
}

func (f *fakeChat) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req chatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/v1/chat/completions" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	f.bodies.Add(1)
	if f.status != 0 {
		http.Error(w, `{"code":503,"message":"busy"}`, f.status)
		return
	}
	if !req.Stream {
		fmt.Fprintf(w, `{"object":"chat.completion","usage":{"prompt_tokens":3,"completion_tokens":%d}}`, req.MaxTokens)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for i := range req.MaxTokens {
		fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"t%d\"}}]}\n\n", i)
	}
	if f.broken {
		fmt.Fprint(w, "data: {\"choices\":[],\"error\":{\"message\":\"worker died\"}}\n\n")
	} else if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		fmt.Fprintf(w, "data: {\"choices\":[],\"usage\":{\"completion_tokens\":%d}}\n\n", req.MaxTokens)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func runAgainst(t *testing.T, f *fakeChat, args ...string) (int, string, string) {
	t.Helper()
	srv := httptest.NewServer(f)
	defer srv.Close()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"-url", srv.URL}, args...), &out, &errOut)
	return code, out.String(), errOut.String()
}

func TestRun(t *testing.T) {
	f := &fakeChat{}
	code, out, errOut := runAgainst(t, f, "-tokens", "7", "-runs", "3", "-concurrency", "1,4", "-requests", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"max_tokens 7, 3 runs", "streamed      time to first byte", "not streamed  time to first byte",
		"14 tokens in", "56 tokens in", "(8 streams", "concurrency 4 vs 1:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// warm-up 1, first bytes 3+3, levels 1*2 + 4*2
	if n := f.bodies.Load(); n != 17 {
		t.Errorf("%d requests sent, want 17", n)
	}
}

func TestRunFailures(t *testing.T) {
	cases := []struct {
		name string
		f    *fakeChat
		args []string
		code int
		want string
	}{
		{"error in the stream", &fakeChat{broken: true}, nil, 1, "worker died"},
		{"error status", &fakeChat{status: 503}, nil, 1, "status 503"},
		{"bad level", &fakeChat{}, []string{"-concurrency", "1,x"}, 2, "-concurrency"},
		{"zero tokens", &fakeChat{}, []string{"-tokens", "0"}, 2, "positive"},
		{"stray argument", &fakeChat{}, []string{"extra"}, 2, "no arguments"},
		{"help", &fakeChat{}, []string{"-h"}, 0, "-concurrency"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := runAgainst(t, c.f, append([]string{"-runs", "1", "-tokens", "2"}, c.args...)...)
			if code != c.code || !strings.Contains(errOut, c.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", code, c.code, errOut, c.want)
			}
		})
	}
}

func TestStreamTokens(t *testing.T) {
	cases := []struct {
		name, body string
		tokens     int
		err        error
	}{
		{"usage", "data: {}\n\ndata: {\"usage\":{\"completion_tokens\":5}}\n\ndata: [DONE]\n\n", 5, nil},
		{"null usage then usage", "data: {\"usage\":null}\n\ndata: {\"usage\":{\"completion_tokens\":2}}\n\ndata: [DONE]\n\n", 2, nil},
		{"no usage", "data: {}\n\ndata: [DONE]\n\n", 0, errNoUsage},
		{"no done", "data: {\"usage\":{\"completion_tokens\":5}}\n\n", 0, errNoDone},
		{"error", "data: {\"error\":{\"message\":\"x\"}}\n\ndata: [DONE]\n\n", 0, errInStream},
		{"null error", "data: {\"error\":null,\"usage\":{\"completion_tokens\":1}}\n\ndata: [DONE]\n\n", 1, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := streamTokens(strings.NewReader(c.body))
			if n != c.tokens || !errors.Is(err, c.err) {
				t.Errorf("streamTokens = %d, %v; want %d, %v", n, err, c.tokens, c.err)
			}
		})
	}
}

func TestWholeTokens(t *testing.T) {
	cases := []struct {
		name, body string
		tokens     int
		ok         bool
	}{
		{"usage", `{"usage":{"completion_tokens":9}}`, 9, true},
		{"no usage", `{"choices":[]}`, 0, false},
		{"not JSON", `<html>`, 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, err := wholeTokens(strings.NewReader(c.body))
			if n != c.tokens || (err == nil) != c.ok {
				t.Errorf("wholeTokens = %d, %v", n, err)
			}
		})
	}
}

// FuzzStreamTokens checks that any body either yields a count, only when
// it has a data: [DONE] line, or an error and no count.
func FuzzStreamTokens(f *testing.F) {
	f.Add("data: {\"usage\":{\"completion_tokens\":5}}\n\ndata: [DONE]\n\n")
	f.Add("data: {\"error\":1}\ndata: [DONE]")
	f.Add("event: x\n\ndata: [DONE]")
	f.Fuzz(func(t *testing.T, body string) {
		n, err := streamTokens(strings.NewReader(body))
		if err == nil && (!strings.Contains(body, "data: [DONE]") || n < 0) {
			t.Fatalf("%q counted %d tokens", body, n)
		}
		if err != nil && n != 0 {
			t.Fatalf("%d tokens with error %v", n, err)
		}
	})
}
