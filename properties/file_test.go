package properties

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hangLimit bounds a read that must return at once: a read that blocks on a
// named pipe, or never ends on /dev/zero, fails the test instead of hanging
// it. It is no timing threshold; the measured time is logged.
const hangLimit = 30 * time.Second

// readGuarded runs ReadRegularFile in a goroutine and fails the test if it
// does not return within hangLimit.
func readGuarded(t *testing.T, path string, limit int64) ([]byte, error) {
	t.Helper()
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		data, err := ReadRegularFile(path, limit)
		done <- result{data, err}
	}()
	select {
	case r := <-done:
		t.Logf("%s: answered in %v", filepath.Base(path), time.Since(start))
		return r.data, r.err
	case <-time.After(hangLimit):
		t.Fatalf("ReadRegularFile(%s) did not return within %v", path, hangLimit)
		return nil, nil
	}
}

// fifo makes a named pipe at path; nobody ever writes to it.
func fifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
}

func TestReadRegularFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	link := func(name, target string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	small := write("small", "batch_size=2\n")
	big := write("big", strings.Repeat("x", 101))
	pipe := filepath.Join(dir, "pipe")
	fifo(t, pipe)
	tests := []struct {
		name    string
		path    string
		want    string
		err     error
		message string
	}{
		{"regular", small, "batch_size=2\n", nil, ""},
		{"link to a regular file", link("ok-link", small), "batch_size=2\n", nil, ""},
		{"exactly the limit", write("limit", strings.Repeat("y", 100)), strings.Repeat("y", 100), nil, ""},
		{"larger than the limit", big, "", ErrFile, "is larger than 100 bytes"},
		{"link to /dev/zero", link("zero", "/dev/zero"), "", ErrFile, "is a character device, not a regular file"},
		{"named pipe", pipe, "", ErrFile, "is a named pipe, not a regular file"},
		{"link to a named pipe", link("pipe-link", pipe), "", ErrFile, "is a named pipe"},
		{"folder", dir, "", ErrFile, "is a folder"},
		{"missing", filepath.Join(dir, "none"), "", fs.ErrNotExist, ""},
		{"broken link", link("dangling", filepath.Join(dir, "none")), "", fs.ErrNotExist, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, err := readGuarded(t, tt.path, 100)
			if !errors.Is(err, tt.err) || tt.err == nil && err != nil {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if string(data) != tt.want {
				t.Errorf("data %q, want %q", data, tt.want)
			}
			if tt.message != "" && (!strings.Contains(err.Error(), tt.message) || !strings.Contains(err.Error(), tt.path)) {
				t.Errorf("message %q does not name the file and say %q", err, tt.message)
			}
		})
	}
}

// TestOpenRegularPipe checks the second line of defence: a path that passed
// the first check but is a named pipe by the time it is opened is refused
// without blocking on the pipe's missing writer.
func TestOpenRegularPipe(t *testing.T) {
	pipe := filepath.Join(t.TempDir(), "pipe")
	fifo(t, pipe)
	done := make(chan error, 1)
	go func() {
		f, err := openRegular(pipe, MaxFileSize)
		if f != nil {
			f.Close()
		}
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrFile) {
			t.Fatalf("openRegular(pipe) = %v, want ErrFile", err)
		}
	case <-time.After(hangLimit):
		t.Fatal("openRegular blocked on a named pipe")
	}
}

func TestLoadModelHostileFile(t *testing.T) {
	tests := []struct {
		name string
		make func(t *testing.T, file string)
		msg  string
	}{
		{"dev zero", func(t *testing.T, file string) {
			if err := os.Symlink("/dev/zero", file); err != nil {
				t.Fatal(err)
			}
		}, "character device"},
		{"fifo", func(t *testing.T, file string) { fifo(t, file) }, "named pipe"},
		{"too large", func(t *testing.T, file string) {
			if err := os.WriteFile(file, []byte("# "+strings.Repeat("x", MaxFileSize)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "larger than 1048576 bytes"},
		{"broken link", func(t *testing.T, file string) {
			if err := os.Symlink(filepath.Join(filepath.Dir(file), "gone"), file); err != nil {
				t.Fatal(err)
			}
		}, "does not exist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, ModelFile)
			tt.make(t, file)
			done := make(chan error, 1)
			go func() { _, err := LoadModel(dir, nil, nil); done <- err }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), tt.msg) || !strings.Contains(err.Error(), file) {
					t.Fatalf("LoadModel = %v, want an error naming %s that says %q", err, file, tt.msg)
				}
			case <-time.After(hangLimit):
				t.Fatal("LoadModel did not return")
			}
		})
	}
}

func TestQuote(t *testing.T) {
	long := strings.Repeat("a", 10000)
	tests := []struct{ in, want string }{
		{"x", `"x"`},
		{"a\nb", `"a\nb"`},
		{long, `"` + long[:maxQuote] + `"...`},
		{strings.Repeat("é", 40), `"` + strings.Repeat("é", 32) + `"...`},
	}
	for _, tt := range tests {
		if got := quote(tt.in); got != tt.want {
			t.Errorf("quote(%.20q...) = %.80s, want %.80s", tt.in, got, tt.want)
		}
	}
	err := (&Error{File: "f", Line: 1, Key: long, Msg: "m", Err: ErrSyntax}).Error()
	if len(err) > 200 {
		t.Errorf("an error about a 10 KB key is %d bytes long", len(err))
	}
}

func TestLongValueMessage(t *testing.T) {
	dir := modelDirWith(t, "batch_size="+strings.Repeat("9x", 5000)+"\n")
	_, err := LoadModel(dir, nil, nil)
	if err == nil || len(err.Error()) > 300 {
		t.Fatalf("error for a 10 KB value: %d bytes: %.400v", len(errText(err)), err)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
