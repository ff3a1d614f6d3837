package docker

import (
	"bytes"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// stubServer stands in for the switchyard binary: it prints its process id,
// its arguments and the settings the entrypoint handed over, one per line.
const stubServer = `#!/bin/sh
printf 'pid=%s\n' "$$"
for a in "$@"; do printf 'arg=%s\n' "$a"; done
env | grep -E '^(SERVING_|SWITCHYARD_CACHE_DIR=)' | sed 's/^/env=/'
`

// sandbox is a folder tree an entrypoint run sees: the SageMaker root, a
// home, a temp folder and a bin folder first on PATH.
type sandbox struct {
	base string
	vars map[string]string // $BASE, $ROOT, $HOME, $TMP for expand
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	base := t.TempDir()
	s := &sandbox{base: base, vars: map[string]string{
		"BASE": base,
		"ROOT": filepath.Join(base, "ml"),
		"HOME": filepath.Join(base, "home"),
		"TMP":  filepath.Join(base, "tmp"),
		"BIN":  filepath.Join(base, "bin"),
	}}
	for _, d := range []string{"HOME", "TMP", "BIN"} {
		if err := os.MkdirAll(s.vars[d], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// expand replaces $BASE, $ROOT, $HOME, $TMP and $BIN in v.
func (s *sandbox) expand(v string) string {
	return os.Expand(v, func(k string) string { return s.vars[k] })
}

// installStub puts stubServer on PATH as switchyard.
func (s *sandbox) installStub(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(s.vars["BIN"], "switchyard"), []byte(stubServer), 0o755); err != nil {
		t.Fatal(err)
	}
}

// write creates files below base: a name that ends in "/" is a folder, and
// name=content gives a file its content.
func (s *sandbox) write(t *testing.T, files []string) {
	t.Helper()
	for _, f := range files {
		name, content, _ := strings.Cut(s.expand(f), "=")
		path := filepath.Join(s.base, name)
		dir := path
		if !strings.HasSuffix(name, "/") {
			dir = filepath.Dir(path)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(name, "/") {
			continue
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// environ is the whole environment of a run: nothing of the test's own,
// so a developer's SERVING_* variables cannot leak in.
func (s *sandbox) environ(extra []string) []string {
	env := []string{
		"PATH=" + s.vars["BIN"] + ":/usr/local/bin:/usr/bin:/bin",
		"HOME=" + s.vars["HOME"],
		"TMPDIR=" + s.vars["TMP"],
		"SWITCHYARD_SAGEMAKER_ROOT=" + s.vars["ROOT"],
	}
	for _, e := range extra {
		env = append(env, s.expand(e))
	}
	return env
}

// result is what one entrypoint run did.
type result struct {
	pid            int // the process the test started
	code           int
	stdout, stderr string
}

// runEntrypoint runs entrypoint.sh under shell with args, to its end.
func (s *sandbox) runEntrypoint(t *testing.T, shell string, env []string, args ...string) result {
	t.Helper()
	script, err := filepath.Abs("entrypoint.sh")
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(t.Context(), shell, append([]string{script}, args...)...)
	cmd.Env, cmd.Dir = s.environ(env), s.base
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := result{pid: cmd.Process.Pid}
	var exit *exec.ExitError
	if err := cmd.Wait(); errors.As(err, &exit) {
		r.code = exit.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	r.stdout, r.stderr = stdout.String(), stderr.String()
	return r
}

// stubCall is what the stub server printed.
type stubCall struct {
	pid  int
	args []string
	env  map[string]string
}

func parseStub(t *testing.T, out string) stubCall {
	t.Helper()
	c := stubCall{env: map[string]string{}}
	for line := range strings.Lines(out) {
		key, val, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
		switch key {
		case "pid":
			c.pid, _ = strconv.Atoi(val)
		case "arg":
			c.args = append(c.args, val)
		case "env":
			k, v, _ := strings.Cut(val, "=")
			c.env[k] = v
		default:
			t.Fatalf("unexpected stub output line %q", line)
		}
	}
	if c.pid == 0 {
		t.Fatalf("the stub server did not run; output:\n%s", out)
	}
	return c
}

// served is what the entrypoint hands "switchyard serve" when the user
// sets nothing: one listener on 8080, the image's interpreter and /tmp.
func served(store, load string) map[string]string {
	return map[string]string{
		"SERVING_INFERENCE_ADDRESS":  "http://0.0.0.0:8080",
		"SERVING_MANAGEMENT_ADDRESS": "http://0.0.0.0:8080",
		"SERVING_MODEL_STORE":        store,
		"SERVING_LOAD_MODELS":        load,
		"SERVING_PYTHON_EXECUTABLE":  imagePython,
		"SERVING_SOCKET_DIR":         "/tmp",
	}
}

// with returns a copy of m changed by edits: "K=V" sets K, "K" removes it.
func with(m map[string]string, edits ...string) map[string]string {
	out := maps.Clone(m)
	for _, e := range edits {
		if k, v, ok := strings.Cut(e, "="); ok {
			out[k] = v
		} else {
			delete(out, k)
		}
	}
	return out
}

// shells returns the interpreters to run the entrypoint under: sh, which
// runs it in the images (dash on Debian and Ubuntu), and bash.
func shells(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, name := range []string{"sh", "bash"} {
		if path, err := exec.LookPath(name); err == nil {
			out = append(out, path)
		}
	}
	if len(out) == 0 {
		t.Skip("neither sh nor bash is on PATH")
	}
	return out
}
