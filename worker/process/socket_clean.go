package process

import (
	"path/filepath"
)

// CleanStaleSockets removes the worker socket files in dir that no process
// listens on any more: what a front-end that crashed left behind. Sockets of
// live workers (another server sharing the folder) are left alone. It
// returns how many files it removed.
func CleanStaleSockets(dir string) (int, error) {
	paths, err := filepath.Glob(filepath.Join(dir, SocketPrefix+"*"))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, p := range paths {
		free, err := clearStale(p)
		if err != nil {
			return n, err
		}
		if free {
			n++
		}
	}
	return n, nil
}
