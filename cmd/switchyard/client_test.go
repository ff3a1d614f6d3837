package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"
)

// seen is one request the fake API received.
type seen struct {
	Method string
	Path   string // escaped, as sent
	Query  url.Values
	Header http.Header
	Body   string
}

// reply is one answer the fake API gives.
type reply struct {
	status int
	body   string
	header map[string]string
}

// fakeAPI is an HTTP server that records each request and answers with the
// next reply of its script.
type fakeAPI struct {
	*httptest.Server
	mu  sync.Mutex
	got []seen
}

// newFakeAPI starts a fake API answering with replies in order; it stops
// when the test ends, and the test then checks that no goroutine leaked.
func newFakeAPI(t *testing.T, replies ...reply) *fakeAPI {
	t.Helper()
	noLeaks(t)
	f := &fakeAPI{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := f.record(r)
		if i >= len(replies) {
			t.Errorf("unexpected request %d: %s %s", i+1, r.Method, r.URL)
			http.Error(w, "unexpected request", http.StatusInternalServerError)
			return
		}
		for k, v := range replies[i].header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(replies[i].status)
		_, _ = io.WriteString(w, replies[i].body)
	}))
	t.Cleanup(f.Close)
	return f
}

// record stores r and returns its index.
func (f *fakeAPI) record(r *http.Request) int {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.got = append(f.got, seen{r.Method, r.URL.EscapedPath(), r.URL.Query(), r.Header.Clone(), string(body)})
	return len(f.got) - 1
}

// requests returns the requests received so far.
func (f *fakeAPI) requests() []seen {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]seen(nil), f.got...)
}

// noLeaks checks, when the test ends, that the goroutines it started are gone.
func noLeaks(t *testing.T) {
	t.Helper()
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() { goleak.VerifyNone(t, before) })
}

// cli runs one command line as main does and returns the exit code and
// what was printed.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = run(t.Context(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// want is what a command line should do against the fake API.
type want struct {
	code   int
	stdout string
	stderr string // exact, unless has is set
	has    string // a part of stderr
	reqs   []seen // Method, Path and Query are compared; Header and Body when set
}

// check compares the outcome of a command with w.
func (w want) check(t *testing.T, f *fakeAPI, code int, stdout, stderr string) {
	t.Helper()
	if code != w.code {
		t.Errorf("exit code %d, want %d (stderr %q)", code, w.code, stderr)
	}
	if stdout != w.stdout {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, w.stdout)
	}
	switch {
	case w.has != "" && !strings.Contains(stderr, w.has):
		t.Errorf("stderr %q does not contain %q", stderr, w.has)
	case w.has == "" && stderr != w.stderr:
		t.Errorf("stderr %q, want %q", stderr, w.stderr)
	}
	if f != nil {
		checkRequests(t, f.requests(), w.reqs)
	}
}

// checkRequests compares the requests received with the ones wanted.
func checkRequests(t *testing.T, got, want []seen) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d requests, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		g := got[i]
		if g.Method != w.Method || g.Path != w.Path || !reflect.DeepEqual(g.Query, orEmpty(w.Query)) {
			t.Errorf("request %d: %s %s %v, want %s %s %v", i, g.Method, g.Path, g.Query, w.Method, w.Path, w.Query)
		}
		if w.Body != "" && g.Body != w.Body {
			t.Errorf("request %d: body %q, want %q", i, g.Body, w.Body)
		}
		for k := range w.Header {
			if !reflect.DeepEqual(g.Header.Values(k), w.Header.Values(k)) {
				t.Errorf("request %d: header %s = %q, want %q", i, k, g.Header.Values(k), w.Header.Values(k))
			}
		}
	}
}

// orEmpty returns q, or an empty set for nil, as a server parses no query.
func orEmpty(q url.Values) url.Values {
	if q == nil {
		return url.Values{}
	}
	return q
}

func TestFlagErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		has  string
	}{
		{"models takes no argument", []string{"models", "x"}, "models takes no arguments"},
		{"describe needs a name", []string{"describe"}, "describe needs a model name"},
		{"describe takes one name", []string{"describe", "a", "b"}, `got also "b"`},
		{"empty name", []string{"describe", ""}, "argument 1 is empty"},
		{"unknown flag", []string{"describe", "a", "--nope"}, "flag provided but not defined: -nope"},
		{"register needs a url", []string{"register", "--name", "a"}, "register needs a model URL"},
		{"negative count", []string{"register", "/m", "--batch-size", "-1"}, "not a non-negative integer"},
		{"count not a number", []string{"register", "/m", "--min-worker=x"}, "not a non-negative integer"},
		{"scale needs counts", []string{"scale", "a"}, "scale needs --min, --max or both"},
		{"scale old flag name", []string{"scale", "a", "--min-worker", "1"}, "not defined: -min-worker"},
		{"unregister needs a name", []string{"unregister"}, "unregister needs a model name"},
		{"invoke needs a name", []string{"invoke", "--data", "{}"}, "invoke needs a model name"},
		{"header without colon", []string{"invoke", "a", "--header", "X-A=1"}, `header "X-A=1" is not Key: Value`},
		{"header bad name", []string{"invoke", "a", "--header", "X A: 1"}, `header name "X A" is not valid`},
		{"negative timeout", []string{"models", "--timeout", "-1s"}, "--timeout must not be negative"},
		{"bad duration", []string{"models", "--timeout", "soon"}, "invalid value"},
		{"url scheme", []string{"models", "--url", "ftp://h"}, `URL "ftp://h" is not http or https`},
		{"url without host", []string{"describe", "a", "--url", "http://"}, "has no host"},
		{"inference url", []string{"invoke", "a", "--inference-url", "unix:///s"}, "--inference-url or $SWITCHYARD_INFERENCE_URL"},
		{"invoke has no --json", []string{"invoke", "a", "--json"}, "not defined: -json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, stdout, stderr := cli(t, tt.args...)
			want{code: exitUsage, has: tt.has}.check(t, nil, code, stdout, stderr)
			if prefix := "switchyard " + tt.args[0] + ": usage: "; !strings.Contains(stderr, prefix) {
				t.Errorf("stderr %q lacks %q", stderr, prefix)
			}
		})
	}
}

func TestHelp(t *testing.T) {
	tests := []struct{ cmd, synopsis, flag string }{
		{"models", "usage: switchyard models [flags]", "-url"},
		{"describe", "usage: switchyard describe NAME [flags]", "-json"},
		{"register", "usage: switchyard register URL [flags]", "-max-batch-delay"},
		{"scale", "usage: switchyard scale NAME [--min N] [--max N] [flags]", "-async"},
		{"unregister", "usage: switchyard unregister NAME [flags]", "-timeout"},
		{"invoke", "usage: switchyard invoke NAME [--data JSON | --data @FILE | --data @-] [flags]", "-inference-url"},
		{"serve", "usage: switchyard serve [flags]", "-allowed-model-roots"},
		{"version", "usage: switchyard version ", "Prints the version"},
	}
	for _, tt := range tests {
		for _, args := range [][]string{{tt.cmd, "-h"}, {tt.cmd, "--help"}, {"help", tt.cmd}} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, stdout, stderr := cli(t, args...)
				if code != exitOK || stderr != "" {
					t.Errorf("exit %d, stderr %q; want 0 and nothing", code, stderr)
				}
				if !strings.HasPrefix(stdout, tt.synopsis) || !strings.Contains(stdout, tt.flag) {
					t.Errorf("help %q lacks %q or %q", stdout, tt.synopsis, tt.flag)
				}
			})
		}
	}
}

func TestConnectionRefused(t *testing.T) {
	noLeaks(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args    []string
		setting string
	}{
		{[]string{"models", "--url", addr}, "--url or $SWITCHYARD_MANAGEMENT_URL"},
		{[]string{"invoke", "m", "--inference-url", "http://" + addr}, "--inference-url or $SWITCHYARD_INFERENCE_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.args[0], func(t *testing.T) {
			code, stdout, stderr := cli(t, tt.args...)
			msg := "switchyard " + tt.args[0] + ": cannot reach the server at http://" + addr +
				": connection refused (is the server running there? set " + tt.setting + ")\n"
			want{code: exitError, stderr: msg}.check(t, nil, code, stdout, stderr)
		})
	}
}

