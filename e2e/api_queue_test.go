package e2e

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
)

// TestAPIBatchesOfFour sends 16 concurrent requests to a model with
// batch_size=4 and max_batch_delay=100 whose only worker is held busy and
// full, so that all 16 wait in the queue: the handler then sees four
// batches of four, and every client gets the answer to its own request.
func TestAPIBatchesOfFour(t *testing.T) {
	store := t.TempDir()
	dir := probeModel(t, store, "batch4", "batch_size=4", "max_batch_delay=100", "minWorkers=1", "maxWorkers=1")
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(waitLimit, api.StatusHealthy, "batch4")
	g := newGates(t, dir, "go")
	c := newClient(32)

	first := holdWorker(t, c, s, dir, "batch4")
	calls := make([]func() reply, 16)
	for i := range calls {
		tag := fmt.Sprintf("r%02d", i)
		calls[i] = func() reply { return probeCall(c, s, "batch4", tag, "") }
	}
	rest := async(calls...)
	waitQueued(t, s, "batch4", 16)
	g.open("go")

	for _, r := range collect(t, first, 2) {
		if a, err := r.probe(); err != nil || a.BatchSize != 1 {
			t.Fatalf("%s: %+v, %v", r.tag, a, err)
		}
	}
	perCall := map[int][]string{}
	for _, r := range collect(t, rest, 16) {
		a, err := r.probe()
		if err != nil {
			t.Fatalf("%s: %v", r.tag, err)
		}
		if a.Tag != r.tag || a.BatchSize != 4 {
			t.Errorf("%s: answered %+v, want its own tag in a batch of 4", r.tag, a)
		}
		perCall[a.Call] = append(perCall[a.Call], a.Tag)
	}
	t.Logf("handler calls and the requests each held: %v", perCall)
	if len(perCall) != 4 {
		t.Errorf("the handler was called %d times for 16 requests, want 4 batches of 4", len(perCall))
	}
	for call, tags := range perCall {
		if len(tags) != 4 {
			t.Errorf("handler call %d held %d requests %v, want 4", call, len(tags), tags)
		}
	}
}

// TestAPIQueueFull holds the only worker of a model with job_queue_size=2
// (busy and full) and sends six concurrent requests: two wait in the queue
// and are answered once the worker is free; the four that do not fit are
// refused at once with 503, Retry-After and the error body. "At once" is
// shown by the order of events, not by a clock: the four refusals arrive
// while the worker is still held (nothing has left the queue to make
// room), each says the queue was full (the refusal of Push, which never
// waits, not an expired deadline), and the model counts four queue_full
// drops.
func TestAPIQueueFull(t *testing.T) {
	store := t.TempDir()
	dir := probeModel(t, store, "small", "job_queue_size=2", "minWorkers=1", "maxWorkers=1")
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(waitLimit, api.StatusHealthy, "small")
	g := newGates(t, dir, "go")
	c := newClient(8)

	first := holdWorker(t, c, s, dir, "small")
	calls := make([]func() reply, 6)
	for i := range calls {
		tag := fmt.Sprintf("q%d", i)
		calls[i] = func() reply { return probeCall(c, s, "small", tag, "") }
	}
	replies := async(calls...)
	refused := collect(t, replies, 4)
	for _, r := range refused {
		checkRefused(t, r)
	}
	if len(first) != 0 {
		t.Fatal("the held requests were answered before the refusals: the gate opened early, the test proves nothing")
	}
	if n := dispatched(s, "small"); n != 2 {
		t.Errorf("%d batches sent to the worker by the refusals, want the 2 held ones: room was made in the queue", n)
	}
	if n := s.Describe("small").RequestInQueue; n != 2 {
		t.Errorf("requestInQueue = %d after the refusals, want 2", n)
	}
	if v, _ := sample(s.scrape(), `switchyard_queue_dropped_total{model="small",reason="queue_full"}`); v != "4" {
		t.Errorf("queue_full drops = %q, want 4", v)
	}
	g.open("go")
	collect(t, first, 2)
	for _, r := range collect(t, replies, 2) {
		if a, err := r.probe(); err != nil || a.Tag != r.tag {
			t.Errorf("queued request %s: %+v, %v", r.tag, a, err)
		}
	}
}

// checkRefused checks one answer to a request that found the queue full,
// and logs how long it took (a figure to read, not a bound: a loaded
// machine may take any time).
func checkRefused(t *testing.T, r reply) {
	t.Helper()
	t.Logf("%s: %d in %v", r.tag, r.code, r.took)
	if r.err != nil || r.code != http.StatusServiceUnavailable {
		t.Fatalf("%s: want 503 for a full queue, got %d %s %v", r.tag, r.code, r.body, r.err)
	}
	if s, err := strconv.Atoi(r.header.Get("Retry-After")); err != nil || s < 1 {
		t.Errorf("%s: Retry-After %q, want a positive number of seconds", r.tag, r.header.Get("Retry-After"))
	}
	if e, err := r.problem(); err != nil || e.Type != "ServiceUnavailableException" ||
		!strings.Contains(e.Message, "queue full") || !strings.Contains(e.Message, "job_queue_size") {
		t.Errorf("%s: error body %+v, %v; want the full queue's refusal", r.tag, e, err)
	}
}

// TestAPIClientGone holds the only worker (busy and full), queues a
// request on a raw connection and closes the connection: the request
// leaves the queue at once, is counted as dropped, and never reaches the
// worker.
func TestAPIClientGone(t *testing.T) {
	store := t.TempDir()
	dir := probeModel(t, store, "gone", "minWorkers=1", "maxWorkers=1")
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(waitLimit, api.StatusHealthy, "gone")
	g := newGates(t, dir, "go")
	c := newClient(4)

	first := holdWorker(t, c, s, dir, "gone")
	conn := rawRequest(t, s, "/predictions/gone", "left")
	waitQueued(t, s, "gone", 1)
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	waitQueued(t, s, "gone", 0)
	g.open("go")
	collect(t, first, 2)
	if a, err := probeCall(c, s, "gone", "after", "").probe(); err != nil {
		t.Fatalf("request after the slow one: %+v, %v", a, err)
	}
	if got := seen(dir); !slices.Equal(got, []string{"blocker", "held", "after"}) {
		t.Errorf("the worker saw %v, want [blocker held after]: the abandoned request reached it", got)
	}
	if v, _ := sample(s.scrape(), `switchyard_queue_dropped_total{model="gone",reason="client_gone"}`); v != "1" {
		t.Errorf("client_gone drops = %q, want 1", v)
	}
}

// rawRequest writes one probe request tagged tag on a new connection and
// returns the connection without reading the answer.
func rawRequest(t *testing.T, s *Server, path, tag string) net.Conn {
	t.Helper()
	u, err := url.Parse(s.Inference)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	req := "POST " + path + " HTTP/1.1\r\nHost: " + u.Host + "\r\nContent-Type: application/json\r\n" +
		"x-probe-tag: " + tag + "\r\nContent-Length: 2\r\n\r\n{}"
	if _, err := conn.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	return conn
}
