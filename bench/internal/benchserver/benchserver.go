// Package benchserver starts a switchyard binary as a child process for the
// benchmark commands (bench/membench, bench/residencybench): it writes the
// server's config.properties into a folder of its own, waits until /ping
// answers 200, and stops the process by its pid.
package benchserver

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// Server is one running switchyard process.
type Server struct {
	// Inference and Management are the listeners' base URLs.
	Inference, Management string
	// Dir holds the config, the server's log and the workers' sockets; Stop
	// removes it.
	Dir string

	cmd    *exec.Cmd
	exited chan struct{}
}

// Start runs `bin serve` with a config.properties of keys, to which it adds
// inference_address and management_address (free loopback ports) and
// socket_dir, unless keys set them, and waits up to limit for /ping to
// answer 200. On an error the process, if it started, is stopped again.
func Start(ctx context.Context, bin string, keys map[string]string, limit time.Duration) (*Server, error) {
	dir, err := os.MkdirTemp("", "switchyard-bench")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, exited: make(chan struct{})}
	conf, err := s.writeConfig(keys)
	if err == nil {
		err = s.start(bin, conf)
	}
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	if err := s.waitReady(ctx, limit); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Pid returns the server's process id.
func (s *Server) Pid() int { return s.cmd.Process.Pid }

// writeConfig writes config.properties, keys sorted, and returns its path.
func (s *Server) writeConfig(keys map[string]string) (string, error) {
	all := map[string]string{"socket_dir": s.Dir}
	for _, k := range []string{"inference_address", "management_address"} {
		addr, err := freeAddr()
		if err != nil {
			return "", err
		}
		all[k] = "http://" + addr
	}
	maps.Copy(all, keys)
	s.Inference, s.Management = all["inference_address"], all["management_address"]
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(all)) {
		fmt.Fprintf(&b, "%s=%s\n", k, all[k])
	}
	path := filepath.Join(s.Dir, "config.properties")
	return path, os.WriteFile(path, []byte(b.String()), 0o600)
}

// start starts the process with its output in server.log.
func (s *Server) start(bin, conf string) error {
	logf, err := os.Create(filepath.Join(s.Dir, "server.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	s.cmd = exec.Command(bin, "serve", "--config", conf)
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	if err := s.cmd.Start(); err != nil {
		return err
	}
	go func() { _ = s.cmd.Wait(); close(s.exited) }()
	return nil
}

// waitReady waits until /ping answers 200.
func (s *Server) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return s.Explain(fmt.Errorf("switchyard exited at start"))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		resp, err := http.Get(s.Inference + "/ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return s.Explain(fmt.Errorf("switchyard not ready within %v", limit))
}

// Stop ends the server with SIGTERM (SIGKILL after 30 s), waits for it and
// removes its folder.
func (s *Server) Stop() {
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
	_ = os.RemoveAll(s.Dir)
}

// Explain adds the end of the server's log to err.
func (s *Server) Explain(err error) error {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "server.log"))
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return fmt.Errorf("%w (server log: %s)", err, bytes.TrimSpace(b))
}

// freeAddr returns a loopback address with a port nobody listens on now.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}
