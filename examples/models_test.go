package examples

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/internal/testutil"
)

// TestModelUnitTests runs `python3 -m unittest` in every example model
// folder and test fixture folder that has test_*.py files, with SWITCHYARD_RUNTIME_PYTHON set to
// pyruntime so that the tests import the djl_python shim the
// workers use.
func TestModelUnitTests(t *testing.T) {
	python := testutil.Python(t)
	runtime, err := filepath.Abs(filepath.Join("..", "pyruntime"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(runtime, "shim", "djl_python")); err != nil {
		t.Fatalf("the djl_python shim: %v", err)
	}
	dirs, err := filepath.Glob(filepath.Join("models", "*"))
	if err != nil {
		t.Fatal(err)
	}
	fixtures, err := filepath.Glob(filepath.Join("fixtures", "*"))
	if err != nil {
		t.Fatal(err)
	}
	dirs = append(dirs, fixtures...)
	for _, dir := range dirs {
		tests, _ := filepath.Glob(filepath.Join(dir, "test_*.py"))
		if len(tests) == 0 {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, python, "-m", "unittest", "discover", "-p", "test_*.py")
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1", "SWITCHYARD_RUNTIME_PYTHON="+runtime)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "\nOK") {
				t.Fatalf("unittest in %s: %v\n%s", dir, err, out.String())
			}
		})
	}
}
