package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// python is the interpreter the workers and the Python clients run: the
// project's virtual environment (testutil.Python), set by needE2E.
var (
	python     string
	pythonOnce sync.Once
)

// binary is the switchyard binary TestMain builds.
var binary string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if !isShort() {
		dir, err := os.MkdirTemp("", "switchyard-e2e-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		binary = filepath.Join(dir, "switchyard")
		build := exec.Command("go", "build", "-o", binary, "../cmd/switchyard")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build switchyard:", err)
			return 1
		}
	}
	return m.Run()
}

// isShort reads -short before flag parsing in TestMain is done by m.Run.
func isShort() bool {
	for _, a := range os.Args[1:] {
		if a == "-test.short" || a == "-test.short=true" {
			return true
		}
	}
	return false
}

// needE2E skips a test in -short mode or without the Python workers need.
func needE2E(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	p := testutil.Python(t)
	pythonOnce.Do(func() { python = p })
}

// Options say how to start a server.
type Options struct {
	Store  string            // model_store; default: an empty temp folder
	Models string            // load_models; default ALL
	Config map[string]string // more config.properties keys
	Env    []string          // more environment
	Shared bool              // one listener for inference and management
	Args   []string          // more serve flags (--log-level debug)
}

// Server is a switchyard process started by a test.
type Server struct {
	t          testing.TB
	cmd        *exec.Cmd
	Inference  string // base URL, http://127.0.0.1:port
	Management string
	SocketDir  string
	log        *testutil.Buffer
	exited     chan struct{}
	waitErr    error
}

// StartServer starts switchyard and waits until it answers /ping.
func StartServer(t testing.TB, o Options) *Server {
	t.Helper()
	needE2E(t)
	s := &Server{t: t, log: &testutil.Buffer{}, exited: make(chan struct{})}
	s.SocketDir = testutil.ShortDir(t)
	conf := s.writeConfig(o)
	s.cmd = exec.Command(binary, append([]string{"serve", "--config", conf}, o.Args...)...)
	s.cmd.Env = append(os.Environ(), o.Env...)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.waitErr = s.cmd.Wait(); close(s.exited) }()
	t.Cleanup(s.cleanup)
	s.waitUp(30 * time.Second)
	return s
}

func (s *Server) writeConfig(o Options) string {
	inf := "127.0.0.1:" + testutil.FreePort(s.t)
	mgmt := inf
	if !o.Shared {
		mgmt = "127.0.0.1:" + testutil.FreePort(s.t)
	}
	s.Inference, s.Management = "http://"+inf, "http://"+mgmt
	store := o.Store
	if store == "" {
		store = s.t.TempDir()
	}
	store, err := filepath.Abs(store)
	if err != nil {
		s.t.Fatal(err)
	}
	keys := map[string]string{
		"inference_address": s.Inference, "management_address": s.Management,
		"model_store": store, "socket_dir": s.SocketDir, "python_executable": python,
		"load_models": "ALL",
	}
	if o.Models != "" {
		keys["load_models"] = o.Models
	}
	for k, v := range o.Config {
		keys[k] = v
	}
	var b strings.Builder
	names := make([]string, 0, len(keys))
	for k := range keys {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		fmt.Fprintf(&b, "%s=%s\n", k, keys[k])
	}
	path := filepath.Join(s.t.TempDir(), "config.properties")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		s.t.Fatal(err)
	}
	return path
}

func (s *Server) waitUp(limit time.Duration) {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			s.t.Fatalf("switchyard exited at start: %v\n%s", s.waitErr, s.Log())
		default:
		}
		resp, err := http.Get(s.Inference + "/ping")
		if err == nil {
			resp.Body.Close()
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("switchyard did not answer /ping within %v\n%s", limit, s.Log())
}

// WaitStatus waits until every named model has the status want.
func (s *Server) WaitStatus(limit time.Duration, want string, models ...string) {
	s.t.Helper()
	deadline := time.Now().Add(limit)
	for {
		var ping map[string]api.ModelHealth
		_, body := s.Get(s.Inference + "/ping")
		_ = json.Unmarshal(body, &ping)
		ok := true
		for _, m := range models {
			if ping[m].Status != want {
				ok = false
			}
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("models %v not %s within %v: %s\n%s", models, want, limit, body, s.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// PID returns the server's process id.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Log returns what the server has written so far.
func (s *Server) Log() string { return s.log.String() }

// Signal sends sig to the server.
func (s *Server) Signal(sig syscall.Signal) {
	_ = s.cmd.Process.Signal(sig)
}

// Wait waits up to limit for the server to exit and reports whether it did.
func (s *Server) Wait(limit time.Duration) bool {
	select {
	case <-s.exited:
		return true
	case <-time.After(limit):
		return false
	}
}

func (s *Server) cleanup() {
	select {
	case <-s.exited:
	default:
		s.Signal(syscall.SIGTERM)
		if !s.Wait(20 * time.Second) {
			s.Signal(syscall.SIGKILL)
			s.Wait(5 * time.Second)
		}
	}
	if s.t.Failed() {
		s.t.Logf("server log:\n%s", s.Log())
	}
}

// Get fetches url and returns the status and body.
func (s *Server) Get(url string) (int, []byte) {
	return s.Do(http.MethodGet, url, "", nil)
}

// Do sends one request and returns the status and body.
func (s *Server) Do(method, url, contentType string, body []byte, headers ...string) (int, []byte) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, bytes.NewReader(body))
	if err != nil {
		s.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// Describe returns a model's describe record.
func (s *Server) Describe(model string) api.ModelRecord {
	s.t.Helper()
	code, body := s.Get(s.Management + "/models/" + model)
	var wf []api.Workflow
	if code != http.StatusOK || json.Unmarshal(body, &wf) != nil || len(wf) != 1 || len(wf[0].Models) != 1 {
		s.t.Fatalf("describe %s: %d %s", model, code, body)
	}
	return wf[0].Models[0]
}

// WorkerPIDs returns the pids of a model's workers that have a process.
func (s *Server) WorkerPIDs(model string) []int {
	var pids []int
	for _, g := range s.Describe(model).WorkerGroups {
		for _, w := range g.Workers {
			if w.PID > 0 {
				pids = append(pids, w.PID)
			}
		}
	}
	return pids
}

// WriteModel writes a model folder name in dir with the given files
// (serving.properties, model.py, ...) and returns its path.
func WriteModel(t testing.TB, dir, name string, files map[string]string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
	for f, content := range files {
		if err := os.WriteFile(filepath.Join(path, f), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}
