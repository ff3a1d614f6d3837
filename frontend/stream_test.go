package frontend

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
)

// guard bounds waits that should end at once, so a bug fails the test
// instead of hanging it; no test measures time against it.
const guard = 30 * time.Second

// rawRequest opens a connection to addr and writes req on it.
func rawRequest(t *testing.T, addr, req string) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(guard))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	return conn
}

const postInvocations = "POST /invocations HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\n\r\nhi"

// heldJob waits for the job the fake holds.
func heldJob(t *testing.T, f *fakeModels) *batching.Job {
	t.Helper()
	select {
	case j := <-f.hold:
		return j
	case <-time.After(guard):
		t.Fatal("no job submitted")
		return nil
	}
}

func holding(names ...string) *fakeModels {
	f := newFake(names...)
	f.hold = make(chan *batching.Job, 4)
	return f
}

func TestStreamingFirstChunkFirst(t *testing.T) {
	f := holding("m")
	ts := startServer(t, f)
	conn := rawRequest(t, ts.InferenceAddr(), postInvocations)
	j := heldJob(t, f)
	st := message.NewStream()
	j.Finish(&message.Response{Code: 200, Props: []message.Prop{{Key: "Content-Type", Value: "application/jsonlines"}}, Stream: st})
	st.Push([]byte("{\"token\":\"a\"}\n"))

	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("headers: %v", err)
	}
	defer resp.Body.Close()
	if len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" || resp.Header.Get("Content-Type") != "application/jsonlines" {
		t.Fatalf("headers: %v %v", resp.TransferEncoding, resp.Header)
	}
	buf := make([]byte, 64)
	n, err := resp.Body.Read(buf)
	if err != nil || string(buf[:n]) != "{\"token\":\"a\"}\n" {
		t.Fatalf("first chunk = %q, %v", buf[:n], err)
	}
	if j.Context().Err() != nil {
		t.Fatal("job context ended while the stream is open")
	}
	st.Push([]byte("{\"token\":\"b\"}\n"))
	st.Close(nil)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || string(rest) != "{\"token\":\"b\"}\n" {
		t.Fatalf("rest = %q, %v", rest, err)
	}
	waitDone(t, j.Context())
}

func TestStreamBrokenOff(t *testing.T) {
	f := holding("m")
	ts := startServer(t, f)
	conn := rawRequest(t, ts.InferenceAddr(), postInvocations)
	j := heldJob(t, f)
	st := message.NewStream()
	j.Finish(&message.Response{Code: 200, Stream: st})
	st.Push([]byte("partial"))
	st.Close(errors.New("worker died"))
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("headers: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil || string(body) != "partial" {
		t.Fatalf("body = %q, err %v: a broken stream must not look complete", body, err)
	}
	waitDone(t, j.Context())
}

func TestStreamedError(t *testing.T) {
	f := newFake("m")
	f.respond = func(_ string, j *batching.Job) {
		st := message.NewStream()
		st.Push([]byte(`{"error":"prompt too long"}`))
		st.Close(nil)
		j.Finish(&message.Response{Code: 400, Stream: st})
	}
	ts := startServer(t, f)
	resp, body := ts.do(t, "POST", ts.inf+"/invocations", "x", nil)
	if p := mustProblem(t, resp, body); p.Code != 400 || p.Message != "prompt too long" {
		t.Errorf("problem = %+v", p)
	}
}

func TestLargeChunkSplits(t *testing.T) {
	big := strings.Repeat("0123456789", 10000)
	f := newFake("m")
	f.respond = func(_ string, j *batching.Job) {
		st := message.NewStream()
		st.Push([]byte(big))
		st.Push(nil)
		st.Push([]byte("end"))
		st.Close(nil)
		j.Finish(&message.Response{Code: 200, Stream: st})
	}
	ts := startServer(t, f)
	resp, body := ts.do(t, "POST", ts.inf+"/invocations", "x", nil)
	if resp.StatusCode != 200 || string(body) != big+"end" {
		t.Errorf("status %d, %d bytes", resp.StatusCode, len(body))
	}
}

func TestClientGoneCancelsJob(t *testing.T) {
	f := holding("m")
	ts := startServer(t, f)
	conn := rawRequest(t, ts.InferenceAddr(), postInvocations)
	j := heldJob(t, f)
	conn.Close()
	waitDone(t, j.Context())
	if cause := context.Cause(j.Context()); !errors.Is(cause, batching.ErrClientGone) {
		t.Fatalf("cause = %v, want %v", cause, batching.ErrClientGone)
	}
	j.Fail(batching.ErrClientGone) // what the queue does with a dropped job
}

func TestPipelinedRequestIsNotAHangUp(t *testing.T) {
	f := holding("m")
	ts := startServer(t, f)
	conn := rawRequest(t, ts.InferenceAddr(), postInvocations+postInvocations)
	first := heldJob(t, f)
	echo("m", first)
	// fasthttp holds a pipelined answer back until the next request's is
	// ready too, so answer both before reading.
	second := heldJob(t, f)
	echo("m", second)
	br := bufio.NewReader(conn)
	readOK(t, br)
	readOK(t, br)
	if cause := context.Cause(first.Context()); errors.Is(cause, batching.ErrClientGone) {
		t.Error("a pipelined request was taken for a hang-up")
	}
}

func readOK(t *testing.T, br *bufio.Reader) {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || string(body) != "hi" {
		t.Fatalf("answer %d %q %v", resp.StatusCode, body, err)
	}
}

func waitDone(t *testing.T, ctx context.Context) {
	t.Helper()
	select {
	case <-ctx.Done():
	case <-time.After(guard):
		t.Fatal("job context not canceled")
	}
}

func newReader(conn net.Conn) *bufio.Reader { return bufio.NewReader(conn) }

func TestUnparsableRequests(t *testing.T) {
	ts := startServer(t, newFake("m"))
	cases := []struct {
		name, req string
		code      int
	}{
		{"header too large", "GET /ping HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 2*readBufferSize) + "\r\n\r\n", 431},
		{"bad content length", "POST /invocations HTTP/1.1\r\nHost: x\r\nContent-Length: lots\r\n\r\n", 400},
		{"broken chunks", "POST /invocations HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			conn := rawRequest(t, ts.InferenceAddr(), c.req)
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.code {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, c.code, body)
			}
			mustProblem(t, resp, body)
			if resp.Header.Get("X-Request-Id") == "" {
				t.Error("no x-request-id")
			}
		})
	}
}
