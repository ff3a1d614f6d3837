package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// readyPrefix starts the line hello prints once it listens.
const readyPrefix = "listening "

// helloBody is what the bare server answers to every request.
var helloBody = []byte("hello")

// newHelloServer returns the bare server: every request gets 200 "hello".
func newHelloServer() *fasthttp.Server {
	return &fasthttp.Server{
		Name: "hello",
		Handler: func(ctx *fasthttp.RequestCtx) {
			ctx.SetContentType("text/plain")
			ctx.SetBody(helloBody)
		},
	}
}

// helloCmd serves the bare server until ctx ends.
func helloCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("hello", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:0", "address to listen on")
	if err := parseFlags(fs, args, stderr); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, readyPrefix+ln.Addr().String())
	return serveHello(ctx, ln)
}

// serveHello serves on ln until ctx ends, then shuts the server down and
// waits for it. It closes ln itself as well: a Shutdown that comes before
// Serve has registered ln returns at once and leaves Serve accepting.
func serveHello(ctx context.Context, ln net.Listener) error {
	srv := newHelloServer()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	err := srv.Shutdown()
	_ = ln.Close() // Serve's accept then ends; closing twice only errs
	if serr := <-done; err == nil {
		err = serr
	}
	return err
}

// helloProc is a bare server running in a subprocess.
type helloProc struct {
	cmd  *exec.Cmd
	addr string
}

// errNoHello means the subprocess did not say where it listens.
var errNoHello = errors.New("loadgen: the hello server did not start")

// startHello runs "exe hello" in a subprocess and waits for its address.
// The subprocess gets the default GOMAXPROCS, as the server it is compared
// with does, whatever -procs says.
func startHello(ctx context.Context, exe string) (*helloProc, error) {
	cmd := exec.CommandContext(ctx, exe, "hello")
	cmd.Env = withoutEnv(os.Environ(), "GOMAXPROCS")
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	addr, ok := strings.CutPrefix(strings.TrimSpace(line), readyPrefix)
	if err != nil || !ok {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return nil, fmt.Errorf("%w: first line %q: %v", errNoHello, line, err)
	}
	return &helloProc{cmd: cmd, addr: addr}, nil
}

// stop ends the subprocess with SIGTERM and waits for it.
func (h *helloProc) stop() {
	_ = h.cmd.Process.Signal(syscall.SIGTERM)
	_ = h.cmd.Wait()
}

// withoutEnv returns env without the variable name.
func withoutEnv(env []string, name string) []string {
	out := make([]string, 0, len(env))
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}
