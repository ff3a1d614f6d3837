// Package testutil holds the helpers switchyard's tests share: free ports,
// temporary folders short enough for Unix sockets, process checks, copies
// of model folders, polling, and a buffer that several goroutines may
// write. Only tests import it.
package testutil

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// FreePort returns a loopback TCP port that was free a moment ago.
func FreePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// ShortDir returns a new temporary folder, removed when the test ends,
// whose path is short enough for Unix socket paths below it (about 100
// bytes at most; t.TempDir's paths are long).
func ShortDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "sy")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// ProcessGone reports whether no process pid exists any more, or only as a
// zombie that its parent has yet to wait for.
func ProcessGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return true
	case err != nil: // no /proc: ask the kernel
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(fields) > 0 && fields[0] == "Z"
}

// CopyDir copies the folder src (a model folder, say) to dst, subfolders
// included and Python caches left out, and returns dst.
func CopyDir(t testing.TB, src, dst string) string {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		switch {
		case d.IsDir() && d.Name() == "__pycache__":
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		case !d.Type().IsRegular():
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
	return dst
}

// pollEvery is how often WaitFor and Poll look again.
const pollEvery = 20 * time.Millisecond

// WaitFor checks cond until it holds and returns how long that took; the
// test fails when it does not hold within limit. The limit is a bound on a
// step that never comes, not a timing threshold: make it far above what the
// step takes.
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	began := time.Now()
	if !Poll(limit, cond) {
		t.Fatalf("%s: not within %v", what, limit)
	}
	return time.Since(began)
}

// Poll checks cond until it holds or limit has passed, and reports whether
// it held.
func Poll(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollEvery)
	}
	return true
}

// Buffer is a bytes.Buffer that several goroutines may write and read at
// once: a process's output, copied by os/exec's goroutines.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns what was written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// SSEData cuts a server-sent-events body into the data of its events,
// failing the test unless every line is a data field and the body ends
// with a blank line.
func SSEData(t testing.TB, body string) []string {
	t.Helper()
	if !strings.HasSuffix(body, "\n\n") {
		t.Fatalf("event stream does not end with a blank line: %q", body)
	}
	var out []string
	for _, ev := range strings.Split(strings.TrimSuffix(body, "\n\n"), "\n\n") {
		var data []string
		for _, l := range strings.Split(ev, "\n") {
			d, ok := strings.CutPrefix(l, "data: ")
			if !ok {
				t.Fatalf("line %q of event %q is not a data field", l, ev)
			}
			data = append(data, d)
		}
		out = append(out, strings.Join(data, "\n"))
	}
	return out
}

// SplitAt cuts b into chunks at the lengths cuts gives (each byte of cuts
// is one chunk's length, 0 an empty chunk); the rest of b is the last chunk.
func SplitAt(b, cuts []byte) [][]byte {
	var out [][]byte
	for _, c := range cuts {
		n := min(int(c), len(b))
		out = append(out, b[:n])
		b = b[n:]
	}
	return append(out, b)
}
