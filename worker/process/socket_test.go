package process

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestClearStale(t *testing.T) {
	tests := []struct {
		name     string
		make     func(t *testing.T, path string)
		wantFree bool
		wantKept bool
	}{
		{name: "nothing there", make: func(*testing.T, string) {}, wantFree: true},
		{name: "stale socket", make: staleSocket, wantFree: true},
		{name: "live socket", make: liveSocket, wantKept: true},
		{name: "regular file", make: func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("mine"), 0o600); err != nil {
				t.Fatal(err)
			}
		}, wantKept: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "sy")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(dir)
			path := filepath.Join(dir, "s")
			tt.make(t, path)
			free, err := clearStale(path)
			if err != nil || free != tt.wantFree {
				t.Errorf("clearStale = %v, %v; want free=%v", free, err, tt.wantFree)
			}
			if kept := !fileGone(path); kept != tt.wantKept {
				t.Errorf("file kept: %v, want %v", kept, tt.wantKept)
			}
		})
	}
}

// liveSocket binds a listener at path for the rest of the test.
func liveSocket(t *testing.T, path string) {
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
}

// TestLiveSocketSkipped starts a worker whose next socket path is held by a
// live listener (another front-end sharing the socket dir): the worker takes
// the following number and the listener keeps its file.
func TestLiveSocketSkipped(t *testing.T) {
	h := newHarness(t)
	if err := os.MkdirAll(h.spec.SocketDir, 0o700); err != nil {
		t.Fatal(err)
	}
	next := FirstSocketID + int(socketCounter.Load())
	held := SocketPath(h.spec.SocketDir, next)
	liveSocket(t, held)
	p := h.start(t)
	if p.id != next+1 {
		t.Errorf("worker got socket %d, want %d", p.id, next+1)
	}
	if fileGone(held) {
		t.Error("the live socket's file was removed")
	}
}

func TestBoundIn(t *testing.T) {
	list := "Num       RefCount Protocol Flags    Type St Inode Path\n" +
		"0000000000000000: 00000002 00000000 00010000 0001 01 23456 /tmp/s/switchyard.sock.19000\n" +
		"0000000000000000: 00000003 00000000 00000000 0001 03 23457\n"
	tests := []struct {
		path string
		want bool
	}{
		{"/tmp/s/switchyard.sock.19000", true},
		{"/tmp/s/switchyard.sock.1900", false},
		{"/tmp/s/switchyard.sock.19001", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			if got := boundIn(bufio.NewScanner(strings.NewReader(list)), tt.path); got != tt.want {
				t.Errorf("boundIn(%s) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

func TestSocketPathTooLong(t *testing.T) {
	dir := filepath.Join(t.TempDir(), strings.Repeat("d", maxSocketPath))
	if _, _, err := allocateSocket(dir); err == nil {
		t.Error("a socket path longer than the limit was accepted")
	}
}
