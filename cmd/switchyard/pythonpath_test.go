package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/internal/testutil"
	"github.com/switchyard/switchyard/pyruntime"
)

// TestPythonPath runs the documented way to try a model folder's handler
// without a server: PYTHONPATH=$(switchyard pythonpath) python3 -m
// djl_python.test_model, on the langid example.
func TestPythonPath(t *testing.T) {
	t.Setenv(pyruntime.CacheDirEnv, t.TempDir())
	code, stdout, stderr := cli(t, "pythonpath")
	path := strings.TrimSpace(stdout)
	if code != exitOK || !filepath.IsAbs(path) {
		t.Fatalf("pythonpath: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(path, "djl_python", "test_model.py")); err != nil {
		t.Fatalf("%s holds no djl_python.test_model: %v", path, err)
	}
	if code, _, stderr := cli(t, "pythonpath", "extra"); code != exitUsage {
		t.Errorf("pythonpath extra: exit %d (%s), want a usage error", code, stderr)
	}
	python := testutil.Python(t)
	model, err := filepath.Abs(filepath.Join("..", "..", "examples", "models", "langid"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), python, "-m", "djl_python.test_model", "--model-dir", model,
		"--input", `{"inputs": "Bonjour tout le monde"}`)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+path, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("djl_python.test_model: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var answer []struct{ Label string }
	body, _ := strings.CutPrefix(lines[len(lines)-1], "data: ")
	if err := json.Unmarshal([]byte(body), &answer); err != nil || len(answer) == 0 || answer[0].Label != "fra" {
		t.Errorf("langid through djl_python.test_model answered %q (%v), want French first", lines[len(lines)-1], err)
	}
}
