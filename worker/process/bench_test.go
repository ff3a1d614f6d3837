package process

import (
	"bufio"
	"context"
	"encoding/binary"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/internal/testutil"
	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/worker/wire"
)

// BenchmarkRoundTrip measures one request's trip through the real runtime
// with a handler that does nothing, one at a time and in a batch of 8, next
// to two floors: this package's client against the Go fake worker (the
// front-end's own cost), and a bare Python echo of the same bytes over the
// same kind of socket (Python's least cost).
func BenchmarkRoundTrip(b *testing.B) {
	in := input("hello", "content-type", "text/plain")
	b.Run("runtime-noop", func(b *testing.B) {
		p := benchRuntime(b)
		for b.Loop() {
			if _, err := p.predict(context.Background(), in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("runtime-batch8", func(b *testing.B) {
		p := benchRuntime(b)
		ins := make([]*message.Input, 8)
		for i := range ins {
			ins[i] = in
		}
		for b.Loop() {
			if _, err := p.predictBatch(context.Background(), ins); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("go-fake-echo", func(b *testing.B) {
		h := newHarness(b)
		h.spec.Logger = zap.NewNop()
		p := h.start(b)
		for b.Loop() {
			if _, err := p.predict(context.Background(), in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("bare-echo", func(b *testing.B) {
		frame, err := wire.AppendRequest(nil, in)
		if err != nil {
			b.Fatal(err)
		}
		conn := bareEcho(b)
		buf := make([]byte, 4+len(frame))
		for b.Loop() {
			echoOnce(b, conn, frame, buf)
		}
	})
}

func benchRuntime(b *testing.B) *Process {
	h := pythonHarness(b, "echo")
	h.spec.Model, h.spec.ModelDir, h.spec.Logger = "noop", filepath.Join(testutil.Root(b), "bench", "python", "noop"), zap.NewNop()
	return h.start(b)
}

// bareEcho starts the runtime's bare echo and returns a connection to it;
// closing the connection ends it.
func bareEcho(b *testing.B) net.Conn {
	h := pythonHarness(b, "echo")
	if err := os.MkdirAll(h.spec.SocketDir, 0o700); err != nil {
		b.Fatal(err)
	}
	sock := filepath.Join(h.spec.SocketDir, "bare.sock")
	cmd := exec.Command(h.spec.Python, filepath.Join(testutil.Root(b), "bench", "python", "bare_echo.py"), "--sock-name", sock)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, ReadyLine) {
		b.Fatalf("bare echo did not start: %q, %v", line, err)
	}
	conn, err := net.Dial("unix", sock)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		conn.Close()
		_ = cmd.Wait()
	})
	return conn
}

// echoOnce sends frame as int32 length + bytes and reads it back into buf.
func echoOnce(b *testing.B, conn net.Conn, frame, buf []byte) {
	binary.BigEndian.PutUint32(buf, uint32(len(frame)))
	copy(buf[4:], frame)
	if _, err := conn.Write(buf); err != nil {
		b.Fatal(err)
	}
	if _, err := io.ReadFull(conn, buf); err != nil {
		b.Fatal(err)
	}
}
