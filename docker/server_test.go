package docker

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchyard/switchyard/internal/testutil"
)

// The example model the contract tests serve.
const (
	exampleModel = "../examples/models/langid"
	germanText   = `{"inputs": "Das ist ein ganz gewöhnlicher deutscher Satz über das Wetter von morgen."}`
)

// upLimit bounds the wait for a server or a model to come up: a guard
// against a hung test, not a measurement.
const upLimit = 2 * time.Minute

// liveServer is the real switchyard started through entrypoint.sh, as a
// container would start it.
type liveServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	url    string // http://127.0.0.1:port: inference and management
	out    *testutil.Buffer
	done   chan struct{}
	err    error
	client *http.Client
}

// needServer skips in -short mode and when the tests' interpreter (the
// project's .venv, or $SWITCHYARD_TEST_PYTHON) is missing or lacks numpy,
// which the example model imports. It returns that interpreter: the
// image's, /opt/switchyard/venv/bin/python, is not on this machine.
func needServer(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping a test with the real server and a Python worker")
	}
	python := testutil.Python(t)
	if err := exec.Command(python, "-c", "import numpy").Run(); err != nil {
		t.Skipf("%s with numpy is not available: %v", python, err)
	}
	return python
}

// startImage builds the server, puts it on the sandbox's PATH and runs
// "entrypoint.sh serve" with env. The only settings the test adds are a
// loopback address (tests listen on 127.0.0.1 only), a socket folder of its
// own and the tests' interpreter in place of the image's; the management
// address is left to the entrypoint.
func startImage(t *testing.T, s *sandbox, env ...string) *liveServer {
	t.Helper()
	python := needServer(t)
	buildServer(t, filepath.Join(s.vars["BIN"], "switchyard"))
	script, err := filepath.Abs("entrypoint.sh")
	if err != nil {
		t.Fatal(err)
	}
	l := &liveServer{t: t, out: &testutil.Buffer{}, done: make(chan struct{}),
		url:    "http://127.0.0.1:" + testutil.FreePort(t),
		client: &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: upLimit}}
	env = append(env, "SERVING_INFERENCE_ADDRESS="+l.url, "SERVING_SOCKET_DIR="+testutil.ShortDir(t),
		"SERVING_PYTHON_EXECUTABLE="+python)
	l.cmd = exec.Command("sh", script, "serve")
	l.cmd.Env, l.cmd.Dir = s.environ(env), s.base
	l.cmd.Stdout, l.cmd.Stderr = l.out, l.out
	if err := l.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { l.err = l.cmd.Wait(); close(l.done) }()
	t.Cleanup(l.kill)
	l.waitFor("/ping to answer", func() bool { code, _ := l.call("GET", "/ping", "", nil); return code != 0 })
	return l
}

// buildServer builds ./cmd/switchyard for this machine at path.
func buildServer(t *testing.T, path string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), "go", "build", "-o", path, "./cmd/switchyard")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
}

// call sends one request and returns the status (0 when there was no
// answer) and the body.
func (l *liveServer) call(method, path, body string, header map[string]string) (int, []byte) {
	req, err := http.NewRequestWithContext(l.t.Context(), method, l.url+path, strings.NewReader(body))
	if err != nil {
		l.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return 0, nil
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// mustCall is call that fails the test unless the status is want.
func (l *liveServer) mustCall(want int, method, path, body string, header map[string]string) []byte {
	l.t.Helper()
	code, b := l.call(method, path, body, header)
	if code != want {
		l.t.Fatalf("%s %s: %d %s, want %d\nserver output:\n%s", method, path, code, b, want, l.out)
	}
	return b
}

// waitFor polls cond until it holds; it fails the test when the server
// exits first or upLimit passes.
func (l *liveServer) waitFor(what string, cond func() bool) {
	l.t.Helper()
	deadline := time.Now().Add(upLimit)
	for !cond() {
		select {
		case <-l.done:
			l.t.Fatalf("the server exited (%v) while waiting for %s\n%s", l.err, what, l.out)
		default:
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("no %s within %v\n%s", what, upLimit, l.out)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// healthy reports whether /ping says every named model is Healthy.
func (l *liveServer) healthy(names ...string) bool {
	code, body := l.call("GET", "/ping", "", nil)
	var ping map[string]struct{ Status string }
	if code != http.StatusOK || json.Unmarshal(body, &ping) != nil {
		return false
	}
	for _, n := range names {
		if ping[n].Status != "Healthy" {
			return false
		}
	}
	return true
}

// stop sends SIGTERM to the process the test started (the entrypoint's
// pid, which exec handed to the server) and waits for it to end.
func (l *liveServer) stop() error {
	l.t.Helper()
	if err := l.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		l.t.Fatal(err)
	}
	select {
	case <-l.done:
		return l.err
	case <-time.After(upLimit):
		l.t.Fatalf("the server did not stop within %v of SIGTERM\n%s", upLimit, l.out)
		return nil
	}
}

// kill ends the server if a failed test left it running.
func (l *liveServer) kill() {
	l.client.CloseIdleConnections()
	select {
	case <-l.done:
	default:
		_ = l.cmd.Process.Kill()
		<-l.done
	}
}

// workerPIDs returns the pids of a model's workers from its describe record.
func (l *liveServer) workerPIDs(name string) []int {
	var desc []struct {
		Models []struct {
			WorkerGroups []struct {
				Workers []struct{ PID int }
			}
		}
	}
	body := l.mustCall(http.StatusOK, "GET", "/models/"+name, "", nil)
	if err := json.Unmarshal(body, &desc); err != nil {
		l.t.Fatalf("describe %s: %v: %s", name, err, body)
	}
	var pids []int
	for _, d := range desc {
		for _, m := range d.Models {
			for _, g := range m.WorkerGroups {
				for _, w := range g.Workers {
					pids = append(pids, w.PID)
				}
			}
		}
	}
	return pids
}

// modelNames returns the names GET /models lists.
func (l *liveServer) modelNames() []string {
	l.t.Helper()
	var list struct{ Models []struct{ ModelName string } }
	body := l.mustCall(http.StatusOK, "GET", "/models", "", nil)
	if err := json.Unmarshal(body, &list); err != nil {
		l.t.Fatalf("GET /models: %v: %s", err, body)
	}
	var names []string
	for _, m := range list.Models {
		names = append(names, m.ModelName)
	}
	return names
}

// topLabel decodes a langid answer and returns its best label.
func topLabel(t *testing.T, body []byte) string {
	t.Helper()
	var ranked []struct {
		Label string
		Score float64
	}
	if err := json.Unmarshal(body, &ranked); err != nil || len(ranked) == 0 {
		t.Fatalf("answer %s: %v", body, err)
	}
	return ranked[0].Label
}
