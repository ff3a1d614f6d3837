// Package djlsrc gives tests DJL Serving's own source, to check switchyard
// against it: DJL's Python unit tests run against switchyard's djl_python
// shim, and DJL's djl_python_engine.py serves through switchyard.
//
// The source is a git repository of deepjavalibrary/djl-serving, named by
// the environment variable SWITCHYARD_DJL_SERVING_REPO, or else looked for
// where the development machines keep a mirror. Nothing of it is copied into
// this repository: files are read from the repository's HEAD when a test
// runs, into the test's temporary folder. Without the repository (CI has
// none), or without git and tar, the tests that need it skip.
package djlsrc

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// RepoEnv names the environment variable that points at a djl-serving git
// repository (a bare one is fine).
const RepoEnv = "SWITCHYARD_DJL_SERVING_REPO"

// mirror is where the development machines keep a bare mirror of djl-serving.
const mirror = "/work/.mirror/deepjavalibrary+djl-serving/repo"

// Repo returns the djl-serving repository to read, or skips the test.
func Repo(t testing.TB) string {
	t.Helper()
	repo := os.Getenv(RepoEnv)
	if repo == "" {
		repo = mirror
	}
	if _, err := os.Stat(repo); err != nil {
		t.Skipf("DJL Serving's source is not here (set %s to a djl-serving git repository): %v", RepoEnv, err)
	}
	for _, tool := range []string{"git", "tar", "sh"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("reading DJL Serving's source needs %s: %v", tool, err)
		}
	}
	return repo
}

// Head returns the commit and the date of the repository's HEAD, for logs.
func Head(t testing.TB, repo string) string {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "log", "-1", "--format=%h %cs").Output()
	if err != nil {
		t.Fatalf("git log in %s: %v", repo, err)
	}
	return string(bytes.TrimSpace(out))
}

// Show returns the file at path in the repository's HEAD.
func Show(t testing.TB, repo, path string) []byte {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "show", "HEAD:"+path).Output()
	if err != nil {
		t.Fatalf("git show HEAD:%s in %s: %v", path, repo, err)
	}
	return out
}

// Extract writes the folder path of the repository's HEAD into dir (as
// dir/path) and returns where it went.
func Extract(t testing.TB, repo, path, dir string) string {
	t.Helper()
	script := `set -e; git -C "$1" archive HEAD "$2" | tar -x -C "$3"`
	if out, err := exec.Command("sh", "-c", script, "sh", repo, path, dir).CombinedOutput(); err != nil {
		t.Fatalf("extract %s from %s: %v: %s", path, repo, err, out)
	}
	return filepath.Join(dir, filepath.FromSlash(path))
}
