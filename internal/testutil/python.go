package testutil

import (
	"os"
	"testing"

	"github.com/switchyard/switchyard/pyruntime"
)

// SystemPython is the interpreter the integration tests run workers with:
// Debian's, which sees the apt-installed numpy and torch (a pyenv python3
// first on PATH does not).
const SystemPython = "/usr/bin/python3"

// NeedPython skips a test that starts real Python workers when it runs
// with -short or SystemPython is not installed.
func NeedPython(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test with Python")
	}
	if _, err := os.Stat(SystemPython); err != nil {
		t.Skip(SystemPython + " is not installed")
	}
}

// UnpackRuntime unpacks the embedded Python runtime into a folder of the
// test's own.
func UnpackRuntime(t testing.TB) pyruntime.Runtime {
	t.Helper()
	rt, err := pyruntime.Unpack(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return rt
}
