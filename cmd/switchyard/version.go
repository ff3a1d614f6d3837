package main

import (
	"context"
	"fmt"
	"io"
)

// version and commit are set at build time with
// -ldflags "-X main.version=... -X main.commit=...".
var version, commit = "dev", ""

// versionString names the build.
func versionString() string {
	if commit == "" {
		return version
	}
	return version + " (" + commit + ")"
}

// printVersion is the version subcommand.
func printVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "", "Prints the version (and the commit) of this build.")
	if _, err := parseArgs(fs, args, stdout, stderr, 0, ""); err != nil {
		return err
	}
	_, err := fmt.Fprintln(stdout, "switchyard", versionString())
	return err
}
