package process

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyard/switchyard/internal/testutil"
)

// TestCleanStaleSockets fills a socket folder the way a crashed front-end
// leaves it, next to a live worker of another front-end: only the dead
// sockets go.
func TestCleanStaleSockets(t *testing.T) {
	dir := testutil.ShortDir(t)
	stale := []string{SocketPath(dir, 19000), SocketPath(dir, 19007)}
	for _, p := range stale {
		staleSocket(t, p)
	}
	live := SocketPath(dir, 19001)
	liveSocket(t, live)
	kept := []string{live, SocketPath(dir, 19002), filepath.Join(dir, "other.sock")}
	for _, p := range kept[1:] {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	n, err := CleanStaleSockets(dir)
	if err != nil || n != len(stale) {
		t.Fatalf("CleanStaleSockets = %d, %v; want %d", n, err, len(stale))
	}
	for _, p := range stale {
		if !fileGone(p) {
			t.Errorf("stale socket %s kept", p)
		}
	}
	for _, p := range kept {
		if fileGone(p) {
			t.Errorf("%s removed", p)
		}
	}
	if n, err := CleanStaleSockets(filepath.Join(dir, "missing")); n != 0 || err != nil {
		t.Errorf("on a missing folder: %d, %v", n, err)
	}
}
