package testutil

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func TestFreePort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:"+FreePort(t))
	if err != nil {
		t.Fatalf("the free port is taken: %v", err)
	}
	ln.Close()
}

func TestShortDir(t *testing.T) {
	dir := ShortDir(t)
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("%s: %v", dir, err)
	}
	if sock := filepath.Join(dir, "switchyard.sock.19000"); len(sock) > 60 {
		t.Errorf("socket path %s is %d bytes", sock, len(sock))
	}
}

func TestProcessGone(t *testing.T) {
	if ProcessGone(os.Getpid()) {
		t.Error("this process is gone")
	}
	cmd := exec.Command("true")
	if err := cmd.Start(); err != nil {
		t.Skip(err)
	}
	pid := cmd.Process.Pid
	if !Poll(time.Minute, func() bool { return ProcessGone(pid) }) {
		t.Errorf("a child that exited (a zombie until waited for) is not gone")
	}
	_ = cmd.Wait()
	if !ProcessGone(pid) {
		t.Errorf("a child waited for is not gone")
	}
}

func TestCopyDir(t *testing.T) {
	src := t.TempDir()
	for _, f := range []string{"model.py", "sub/data.txt", "__pycache__/model.pyc"} {
		if err := os.MkdirAll(filepath.Join(src, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, f), []byte(f), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dst := CopyDir(t, src, filepath.Join(t.TempDir(), "copy"))
	for f, want := range map[string]bool{"model.py": true, "sub/data.txt": true, "__pycache__/model.pyc": false} {
		b, err := os.ReadFile(filepath.Join(dst, f))
		if got := err == nil && string(b) == f; got != want {
			t.Errorf("%s copied: %v (%v), want %v", f, got, err, want)
		}
	}
}

func TestPoll(t *testing.T) {
	n := 0
	if !Poll(time.Minute, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("Poll returned after %d checks", n)
	}
	if Poll(0, func() bool { return false }) {
		t.Error("Poll of a condition that never holds said it held")
	}
}

func TestBuffer(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { _, _ = b.Write([]byte("x")) })
	}
	wg.Wait()
	if b.String() != "xxxxxxxx" {
		t.Errorf("buffer %q", b.String())
	}
}
