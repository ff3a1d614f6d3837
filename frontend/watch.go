package frontend

import (
	"context"
	"net"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/switchyard/switchyard/batching"
)

// peerWatch notices a client that hangs up while its request waits or its
// answer streams.
// fasthttp does not read from a connection while its handler runs, so the
// watcher peeks at the socket through the runtime's poller: it sleeps until
// the socket is readable, then a zero-byte peek means the peer closed.
type peerWatch struct {
	conn net.Conn
	done chan struct{}
}

// past is a read deadline that wakes a blocked watcher at once.
var past = time.Unix(1, 0)

// watchPeer starts watching conn and calls cancel(batching.ErrClientGone)
// when the peer closes it. It returns nil (no detection) when conn is not a
// socket the runtime polls.
func watchPeer(conn net.Conn, cancel context.CancelCauseFunc) *peerWatch {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	// fasthttp's read deadline for this request would end the watch early.
	if conn.SetReadDeadline(time.Time{}) != nil {
		return nil
	}
	w := &peerWatch{conn: conn, done: make(chan struct{})}
	go w.run(rc, cancel)
	return w
}

func (w *peerWatch) run(rc syscall.RawConn, cancel context.CancelCauseFunc) {
	defer close(w.done)
	if peerClosed(rc) {
		cancel(batching.ErrClientGone)
	}
}

// peerClosed blocks until the socket is readable or its read deadline
// passes, and reports whether the peer closed (or reset) the connection.
// Readable data (a pipelined request) ends the watch without a verdict.
func peerClosed(rc syscall.RawConn) bool {
	var buf [1]byte
	closed := false
	err := rc.Read(func(fd uintptr) bool {
		for {
			n, _, err := unix.Recvfrom(int(fd), buf[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				return false
			case err != nil || n == 0:
				closed = true
			}
			return true
		}
	})
	return err == nil && closed
}

// stop ends the watch and waits for its goroutine: a read deadline in the
// past wakes it, and the deadline is cleared again before the connection
// goes back to fasthttp. A nil watch is a no-op.
func (w *peerWatch) stop() {
	if w == nil {
		return
	}
	_ = w.conn.SetReadDeadline(past)
	<-w.done
	_ = w.conn.SetReadDeadline(time.Time{})
}
