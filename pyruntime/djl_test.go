package pyruntime_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/internal/djlsrc"
	"github.com/switchyard/switchyard/internal/testutil"
)

// djlTests are DJL Serving's own unit tests of the djl_python modules the
// shim provides (djl_python/tests in djl-serving): they run against the
// shim as DJL wrote them.
var djlTests = []string{"test_input_output", "test_encode_decode"}

// TestDJLPythonTests runs DJL Serving's unit tests of djl_python.test_model,
// Input, Output and encode_decode, read from DJL's source into a temporary
// folder, against switchyard's djl_python shim: only the shim folder is on
// PYTHONPATH, as for a handler author running djl_python.test_model by
// hand. It skips where DJL's source is not at hand (CI); the runtime's own
// tests (tests/test_djl_helpers.py) cover the same ground everywhere.
func TestDJLPythonTests(t *testing.T) {
	repo := djlsrc.Repo(t)
	python := testutil.Python(t)
	rt := unpack(t, t.TempDir())
	dir := t.TempDir()
	for _, name := range djlTests {
		src := djlsrc.Show(t, repo, "engines/python/setup/djl_python/tests/"+name+".py")
		if err := os.WriteFile(filepath.Join(dir, name+".py"), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, append([]string{"-m", "unittest", "-v"}, djlTests...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PYTHONPATH="+rt.Shim, "PYTHONDONTWRITEBYTECODE=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil || !strings.Contains(out.String(), "\nOK") {
		t.Fatalf("DJL's tests (%s) against the shim: %v\n%s", djlsrc.Head(t, repo), err, out.String())
	}
	t.Logf("DJL %s, %v: %s", djlsrc.Head(t, repo), djlTests, lastLines(out.String(), 3))
}

// TestDJLTestModelTests says why DJL's test_test_model.py is not run: every
// test in it drives djl_python.huggingface (transformers and peft, which
// Debian 12 does not package) with a fake rolling batch that downloads a
// tokenizer from the Hugging Face Hub.
func TestDJLTestModelTests(t *testing.T) {
	repo := djlsrc.Repo(t)
	src := string(djlsrc.Show(t, repo, "engines/python/setup/djl_python/tests/test_test_model.py"))
	if !strings.Contains(src, "from djl_python import huggingface") {
		t.Fatalf("DJL's test_test_model.py no longer imports djl_python.huggingface: see whether it can run against the shim now")
	}
	t.Skip("DJL's test_test_model.py needs djl_python.huggingface (transformers, peft) and the Hugging Face Hub")
}
