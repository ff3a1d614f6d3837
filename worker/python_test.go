package worker

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/switchyard/switchyard/worker/pyruntime"
)

const systemPython = "/usr/bin/python3"

// unpackRuntime unpacks the embedded Python runtime into a folder of the
// test's own.
func unpackRuntime(tb testing.TB) pyruntime.Runtime {
	tb.Helper()
	rt, err := pyruntime.Unpack(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return rt
}

// gone reports whether the process pid no longer exists.
func gone(pid int) bool {
	return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// shortDir returns a temporary folder with a short path: Unix socket paths
// are limited to about 100 bytes.
func shortDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "sy")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
