package pyruntime_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchyard/switchyard/internal/testutil"
	"github.com/switchyard/switchyard/pyruntime"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// readTree returns the files under dir (byte-code caches left out), keyed by slash path.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "__pycache__" {
			return fs.SkipDir
		}
		if d.IsDir() || strings.HasSuffix(p, ".pyc") {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// hashTree recomputes the documented hash over files read from disk.
func hashTree(files map[string][]byte) string {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h := sha256.New()
	for _, p := range paths {
		var size [8]byte
		binary.BigEndian.PutUint64(size[:], uint64(len(files[p])))
		h.Write(append([]byte(p), 0))
		h.Write(size[:])
		h.Write(files[p])
	}
	return hex.EncodeToString(h.Sum(nil))
}

func unpack(t *testing.T, cache string) pyruntime.Runtime {
	t.Helper()
	rt, err := pyruntime.Unpack(cache)
	if err != nil {
		t.Fatalf("Unpack(%s): %v", cache, err)
	}
	return rt
}

// wantTree fails the test unless rt.Dir holds exactly the embedded files.
func wantTree(t *testing.T, rt pyruntime.Runtime) {
	t.Helper()
	if got := hashTree(readTree(t, rt.Dir)); got != rt.Hash {
		t.Fatalf("tree in %s hashes to %s, want %s", rt.Dir, got, rt.Hash)
	}
}

func TestHash(t *testing.T) {
	h := pyruntime.Hash()
	if !regexp.MustCompile(`^[0-9a-f]{64}$`).MatchString(h) {
		t.Fatalf("Hash() = %q, want 64 hex digits", h)
	}
	if again := pyruntime.Hash(); again != h {
		t.Fatalf("Hash() changed from %s to %s", h, again)
	}
	wantTree(t, unpack(t, t.TempDir()))
}

func TestUnpackLayout(t *testing.T) {
	cache := t.TempDir()
	rt := unpack(t, cache)
	abs, _ := filepath.Abs(cache)
	want := pyruntime.Runtime{
		Dir:        filepath.Join(abs, "switchyard-runtime-"+pyruntime.Hash()[:16]),
		Engine:     filepath.Join(abs, "switchyard-runtime-"+pyruntime.Hash()[:16], "switchyard_engine.py"),
		PythonPath: filepath.Join(abs, "switchyard-runtime-"+pyruntime.Hash()[:16]),
		Shim:       filepath.Join(abs, "switchyard-runtime-"+pyruntime.Hash()[:16], "shim"),
		Hash:       pyruntime.Hash(),
	}
	if rt != want {
		t.Fatalf("Unpack = %+v, want %+v", rt, want)
	}
	files := readTree(t, rt.Dir)
	for _, p := range []string{"switchyard_engine.py", "switchyard_runtime/__init__.py",
		"switchyard_runtime/wire/__init__.py", "switchyard_runtime/djl/__init__.py",
		"switchyard_runtime/generative/__init__.py", "shim/djl_python/__init__.py",
		"shim/djl_python/test_model.py"} {
		t.Run(p, func(t *testing.T) {
			if len(files[p]) == 0 {
				t.Errorf("%s missing or empty in %s", p, rt.Dir)
			}
		})
	}
	for p := range files {
		if strings.HasPrefix(p, "tests/") || strings.HasSuffix(p, ".go") {
			t.Errorf("%s is shipped in the runtime; only the engine, the package and the shim are", p)
		}
	}
}

func TestUnpackModes(t *testing.T) {
	rt := unpack(t, t.TempDir())
	err := filepath.WalkDir(rt.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		want := fs.FileMode(0o644)
		if d.IsDir() {
			want = fs.ModeDir | 0o755
		}
		if err == nil && info.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, info.Mode(), want)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestUnpackIdempotent(t *testing.T) {
	cache := t.TempDir()
	first := unpack(t, cache)
	before, err := os.Stat(first.Engine)
	if err != nil {
		t.Fatal(err)
	}
	second := unpack(t, cache)
	after, err := os.Stat(second.Engine)
	if err != nil {
		t.Fatal(err)
	}
	if first != second {
		t.Fatalf("second Unpack = %+v, want %+v", second, first)
	}
	if !os.SameFile(before, after) || !before.ModTime().Equal(after.ModTime()) {
		t.Fatal("second Unpack rewrote a complete runtime")
	}
}

func TestUnpackKeyedByHash(t *testing.T) {
	cache := t.TempDir()
	other := filepath.Join(cache, "switchyard-runtime-0000000000000000")
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	rt := unpack(t, cache)
	if rt.Dir == other {
		t.Fatalf("Unpack chose the folder of another hash")
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("Unpack touched the folder of another hash: %v", err)
	}
}

func TestUnpackConcurrent(t *testing.T) {
	cache := t.TempDir()
	const callers = 8
	got := make([]pyruntime.Runtime, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = pyruntime.Unpack(cache)
		}()
	}
	wg.Wait()
	for i := range callers {
		if errs[i] != nil || got[i] != got[0] {
			t.Fatalf("caller %d: %+v, %v; caller 0: %+v", i, got[i], errs[i], got[0])
		}
	}
	wantTree(t, got[0])
	wantEntries(t, cache, filepath.Base(got[0].Dir))
}

// wantEntries fails unless cache holds only the runtime folder and its lock file.
func wantEntries(t *testing.T, cache, name string) {
	t.Helper()
	entries, err := os.ReadDir(cache)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{"." + name + ".lock", name}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("cache holds %v, want %v", names, want)
	}
}

