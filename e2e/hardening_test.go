package e2e

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// The abuse cases of the hardening issue, against a real server with real
// Python workers, real model folders and real HTTP connections.

// hostileStore returns a model store with the probe model echo, a folder
// asking for 100000 workers, a model.py that fails at import, and folders
// whose serving.properties is a link to /dev/zero or a named pipe.
func hostileStore(t *testing.T) string {
	t.Helper()
	store := t.TempDir()
	probeModel(t, store, "echo", "minWorkers=1", "maxWorkers=1")
	probeModel(t, store, "forkbomb", "minWorkers=100000")
	WriteModel(t, store, "broken", map[string]string{
		"model.py":           "raise RuntimeError('broken on purpose')\n",
		"serving.properties": "minWorkers=1\nmaxWorkers=1\n",
	})
	for _, name := range []string{"zero", "fifo"} {
		dir := probeModel(t, store, name)
		props := filepath.Join(dir, "serving.properties")
		if err := os.Remove(props); err != nil {
			t.Fatal(err)
		}
		var err error
		if name == "zero" {
			err = os.Symlink("/dev/zero", props)
		} else {
			err = syscall.Mkfifo(props, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return store
}

// TestHardening runs the abuse cases against one server whose caps are 4
// workers per model and 8 in all, and whose allowed roots include /dev, so
// that a link to /dev/zero is refused for what it is.
func TestHardening(t *testing.T) {
	store := hostileStore(t)
	s := StartServer(t, Options{Store: store, Models: "echo", Config: map[string]string{
		"max_workers_per_model": "4", "max_workers_total": "8", "retry_threshold": "1",
		"allowed_model_roots": store + ",/dev", "max_request_size": "4096",
	}})
	s.WaitStatus(waitLimit, api.StatusHealthy, "echo")
	c := newClient(2)
	pids := s.WorkerPIDs("echo")
	refused := []manageCase{
		{name: "scale to a billion workers, asynchronous", method: "PUT",
			path: "/models/echo?min_worker=1000000000&max_worker=1000000000&synchronous=false",
			code: 400, errType: "BadRequestException", message: "max_workers_per_model (4)"},
		{name: "scale to a billion workers", method: "PUT", path: "/models/echo?min_worker=1000000000",
			code: 400, errType: "BadRequestException", message: "max_workers_per_model (4)"},
		{name: "folder asking for 100000 workers", method: "POST", path: "/models?url=forkbomb",
			code: 400, errType: "BadRequestException", message: "max_workers_per_model (4)"},
		{name: "register a billion workers, asynchronous", method: "POST",
			path: "/models?url=broken&min_worker=1000000000&max_worker=1000000000&synchronous=false",
			code: 400, errType: "BadRequestException", message: "max_workers_per_model (4)"},
		{name: "register past the total", method: "POST", path: "/models?url=forkbomb&model_name=fb&min_worker=0&max_worker=4", body: "",
			code: 200, status: `Model "fb" registered.`},
		{name: "and one more", method: "POST", path: "/models?url=forkbomb&model_name=fb2&min_worker=0&max_worker=4",
			code: 400, errType: "BadRequestException", message: "max_workers_total (8)"},
	}
	runManage(t, s, c, refused)
	t.Run("no worker started", func(t *testing.T) {
		if got := s.WorkerPIDs("echo"); !reflect.DeepEqual(got, pids) {
			t.Errorf("echo's workers %v, were %v", got, pids)
		}
		for model, want := range map[string]int{"echo": 1, "forkbomb": 0, "broken": 0, "fb": 0} {
			if n := s.started(model); n != want {
				t.Errorf("%d workers of %s started, want %d", n, model, want)
			}
		}
	})
	t.Run("asynchronous scale answers 202", func(t *testing.T) {
		r := send(c, http.MethodPut, s.Management+"/models/echo?min_worker=2&max_worker=2&synchronous=false", nil)
		if r.code != http.StatusAccepted {
			t.Fatalf("scale: %d %s", r.code, r.body)
		}
		testutil.WaitFor(t, waitLimit, "echo has 2 workers", func() bool { return len(s.WorkerPIDs("echo")) == 2 })
	})
	t.Run("hostile properties files", func(t *testing.T) { hostileFiles(t, s, c) })
	t.Run("failed synchronous registration leaves nothing", func(t *testing.T) { failedRegistration(t, s, c) })
	t.Run("both Content-Length and Transfer-Encoding", func(t *testing.T) {
		for _, base := range []string{s.Inference, s.Management} {
			checkSmuggling(t, base)
		}
	})
	t.Run("oversize upload with Expect: 100-continue", func(t *testing.T) { checkExpect(t, s) })
	t.Run("errors quote input briefly", func(t *testing.T) { checkQuoting(t, s, c) })
}

// hostileFiles registers the folders whose serving.properties is a link to
// /dev/zero and a named pipe: each is refused with 400 at once.
func hostileFiles(t *testing.T, s *Server, c *http.Client) {
	for _, tc := range []struct{ name, msg string }{{"zero", "character device"}, {"fifo", "named pipe"}} {
		r := send(c, http.MethodPost, s.Management+"/models?url="+tc.name, nil)
		t.Logf("%s: %d in %v", tc.name, r.code, r.took)
		if e, err := r.problem(); err != nil || r.code != 400 || !strings.Contains(e.Message, tc.msg) {
			t.Errorf("register %s: %d %s %v, want 400 saying %q", tc.name, r.code, r.body, err, tc.msg)
		}
	}
}

// failedRegistration registers the broken folder synchronously: the answer
// is an error, GET /models and /ping are as before, and describe says why
// the model is gone.
func failedRegistration(t *testing.T, s *Server, c *http.Client) {
	_, before := s.Get(s.Management + "/models")
	r := send(c, http.MethodPost, s.Management+"/models?url=broken", nil)
	if e, err := r.problem(); err != nil || r.code < 400 || !strings.Contains(e.Message, "broken on purpose") {
		t.Fatalf("register broken: %d %s %v", r.code, r.body, err)
	}
	if _, after := s.Get(s.Management + "/models"); !bytes.Equal(after, before) {
		t.Errorf("GET /models after a failed registration:\n%s\nbefore:\n%s", after, before)
	}
	if code, body := s.Get(s.Inference + "/ping"); code != http.StatusOK {
		t.Errorf("/ping after a failed registration: %d %s", code, body)
	}
	d := send(c, http.MethodGet, s.Management+"/models/broken", nil)
	if e, err := d.problem(); err != nil || d.code != 404 || !strings.Contains(e.Message, "registration failed") {
		t.Errorf("describe broken: %d %s %v", d.code, d.body, err)
	}
}

// checkSmuggling sends a request with both Content-Length and
// Transfer-Encoding, then a second request on the same connection: the
// first gets 400 with Connection: close, and the connection closes.
func checkSmuggling(t *testing.T, base string) {
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(waitLimit))
	req := "POST /models/echo/invoke HTTP/1.1\r\nHost: x\r\nContent-Length: 44\r\nTransfer-Encoding: chunked\r\n\r\n" +
		"0\r\n\r\nGET /models HTTP/1.1\r\nHost: x\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 400 || !resp.Close || !bytes.Contains(body, []byte("Transfer-Encoding")) {
		t.Errorf("%s: %d close %v %s, want 400 with Connection: close", base, resp.StatusCode, resp.Close, body)
	}
	if _, err := br.ReadByte(); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("%s: the connection stayed open (%v)", base, err)
	}
}

