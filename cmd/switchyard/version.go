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
func printVersion(_ context.Context, _ []string, stdout, _ io.Writer) error {
	_, err := fmt.Fprintln(stdout, "switchyard", versionString())
	return err
}
