package process

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
)

// SocketPrefix and FirstSocketID make the socket names:
// <socket_dir>/switchyard.sock.19000, .19001, ...
const (
	SocketPrefix  = "switchyard.sock."
	FirstSocketID = 19000
)

// maxSocketTries bounds the numbers skipped because another live process
// holds their socket.
const maxSocketTries = 100

// maxSocketPath is the longest path a Unix socket can be bound to (108 bytes
// with the final NUL on Linux, 104 on the BSDs).
const maxSocketPath = 103

// ErrSocket means no socket path could be prepared for a worker.
var ErrSocket = errors.New("worker: no socket path")

// socketCounter counts the socket numbers handed out by this front-end. It
// only grows, so a restarted worker never reuses a path another worker may
// still hold.
var socketCounter atomic.Int64

func nextSocketID() int { return FirstSocketID + int(socketCounter.Add(1)-1) }

// SocketPath returns the socket path of worker id in dir.
func SocketPath(dir string, id int) string {
	return filepath.Join(dir, SocketPrefix+strconv.Itoa(id))
}

// allocateSocket creates dir (0700) when missing and returns the next socket
// number whose path is free, removing a stale socket file left there by a
// process that is gone. A path that a live listener holds, or that is not a
// socket, is skipped rather than removed.
func allocateSocket(dir string) (int, string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, "", fmt.Errorf("%w: %w", ErrSocket, err)
	}
	for range maxSocketTries {
		id := nextSocketID()
		path := SocketPath(dir, id)
		if len(path) > maxSocketPath {
			return 0, "", fmt.Errorf("%w: %s is longer than %d bytes", ErrSocket, path, maxSocketPath)
		}
		free, err := clearStale(path)
		if err != nil {
			return 0, "", fmt.Errorf("%w: %w", ErrSocket, err)
		}
		if free {
			return id, path, nil
		}
	}
	return 0, "", fmt.Errorf("%w: %d paths in %s are held by other processes", ErrSocket, maxSocketTries, dir)
}

// clearStale makes path free when it can: nothing there, or a socket that
// no process listens on (which it removes). It reports whether path is free.
func clearStale(path string) (bool, error) {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	if err != nil {
		return false, err
	}
	if fi.Mode().Type() != fs.ModeSocket || socketListening(path) {
		return false, nil
	}
	if err := removeSocket(path); err != nil {
		return false, err
	}
	return true, nil
}

// removeSocket removes a socket file, and the <socket>.pid file that DJL's
// own engine writes beside it; files already gone are fine.
func removeSocket(path string) error {
	_ = os.Remove(path + ".pid")
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
