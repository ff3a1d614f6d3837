package e2e

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// manageCase is one management call and the answer it must get.
type manageCase struct {
	name    string
	method  string
	path    string // with query
	body    string // JSON body, if any
	code    int
	status  string // the {"status"} message of a success
	errType string // the error type of a failure
	message string // a part of the error message
}

// registerCases run in order against a server that starts with no model;
// the store holds the probe folders reg and other, and a folder empty that
// is not a model folder.
var registerCases = []manageCase{
	{name: "register synchronously", method: "POST", path: "/models?url=reg", code: 200, status: `Model "reg" registered.`},
	{name: "register again", method: "POST", path: "/models?url=reg", code: 409, errType: "ConflictStatusException", message: "reg"},
	{name: "register under another name is no conflict", method: "POST", path: "/models?url=reg&model_name=reg_b&min_worker=0", code: 200, status: `Model "reg_b" registered.`},
	{name: "url is not a model folder", method: "POST", path: "/models?url=empty", code: 404, errType: "ModelNotFoundException", message: "empty"},
	{name: "url does not exist", method: "POST", path: "/models?url=missing", code: 404, errType: "ModelNotFoundException", message: "missing"},
	{name: "no url", method: "POST", path: "/models", code: 400, errType: "BadRequestException", message: "Parameter url is required."},
	{name: "non-numeric batch size", method: "POST", path: "/models?url=other&batch_size=four", code: 400, errType: "BadRequestException", message: "batch_size"},
	{name: "non-numeric worker count in the body", method: "POST", path: "/models", body: `{"url": "other", "min_worker": "x"}`, code: 400, errType: "BadRequestException", message: "min_worker"},
	{name: "register from a JSON body, not waiting", method: "POST", path: "/models", body: `{"url": "other", "synchronous": false, "batch_size": 2}`, code: 202, status: `Model "other" registration scheduled.`},
}

// scaleCases run after registerCases.
var scaleCases = []manageCase{
	{name: "scale up", method: "PUT", path: "/models/reg?min_worker=2&max_worker=2", code: 200, status: `Model "reg" worker scaled.`},
	{name: "scale an unknown model", method: "PUT", path: "/models/nope?min_worker=1", code: 404, errType: "ModelNotFoundException", message: "nope"},
	{name: "scale with min above max", method: "PUT", path: "/models/reg?min_worker=3&max_worker=1", code: 400, errType: "BadRequestException", message: "min_worker"},
	{name: "unregister an unknown model", method: "DELETE", path: "/models/nope", code: 404, errType: "ModelNotFoundException", message: "nope"},
}

// TestAPIManagement registers, scales and unregisters models through the
// management API of a real server.
func TestAPIManagement(t *testing.T) {
	store := t.TempDir()
	reg := probeModel(t, store, "reg", "minWorkers=1", "maxWorkers=1")
	probeModel(t, store, "other", "minWorkers=1", "maxWorkers=1")
	if err := os.Mkdir(filepath.Join(store, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	s := StartServer(t, Options{Store: store, Models: "NONE"})
	c := newClient(4)
	runManage(t, s, c, registerCases)
	t.Run("registered models", func(t *testing.T) {
		if st := s.Describe("reg").Status; st != api.StatusHealthy {
			t.Errorf("reg is %s right after a synchronous register, want Healthy", st)
		}
		s.WaitStatus(waitLimit, api.StatusHealthy, "other")
		if got := s.Describe("other").BatchSize; got != 2 {
			t.Errorf("other's batchSize = %d, want the registered 2", got)
		}
		if pids := s.WorkerPIDs("reg_b"); len(pids) != 0 {
			t.Errorf("reg_b registered with min_worker=0 has workers %v", pids)
		}
	})
	runManage(t, s, c, scaleCases)
	t.Run("synchronous scale up waits for the workers", func(t *testing.T) {
		rec := s.Describe("reg")
		if pids := s.WorkerPIDs("reg"); len(pids) != 2 || rec.Status != api.StatusHealthy {
			t.Errorf("right after PUT min_worker=2 answered 200, reg is %s with worker pids %v, want Healthy with 2", rec.Status, pids)
		}
	})
	t.Run("scale down", func(t *testing.T) { scaleDown(t, s, c) })
	t.Run("unregister with a queued request", func(t *testing.T) { unregisterQueued(t, s, c, reg) })
}

// runManage sends each case in order as a subtest.
func runManage(t *testing.T, s *Server, c *http.Client, cases []manageCase) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := send(c, tc.method, s.Management+tc.path, []byte(tc.body), "Content-Type", "application/json")
			checkManage(t, tc, r)
		})
	}
}

