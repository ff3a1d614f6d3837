//go:build linux

package process

import (
	"bufio"
	"os"
	"strings"
)

// procNetUnix lists the Unix sockets of this network namespace.
const procNetUnix = "/proc/net/unix"

// socketListening reports whether a live socket is bound to path, from the
// kernel's list of Unix sockets. Without the list it says no.
func socketListening(path string) bool {
	f, err := os.Open(procNetUnix)
	if err != nil {
		return false
	}
	defer f.Close()
	return boundIn(bufio.NewScanner(f), path)
}

// boundIn reports whether a line of /proc/net/unix ends with path, the last
// column of a bound socket.
func boundIn(sc *bufio.Scanner, path string) bool {
	suffix := " " + path
	for sc.Scan() {
		if strings.HasSuffix(sc.Text(), suffix) {
			return true
		}
	}
	return false
}