func TestUnpackReplacesDamaged(t *testing.T) {
	tests := []struct {
		name   string
		damage func(rt pyruntime.Runtime) error
	}{
		{"changed file", func(rt pyruntime.Runtime) error {
			return os.WriteFile(rt.Engine, []byte("print('tampered')\n"), 0o644)
		}},
		{"missing file", func(rt pyruntime.Runtime) error {
			return os.Remove(filepath.Join(rt.Dir, "switchyard_runtime", "server.py"))
		}},
		{"partial folder", func(rt pyruntime.Runtime) error {
			if err := os.RemoveAll(rt.Dir); err != nil {
				return err
			}
			return os.MkdirAll(filepath.Join(rt.Dir, "switchyard_runtime"), 0o755)
		}},
		{"file in its place", func(rt pyruntime.Runtime) error {
			if err := os.RemoveAll(rt.Dir); err != nil {
				return err
			}
			return os.WriteFile(rt.Dir, []byte("x"), 0o644)
		}},
		{"leftover temporary folder", func(rt pyruntime.Runtime) error {
			tmp := filepath.Join(filepath.Dir(rt.Dir), "."+filepath.Base(rt.Dir)+".tmp-123")
			if err := os.MkdirAll(tmp, 0o755); err != nil {
				return err
			}
			return os.Remove(rt.Engine)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache := t.TempDir()
			rt := unpack(t, cache)
			if err := tt.damage(rt); err != nil {
				t.Fatal(err)
			}
			if again := unpack(t, cache); again != rt {
				t.Fatalf("Unpack after damage = %+v, want %+v", again, rt)
			}
			wantTree(t, rt)
			wantEntries(t, cache, filepath.Base(rt.Dir))
		})
	}
}

func TestUnpackError(t *testing.T) {
	notDir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(notDir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := pyruntime.Unpack(filepath.Join(notDir, "cache"))
	if err == nil || !strings.HasPrefix(err.Error(), pyruntime.ErrUnpack.Error()) {
		t.Fatalf("Unpack under a file: %v, want %v", err, pyruntime.ErrUnpack)
	}
}

func TestDefaultCacheDir(t *testing.T) {
	home := t.TempDir()
	tests := []struct {
		name                 string
		override, xdg, homeV string
		want                 string
	}{
		{"override", "/srv/cache", "/xdg", home, "/srv/cache"},
		{"xdg cache home", "", "/xdg", home, "/xdg/switchyard"},
		{"home", "", "", home, filepath.Join(home, ".cache", "switchyard")},
		{"no home", "", "", "", filepath.Join(os.TempDir(), "switchyard-cache")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(pyruntime.CacheDirEnv, tt.override)
			t.Setenv("XDG_CACHE_HOME", tt.xdg)
			t.Setenv("HOME", tt.homeV)
			if got := pyruntime.DefaultCacheDir(); got != tt.want {
				t.Fatalf("DefaultCacheDir() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestPythonUnitTests runs the runtime's own unittest suite (tests/) from
// the source folder, with the runtime's package first on PYTHONPATH as a
// worker has it.
func TestPythonUnitTests(t *testing.T) {
	python := testutil.Python(t)
	fixtures := testutil.Fixtures(t, "qwen2-chat", "qwen2-chat-adapters")
	src, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, python, "-m", "unittest", "discover", "-s", "tests", "-t", ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "PYTHONPATH="+src, "PYTHONDONTWRITEBYTECODE=1", testutil.FixturesEnv+"="+fixtures)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s -m unittest in %s: %v\n%s", python, src, err, out.String())
	}
	if !strings.Contains(out.String(), "\nOK") {
		t.Fatalf("unittest did not report OK:\n%s", out.String())
	}
	t.Logf("%s", lastLines(out.String(), 3))
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func ExampleUnpack() {
	cache, err := os.MkdirTemp("", "switchyard-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(cache)

	rt, err := pyruntime.Unpack(cache)
	if err != nil {
		fmt.Println(err)
		return
	}
	// A worker is started as: python3 <rt.Engine> --sock-type unix --sock-name ...
	// with PYTHONPATH=<rt.PythonPath>:<model dir>:...
	fmt.Println(filepath.Base(rt.Engine))
	fmt.Println(filepath.Base(rt.Dir) == "switchyard-runtime-"+rt.Hash[:16])
	// Output:
	// switchyard_engine.py
	// true
}