// checkManage checks one management answer against its case.
func checkManage(t *testing.T, tc manageCase, r reply) {
	t.Helper()
	if r.err != nil || r.code != tc.code {
		t.Fatalf("%s %s %s: %d %s %v, want %d", tc.method, tc.path, tc.body, r.code, r.body, r.err, tc.code)
	}
	if tc.status != "" {
		if got := string(r.body); !strings.Contains(got, `"status"`) || !strings.Contains(got, strings.ReplaceAll(tc.status, `"`, `\"`)) {
			t.Errorf("body %s, want status %q", got, tc.status)
		}
		return
	}
	e, err := r.problem()
	if err != nil || e.Type != tc.errType || !strings.Contains(e.Message, tc.message) {
		t.Errorf("error body %s (%v), want type %s and a message with %q", r.body, err, tc.errType, tc.message)
	}
}

// scaleDown takes reg back to one worker and waits for the other to go.
func scaleDown(t *testing.T, s *Server, c *http.Client) {
	before := s.WorkerPIDs("reg")
	r := send(c, http.MethodPut, s.Management+"/models/reg?min_worker=1&max_worker=1", nil)
	if r.code != http.StatusOK {
		t.Fatalf("scale down: %d %s", r.code, r.body)
	}
	testutil.WaitFor(t, waitLimit, "reg is down to one worker", func() bool { return len(s.WorkerPIDs("reg")) == 1 })
	for _, pid := range before {
		if !slices.Contains(s.WorkerPIDs("reg"), pid) {
			testutil.WaitFor(t, waitLimit, "the surplus worker's process exits", func() bool { return testutil.ProcessGone(pid) })
		}
	}
}

// unregisterQueued holds reg's worker (busy and full), queues one request
// and unregisters reg: the queued request is answered 503 at once and never
// reaches the worker, the two on the worker finish, and then the model and
// its worker are gone.
func unregisterQueued(t *testing.T, s *Server, c *http.Client, dir string) {
	g := newGates(t, dir, "go")
	pids := s.WorkerPIDs("reg")
	held := holdWorker(t, c, s, dir, "reg")
	queued := async(func() reply { return probeCall(c, s, "reg", "queued", "") })
	waitQueued(t, s, "reg", 1)
	deleted := async(func() reply { return send(c, http.MethodDelete, s.Management+"/models/reg", nil) })
	r := collect(t, queued, 1)[0]
	if e, err := r.problem(); r.code != http.StatusServiceUnavailable || err != nil {
		t.Errorf("queued request at unregister: %d %+v %v, want 503", r.code, e, err)
	}
	g.open("go")
	for _, r := range collect(t, held, 2) {
		if a, err := r.probe(); err != nil || a.Tag != r.tag {
			t.Errorf("request %s on the worker at unregister: %+v, %v", r.tag, a, err)
		}
	}
	if d := collect(t, deleted, 1)[0]; d.code != http.StatusOK {
		t.Fatalf("DELETE /models/reg: %d %s", d.code, d.body)
	}
	if code, body := s.Get(s.Management + "/models/reg"); code != http.StatusNotFound {
		t.Errorf("describe after unregister: %d %s", code, body)
	}
	if slices.Contains(seen(dir), "queued") {
		t.Error("the request queued at unregister reached the worker")
	}
	for _, pid := range pids {
		testutil.WaitFor(t, waitLimit, "reg's worker exits", func() bool { return testutil.ProcessGone(pid) })
	}
	if strings.Contains(s.scrape(), `model="reg"`) {
		t.Error("reg's series are still in /metrics after unregister")
	}
}
