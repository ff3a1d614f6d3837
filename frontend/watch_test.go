package frontend

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/switchyard/switchyard/batching"
)

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func TestWatchPeer(t *testing.T) {
	t.Run("hang-up cancels", func(t *testing.T) {
		client, server := tcpPair(t)
		ctx, cancel := context.WithCancelCause(context.Background())
		w := watchPeer(server, cancel)
		client.Close()
		waitDone(t, ctx)
		w.stop()
		if !errors.Is(context.Cause(ctx), batching.ErrClientGone) {
			t.Errorf("cause = %v", context.Cause(ctx))
		}
	})
	t.Run("stop leaves the connection usable", func(t *testing.T) {
		client, server := tcpPair(t)
		ctx, cancel := context.WithCancelCause(context.Background())
		w := watchPeer(server, cancel)
		w.stop()
		if ctx.Err() != nil {
			t.Fatal("stop canceled the job")
		}
		if _, err := client.Write([]byte("x")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 1)
		if n, err := server.Read(buf); n != 1 || err != nil {
			t.Fatalf("read after stop: %d %v (deadline left behind?)", n, err)
		}
	})
	t.Run("data ends the watch without a verdict", func(t *testing.T) {
		client, server := tcpPair(t)
		ctx, cancel := context.WithCancelCause(context.Background())
		w := watchPeer(server, cancel)
		if _, err := client.Write([]byte("GET")); err != nil {
			t.Fatal(err)
		}
		<-w.done
		w.stop()
		if ctx.Err() != nil {
			t.Error("readable data was taken for a hang-up")
		}
	})
	t.Run("not a socket", func(t *testing.T) {
		a, b := net.Pipe()
		defer a.Close()
		defer b.Close()
		_, cancel := context.WithCancelCause(context.Background())
		defer cancel(nil)
		w := watchPeer(a, cancel)
		if w != nil {
			t.Fatal("watching a pipe")
		}
		w.stop() // a nil watch stops as a no-op
	})
}