func TestTimeout(t *testing.T) {
	noLeaks(t)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // never answers; returns when the client gives up
	}))
	defer srv.Close()
	code, stdout, stderr := cli(t, "describe", "m", "--url", srv.URL, "--timeout", "1ms")
	msg := "switchyard describe: timed out: " + srv.URL + " did not answer within 1ms (see --timeout)\n"
	want{code: exitError, stderr: msg}.check(t, nil, code, stdout, stderr)
}

func TestDefaultURLFromEnvironment(t *testing.T) {
	f := newFakeAPI(t, reply{status: 200, body: `{"models": []}`}, reply{status: 200, body: "ok"})
	env := map[string]string{envManagementURL: f.URL, envInferenceURL: f.URL + "/inference/"}
	e := clientEnv{getenv: func(k string) string { return env[k] }, stdin: strings.NewReader("")}
	var out, errb bytes.Buffer
	if err := e.commands()["models"](t.Context(), nil, &out, &errb); err != nil {
		t.Fatalf("models: %v", err)
	}
	if err := e.commands()["invoke"](t.Context(), []string{"m"}, &out, &errb); err != nil {
		t.Fatalf("invoke: %v", err)
	}
	checkRequests(t, f.requests(), []seen{
		{Method: "GET", Path: "/models", Query: url.Values{"limit": {"100"}}},
		{Method: "POST", Path: "/inference/predictions/m"},
	})
	if got := out.String(); got != "ok" {
		t.Errorf("stdout %q, want the invoke answer only", got)
	}
}

func TestEnvOr(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"unset", nil, defaultManagementURL},
		{"empty", map[string]string{envManagementURL: ""}, defaultManagementURL},
		{"set", map[string]string{envManagementURL: "http://h:1"}, "http://h:1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := clientEnv{getenv: func(k string) string { return tt.env[k] }}
			if got := e.envOr(envManagementURL, defaultManagementURL); got != tt.want {
				t.Errorf("envOr = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestManagementToken sends the management commands with the token from
// --token, from $SWITCHYARD_MANAGEMENT_TOKEN (the flag wins), and without
// one; invoke, which talks to the inference API, never sends it, and -h
// never shows it.
func TestManagementToken(t *testing.T) {
	f := newFakeAPI(t,
		reply{status: 200, body: `{"models": []}`}, reply{status: 200, body: `{"models": []}`},
		reply{status: 200, body: `{"models": []}`}, reply{status: 200, body: "ok"})
	env := map[string]string{envManagementURL: f.URL, envInferenceURL: f.URL, envManagementToken: "from-env"}
	e := clientEnv{getenv: func(k string) string { return env[k] }, stdin: strings.NewReader("")}
	var out, errb bytes.Buffer
	steps := []struct {
		cmd  string
		args []string
	}{
		{"models", []string{"--token", "from-flag"}},
		{"models", nil},
		{"models", []string{"--token", ""}},
		{"invoke", []string{"m"}},
	}
	for _, s := range steps {
		if len(s.args) == 2 && s.args[1] == "" {
			delete(env, envManagementToken)
		}
		if err := e.commands()[s.cmd](t.Context(), s.args, &out, &errb); err != nil {
			t.Fatalf("%s %v: %v", s.cmd, s.args, err)
		}
	}
	want := []string{"Bearer from-flag", "Bearer from-env", "", ""}
	for i, r := range f.requests() {
		if got := r.Header.Get("Authorization"); got != want[i] {
			t.Errorf("request %d (%s %s): Authorization %q, want %q", i+1, r.Method, r.Path, got, want[i])
		}
	}
	env[envManagementToken] = "from-env"
	out.Reset()
	_ = e.commands()["models"](t.Context(), []string{"-h"}, &out, &errb)
	if help := out.String(); !strings.Contains(help, "-token") || strings.Contains(help, "from-env") {
		t.Errorf("help does not offer --token, or shows the token:\n%s", help)
	}
}
