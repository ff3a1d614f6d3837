package testutil

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/switchyard/switchyard/pyruntime"
)

// PythonEnv names the environment variable that picks the interpreter the
// tests run Python with (workers, the runtime's own tests, the clients).
const PythonEnv = "SWITCHYARD_TEST_PYTHON"

// venvPython is the project's virtual environment's interpreter, relative to
// the module root (scripts/deps.sh makes it with the pinned packages).
const venvPython = ".venv/bin/python"

// Root returns the module's root folder (the one holding go.mod), found
// from the test's working folder upwards.
func Root(tb testing.TB) string {
	tb.Helper()
	root, err := findRoot()
	if err != nil {
		tb.Fatal(err)
	}
	return root
}

var findRoot = sync.OnceValues(func() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", os.ErrNotExist
		}
		dir = parent
	}
})

// Python returns the interpreter tests run Python with: $SWITCHYARD_TEST_PYTHON,
// else the project's virtual environment (.venv/bin/python at the module
// root). It skips the test with -short (Python tests are integration tests)
// or when that interpreter is not there (run scripts/deps.sh).
func Python(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("integration test with Python")
	}
	python := os.Getenv(PythonEnv)
	if python == "" {
		python = filepath.Join(Root(tb), venvPython)
	}
	if _, err := exec.LookPath(python); err != nil {
		tb.Skipf("no Python interpreter at %s (run scripts/deps.sh, or set %s): %v", python, PythonEnv, err)
	}
	return python
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