// checkExpect announces a body over max_request_size with "Expect:
// 100-continue": the answer is 413 at once, with no 100 Continue first.
func checkExpect(t *testing.T, s *Server) {
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.Inference, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(waitLimit))
	req := "POST /models/echo/invoke HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\nExpect: 100-continue\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(body, []byte("4096")) {
		t.Errorf("answer %d %s, want 413 naming the limit", resp.StatusCode, body)
	}
}

// checkQuoting sends 7 KB model names and urls: the error messages quote a
// short prefix.
func checkQuoting(t *testing.T, s *Server, c *http.Client) {
	long := strings.Repeat("q", 7<<10)
	for _, url := range []string{
		s.Inference + "/predictions/" + long,
		s.Management + "/models?url=" + long,
		s.Management + "/models?url=/" + long,
	} {
		r := send(c, http.MethodPost, url, nil)
		if e, err := r.problem(); err != nil || len(e.Message) > 300 {
			t.Errorf("%.60s...: %d, message of %d bytes, %v", url, r.code, len(e.Message), err)
		}
	}
}

// TestHardeningStartup starts a server on a store that holds the hostile
// folders: it starts and serves, the folders that break a cap or whose
// properties file is not a regular file are not loaded, and the log says
// why.
func TestHardeningStartup(t *testing.T) {
	store := hostileStore(t)
	if err := os.RemoveAll(filepath.Join(store, "echo")); err != nil {
		t.Fatal(err)
	}
	s := StartServer(t, Options{Store: store, Config: map[string]string{"retry_threshold": "1"}})
	s.WaitStatus(waitLimit, api.StatusFailed, "broken")
	code, body := s.Get(s.Management + "/models")
	if code != 200 || strings.Contains(string(body), "forkbomb") || strings.Contains(string(body), "zero") || strings.Contains(string(body), "fifo") {
		t.Errorf("GET /models: %d %s", code, body)
	}
	for _, want := range []string{"max_workers_per_model", "character device", "named pipe"} {
		if !strings.Contains(s.Log(), want) {
			t.Errorf("the log does not say %q", want)
		}
	}
	for _, model := range []string{"forkbomb", "zero", "fifo"} {
		if n := s.started(model); n != 0 {
			t.Errorf("%d workers of %s started", n, model)
		}
	}
}

