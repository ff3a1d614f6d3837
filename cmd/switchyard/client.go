package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

// Where the client commands find the server when no flag says so.
const (
	envManagementURL     = "SWITCHYARD_MANAGEMENT_URL"
	envManagementToken   = "SWITCHYARD_MANAGEMENT_TOKEN"
	envInferenceURL      = "SWITCHYARD_INFERENCE_URL"
	defaultManagementURL = "http://127.0.0.1:8084"
	defaultInferenceURL  = "http://127.0.0.1:8080"
)

// Default time limits of one client command: loading a model (register, or
// scale starting workers) waits for the workers to load, which may take
// minutes; everything else gets a minute.
const (
	defaultTimeout = 60 * time.Second
	loadTimeout    = 10 * time.Minute
)

// Errors of the client commands, wrapped with detail.
var (
	// errUnreachable means no HTTP exchange with the server took place.
	errUnreachable = errors.New("cannot reach the server")
	// errTimeout means the server did not answer within --timeout.
	errTimeout = errors.New("timed out")
	// errBadAnswer means the server answered 2xx with a body the client cannot read.
	errBadAnswer = errors.New("unexpected answer")
	// errBrokenAnswer means the answer's body ended before it was complete.
	errBrokenAnswer = errors.New("the answer broke off")
)

// clientEnv is what the client commands read besides their arguments: the
// environment (for the default URLs) and standard input (for invoke's
// --data @-). Tests give their own.
type clientEnv struct {
	getenv func(string) string
	stdin  io.Reader
}

// clientCommands returns the subcommands that talk to a running server.
func clientCommands() map[string]command {
	return clientEnv{getenv: os.Getenv, stdin: os.Stdin}.commands()
}

// commands returns the client subcommands bound to e.
func (e clientEnv) commands() map[string]command {
	return map[string]command{
		"models":     e.models,
		"describe":   e.describe,
		"register":   e.register,
		"scale":      e.scale,
		"unregister": e.unregister,
		"invoke":     e.invoke,
	}
}

// envOr returns the environment variable key, or def when it is unset or empty.
func (e clientEnv) envOr(key, def string) string {
	if v := e.getenv(key); v != "" {
		return v
	}
	return def
}

// managementFlags are the flags of the commands that use the management API.
type managementFlags struct {
	base    string
	json    bool
	timeout time.Duration
	token   string
	env     clientEnv
}

// addManagementFlags declares --url, --json, --timeout and --token on fs.
func (e clientEnv) addManagementFlags(fs *flag.FlagSet, timeout time.Duration) *managementFlags {
	f := &managementFlags{env: e}
	fs.StringVar(&f.base, "url", e.envOr(envManagementURL, defaultManagementURL),
		"management API base `URL`; $"+envManagementURL+" sets the default")
	fs.BoolVar(&f.json, "json", false, "print the server's JSON as is")
	fs.DurationVar(&f.timeout, "timeout", timeout, "give up after this long; 0 waits forever")
	// The default is read after parsing, so that -h never prints a token.
	fs.StringVar(&f.token, "token", "", "bearer `TOKEN` of a server with management_token set; default $"+envManagementToken)
	return f
}

// client returns an API client for the management URL the flags name,
// sending the token when there is one.
func (f *managementFlags) client() (*apiClient, error) {
	c, err := newAPIClient(f.base, f.timeout, "--url or $"+envManagementURL)
	if err != nil {
		return nil, err
	}
	c.token = f.token
	if c.token == "" {
		c.token = f.env.getenv(envManagementToken)
	}
	return c, nil
}

// parseArgs parses args with fs and checks that exactly want positional
// arguments remain; what names them in the error ("a model name").
func parseArgs(fs *flag.FlagSet, args []string, stdout, stderr io.Writer, want int, what string) ([]string, error) {
	pos, err := parseInterleaved(fs, args, stdout, stderr)
	if err != nil {
		return nil, err
	}
	if len(pos) != want {
		return nil, argCountError(fs.Name(), pos, want, what)
	}
	for i, p := range pos {
		if p == "" {
			return nil, fmt.Errorf("%w: argument %d is empty", errUsage, i+1)
		}
	}
	return pos, nil
}

// argCountError says what is wrong with the positional arguments pos.
func argCountError(cmd string, pos []string, want int, what string) error {
	switch {
	case want == 0:
		return fmt.Errorf("%w: %s takes no arguments, got %q", errUsage, cmd, pos[0])
	case len(pos) < want:
		return fmt.Errorf("%w: %s needs %s", errUsage, cmd, what)
	default:
		return fmt.Errorf("%w: %s takes only %s, got also %q", errUsage, cmd, what, pos[want])
	}
}

// parseInterleaved parses args with fs, letting flags come before, between
// and after the positional arguments, which it returns in order. All that
// follows a "--" is positional.
func parseInterleaved(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) ([]string, error) {
	var pos []string
	for {
		if err := parseFlags(fs, args, stdout, stderr); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 || endedByDashes(fs, args, rest) {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// endedByDashes reports whether flag parsing of args stopped at a "--"
// terminator (rather than at a positional argument, or at a "--" that was
// the value of the flag before it).
func endedByDashes(fs *flag.FlagSet, args, rest []string) bool {
	n := len(args) - len(rest)
	if n == 0 || args[n-1] != "--" {
		return false
	}
	return n < 2 || !takesValue(fs, args[n-2])
}

// takesValue reports whether arg is a flag of fs written without "=" that
// takes the next argument as its value.
func takesValue(fs *flag.FlagSet, arg string) bool {
	if len(arg) < 2 || arg[0] != '-' {
		return false
	}
	name := arg[1:]
	if name[0] == '-' {
		name = name[1:]
	}
	f := fs.Lookup(name)
	if f == nil {
		return false
	}
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return !ok || !b.IsBoolFlag()
}
