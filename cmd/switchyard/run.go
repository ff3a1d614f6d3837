package main

import (
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

client (talks to a running server):
  models       list the registered models
  describe     describe one model
  register     register a model folder
  scale        change a model's worker counts
  unregister   unregister a model
  invoke       send a request to a model

  version      print the version

Run 'switchyard <command> -h' for the flags of a command.
`

// run executes one command line and turns its error into an exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	cmd, ok := commands()[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "switchyard: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	err := cmd(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "switchyard %s: %v\n", args[0], err)
		return exitUsage
	default:
		fmt.Fprintf(stderr, "switchyard %s: %v\n", args[0], err)
		return exitError
	}
}

// command is one subcommand.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer) error

func commands() map[string]command {
	cmds := map[string]command{"serve": serve, "version": printVersion}
	for name, c := range clientCommands() {
		cmds[name] = c
	}
	return cmds
}

// parseFlags parses args with fs, reporting flag errors as usage errors.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer) error {
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	return nil
}
