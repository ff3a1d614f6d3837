package main

import (
	"strings"
	"testing"
)

// TestTopLevelHelp checks that the ways people ask for help print the
// overview on stdout and succeed, and that a mistake prints it on stderr
// and exits 2.
func TestTopLevelHelp(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"help"}, {"help", "help"}, {"help", "--help"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, stdout, stderr := cli(t, args...)
			if code != exitOK || stdout != usage || stderr != "" {
				t.Errorf("exit %d, stdout %q, stderr %q; want 0 and the usage on stdout", code, stdout, stderr)
			}
		})
	}
	tests := []struct {
		args []string
		has  string
	}{
		{nil, usage},
		{[]string{"nope"}, `unknown command "nope"`},
		{[]string{"help", "nope"}, `switchyard help: usage: unknown command "nope"`},
		{[]string{"help", "models", "describe"}, `got also "describe"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " ")+" fails", func(t *testing.T) {
			code, stdout, stderr := cli(t, tt.args...)
			if code != exitUsage || stdout != "" || !strings.Contains(stderr, tt.has) {
				t.Errorf("exit %d, stdout %q, stderr %q; want 2 and %q on stderr", code, stdout, stderr, tt.has)
			}
		})
	}
}

func TestUsageListsEveryCommand(t *testing.T) {
	for name := range commands() {
		if !strings.HasPrefix(name, "-") && !strings.Contains(usage, "\n  "+name+" ") {
			t.Errorf("the usage does not list %q", name)
		}
	}
}