// TestManagementTokenE2E serves both APIs on one listener with a
// management token: the management routes want it (the CLI client sends
// it), the inference routes do not.
func TestManagementTokenE2E(t *testing.T) {
	store := t.TempDir()
	probeModel(t, store, "echo", "minWorkers=1", "maxWorkers=1")
	s := StartServer(t, Options{Store: store, Shared: true, Env: []string{"SERVING_MANAGEMENT_TOKEN=e2e-t0ken"}})
	s.WaitStatus(waitLimit, api.StatusHealthy, "echo")
	c := newClient(2)
	cases := []struct {
		method, url, auth string
		code              int
	}{
		{"GET", s.Management + "/models", "", 401},
		{"GET", s.Management + "/models", "Bearer wrong", 401},
		{"GET", s.Management + "/models", "Bearer e2e-t0ken", 200},
		{"PUT", s.Management + "/models/echo?min_worker=1", "", 401},
		{"PUT", s.Management + "/models/echo?min_worker=1", "Bearer e2e-t0ken", 200},
		{"GET", s.Management + "/metrics", "", 200},
		{"GET", s.Inference + "/ping", "", 200},
		{"POST", s.Inference + "/models/echo/invoke", "", 200},
		{"POST", s.Inference + "/invocations", "", 200},
	}
	for _, tc := range cases {
		r := send(c, tc.method, tc.url, []byte("{}"), "Authorization", tc.auth, "Content-Type", "application/json")
		if r.code != tc.code {
			t.Errorf("%s %s with %q: %d %s, want %d", tc.method, tc.url, tc.auth, r.code, r.body, tc.code)
		}
		if tc.code == 401 && r.header.Get("WWW-Authenticate") == "" {
			t.Errorf("%s %s: 401 without WWW-Authenticate", tc.method, tc.url)
		}
	}
	client := func(env ...string) (string, error) {
		cmd := exec.Command(binary, "models", "--url", s.Management)
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := client(); err == nil || !strings.Contains(out, "401") {
		t.Errorf("client without the token: %v %s", err, out)
	}
	if out, err := client("SWITCHYARD_MANAGEMENT_TOKEN=e2e-t0ken"); err != nil || !strings.Contains(out, "echo") {
		t.Errorf("client with the token: %v %s", err, out)
	}
	if strings.Contains(s.Log(), "non-loopback") {
		t.Error("warned about a loopback listener")
	}
}
