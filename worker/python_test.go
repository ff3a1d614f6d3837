package worker

import (
	"errors"
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
