package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
)

// Exit codes.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

// errUsage marks an error in the command line.
var errUsage = errors.New("usage")

const usage = `usage: switchyard <command> [flags]

server:
  serve        start the server on a model store
               (switchyard serve --model-store examples/models --python /usr/bin/python3)

client (talks to a running server):
  models       list the registered models
  describe     describe one model
  register     register a model folder
  scale        change a model's worker counts
  unregister   unregister a model
  invoke       send a request to a model

agent (a reasoning model plans, a small model served on an endpoint is its tool):
  agent        serve, dev, invoke, create, verify-local, cleanup
               ('switchyard help agent' lists them)

  pythonpath   print the PYTHONPATH of switchyard's djl_python (djl_python.test_model)
  version      print the version
  help [CMD]   print this help, or the flags of CMD (help agent serve: of an agent command)

Run 'switchyard <command> -h' for the flags of a command.
`

// run executes one command line and turns its error into an exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	name := args[0]
	if name == "agent" {
		name = agentCommandName(args[1:])
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "switchyard: unknown command %q\n\n%s", name, usage)
		return exitUsage
	}
	err := cmd(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "switchyard %s: %v\n", name, err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "switchyard %s: %v\n", name, err)
		return exitError
	}
}

// help is the help command, also run for -h, -help and --help: the
// overview, or with a command's name that command's flags, on stdout.
func help(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) == 0, args[0] == "help", isHelpFlag(args[0]):
		_, err := fmt.Fprint(stdout, usage)
		return err
	case len(args) == 2 && args[0] == "agent":
		return agentCommand(ctx, []string{args[1], "-h"}, stdout, stderr)
	case len(args) > 1:
		return fmt.Errorf("%w: help takes at most one command (or agent and one of its commands), got also %q", errUsage, args[1])
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		return fmt.Errorf("%w: unknown command %q (run 'switchyard help' for the list)", errUsage, args[0])
	}
	return cmd(ctx, []string{"-h"}, stdout, stderr)
}

// isHelpFlag reports whether arg asks for help the way the flag package
// understands it.
func isHelpFlag(arg string) bool {
	switch arg {
	case "-h", "-help", "--help", "--h":
		return true
	}
	return false
}

// command is one subcommand.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer) error

func commands() map[string]command {
	cmds := map[string]command{"serve": serve, "version": printVersion, "help": help, "pythonpath": printPythonPath,
		"agent": agentCommand}
	for _, h := range []string{"-h", "-help", "--help", "--h"} {
		cmds[h] = help
	}
	for name, c := range clientCommands() {
		cmds[name] = c
	}
	return cmds
}

// parseFlags parses args with fs, reporting flag errors as usage errors.
// Help that was asked for (-h, --help) goes to stdout; a flag error and the
// usage that follows it go to stderr.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	var out bytes.Buffer
	fs.SetOutput(&out)
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		_, _ = out.WriteTo(stdout)
		return err
	}
	_, _ = out.WriteTo(stderr)
	return fmt.Errorf("%w: %w", errUsage, err)
}

// newFlagSet returns a flag set whose -h text shows synopsis and summary.
func newFlagSet(name, synopsis, summary string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: switchyard %s %s\n\n%s\n\nflags:\n", name, synopsis, summary)
		fs.PrintDefaults()
	}
	return fs
}
