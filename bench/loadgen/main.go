package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// errUsage marks a mistake in the command line.
var errUsage = errors.New("loadgen: usage")

const usage = `usage:
  loadgen run [flags] URL      measure URL (or -hello: a bare server it starts)
  loadgen hello [-addr A]      serve the bare "hello" server
  loadgen report [flags]       print run's results as a table with the targets
Run 'loadgen <command> -h' for its flags.
`

// command is one subcommand.
type command func(ctx context.Context, args []string, stdout, stderr io.Writer) error

var commands = map[string]command{"run": runCmd, "hello": helloCmd, "report": reportCmd}

// run executes one command line and turns its error into an exit code:
// 0 for success, 2 for a usage error, 1 for anything else.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "loadgen: unknown command %q\n%s", args[0], usage)
		return 2
	}
	err := cmd(ctx, args[1:], stdout, stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintln(stderr, err)
		return 2
	}
	fmt.Fprintf(stderr, "loadgen %s: %v\n", args[0], err)
	return 1
}

// parseFlags parses args, reporting flag mistakes as usage errors.
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
