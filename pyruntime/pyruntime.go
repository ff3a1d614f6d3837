package pyruntime

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The runtime's files: the engine script, the package and the djl_python
// shim. Its tests stay in the source tree (tests/), run from there.
//
//go:embed switchyard_engine.py all:switchyard_runtime all:shim
var embedded embed.FS

// root is the embedded folder that becomes the unpacked runtime folder.
const root = "."

// EngineFile is the entry script's path inside the runtime folder.
const EngineFile = "switchyard_engine.py"

// ShimDir is the djl_python shim's folder inside the runtime folder.
const ShimDir = "shim"

// CacheDirEnv names the environment variable that overrides DefaultCacheDir.
const CacheDirEnv = "SWITCHYARD_CACHE_DIR"

// ErrUnpack is returned, wrapped with the cause, when the runtime cannot be
// written to or checked in the cache folder.
var ErrUnpack = errors.New("pyruntime: cannot unpack the worker runtime")

// Runtime is the unpacked worker runtime.
type Runtime struct {
	Dir        string // the folder it was unpacked to
	Engine     string // absolute path of switchyard_engine.py
	PythonPath string // folder to put first on the worker's PYTHONPATH
	Shim       string // the djl_python shim's folder: on PYTHONPATH alone, it makes djl_python (and the runtime) importable
	Hash       string // hex content hash of the embedded files
}

// file is one embedded file, its path relative to the runtime folder.
type file struct {
	path string
	data []byte
}

// tree lists the embedded files once, sorted by path. Byte-code caches
// (__pycache__, *.pyc) that a local test run may have left are not part of it.
var tree = sync.OnceValues(func() ([]file, error) {
	var files []file
	err := fs.WalkDir(embedded, root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || skipped(d) {
			return skipDir(d, err)
		}
		if d.IsDir() {
			return nil
		}
		data, err := embedded.ReadFile(p)
		files = append(files, file{path: p, data: data})
		return err
	})
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return files, err
})

func skipped(d fs.DirEntry) bool {
	name := d.Name()
	return name == "__pycache__" || strings.HasSuffix(name, ".pyc") || strings.HasSuffix(name, ".pyo")
}

func skipDir(d fs.DirEntry, err error) error {
	if err == nil && d.IsDir() {
		return fs.SkipDir
	}
	return err
}

var hash = sync.OnceValue(func() string {
	files, _ := tree()
	return hashFiles(files)
})

// hashFiles is sha256 over, per file in path order: the path, a zero byte,
// the length as 8 big-endian bytes, and the contents.
func hashFiles(files []file) string {
	h := sha256.New()
	var size [8]byte
	for _, f := range files {
		h.Write([]byte(f.path))
		h.Write([]byte{0})
		binary.BigEndian.PutUint64(size[:], uint64(len(f.data)))
		h.Write(size[:])
		h.Write(f.data)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Hash returns the hex sha256 content hash of the embedded runtime: over
// its files sorted by path, each as path, a zero byte, the length as 8
// big-endian bytes, and the contents. It is computed once.
func Hash() string {
	return hash()
}

// DefaultCacheDir returns $SWITCHYARD_CACHE_DIR when set, else
// os.UserCacheDir()/switchyard, else os.TempDir()/switchyard-cache.
func DefaultCacheDir() string {
	if dir := os.Getenv(CacheDirEnv); dir != "" {
		return dir
	}
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "switchyard")
	}
	return filepath.Join(os.TempDir(), "switchyard-cache")
}

// Unpack makes sure the runtime is in <cacheDir>/switchyard-runtime-<hash[:16]>
// and returns where. A folder there that already holds every embedded file
// with the same bytes is reused as it is; otherwise the tree is written into
// a temporary sibling (files 0644, folders 0755) and renamed into place,
// replacing a damaged or partial folder. Callers in several processes are
// serialized by a lock file next to the folder.
func Unpack(cacheDir string) (Runtime, error) {
	files, err := tree()
	if err != nil {
		return Runtime{}, fmt.Errorf("%w: reading the embedded files: %w", ErrUnpack, err)
	}
	parent, err := filepath.Abs(cacheDir)
	if err == nil {
		err = os.MkdirAll(parent, 0o755)
	}
	if err != nil {
		return Runtime{}, fmt.Errorf("%w: %w", ErrUnpack, err)
	}
	rt := newRuntime(filepath.Join(parent, folderName()))
	if complete(rt.Dir, files) {
		return rt, nil
	}
	if err := installLocked(parent, rt.Dir, files); err != nil {
		return Runtime{}, fmt.Errorf("%w: %w", ErrUnpack, err)
	}
	return rt, nil
}

func folderName() string {
	return "switchyard-runtime-" + Hash()[:16]
}

func newRuntime(dir string) Runtime {
	return Runtime{Dir: dir, Engine: filepath.Join(dir, EngineFile), PythonPath: dir, Shim: filepath.Join(dir, ShimDir), Hash: Hash()}
}

// complete reports whether dir holds every file with the embedded bytes.
func complete(dir string, files []file) bool {
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(f.path)))
		if err != nil || !bytes.Equal(data, f.data) {
			return false
		}
	}
	return len(files) > 0
}

// installLocked writes the tree under the lock, unless another caller did
// while this one waited for it.
func installLocked(parent, dir string, files []file) error {
	unlock, err := lock(filepath.Join(parent, "."+filepath.Base(dir)+".lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if complete(dir, files) {
		return nil
	}
	removeLeftovers(parent, filepath.Base(dir))
	return install(parent, dir, files)
}

// lock takes an exclusive flock on path and returns its release.
func lock(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := flock(f, unix.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	return func() {
		_ = flock(f, unix.LOCK_UN)
		f.Close()
	}, nil
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// tempPrefix is the name start of the temporary siblings for folder name.
func tempPrefix(name string) string {
	return "." + name + ".tmp-"
}

// removeLeftovers deletes temporary siblings that a crashed caller left
// behind; only a caller holding the lock may do this.
func removeLeftovers(parent, name string) {
	entries, _ := os.ReadDir(parent)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), tempPrefix(name)) {
			_ = os.RemoveAll(filepath.Join(parent, e.Name()))
		}
	}
}

// install writes the tree into a temporary sibling of dir, then moves it to dir.
func install(parent, dir string, files []file) (err error) {
	tmp, err := os.MkdirTemp(parent, tempPrefix(filepath.Base(dir)))
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = os.RemoveAll(tmp)
		}
	}()
	if err := writeTree(tmp, files); err != nil {
		return err
	}
	if err := moveAside(dir, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, dir)
}

// writeTree writes files under dir with modes 0644 (files) and 0755 (folders).
func writeTree(dir string, files []file) error {
	dirs := map[string]bool{".": true}
	for _, f := range files {
		for d := path.Dir(f.path); !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
		if err := writeFile(filepath.Join(dir, filepath.FromSlash(f.path)), f.data); err != nil {
			return err
		}
	}
	for d := range dirs {
		if err := os.Chmod(filepath.Join(dir, filepath.FromSlash(d)), 0o755); err != nil {
			return err
		}
	}
	return nil
}

func writeFile(name string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(name, data, 0o644); err != nil {
		return err
	}
	return os.Chmod(name, 0o644)
}

// moveAside removes whatever is at dir (a damaged tree, or a file) so that
// tmp can be renamed there. A folder is first renamed away, so dir is never
// half deleted.
func moveAside(dir, tmp string) error {
	info, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return os.Remove(dir)
	}
	trash := tmp + ".old"
	if err := os.Rename(dir, trash); err != nil {
		return err
	}
	return os.RemoveAll(trash)
}
