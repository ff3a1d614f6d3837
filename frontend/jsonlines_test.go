package frontend

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/internal/testutil"
	"github.com/switchyard/switchyard/message"
)

const jsonLines = "application/jsonlines"

// streaming makes f answer every job with a stream of chunks of the given
// content type, ended by closeErr (nil: a clean end).
func streaming(f *fakeModels, contentType string, closeErr error, chunks ...string) {
	f.respond = func(_ string, j *batching.Job) {
		st := message.NewStream()
		for _, c := range chunks {
			st.Push([]byte(c))
		}
		st.Close(closeErr)
		props := []message.Prop{{Key: "X-Switchyard-Warning", Value: "w"}}
		if contentType != "" {
			props = append(props, message.Prop{Key: "content-type", Value: contentType})
		}
		j.Finish(&message.Response{Code: 200, Props: props, Stream: st})
	}
}

// tokenLine is a worker's JSON line for one token.
func tokenLine(id int, text string) string {
	return fmt.Sprintf("{\"token\": {\"id\": %d, \"text\": %q}}\n", id, text)
}

// events cuts an event-stream body into the data of its events.
func events(t *testing.T, body string) []string { return testutil.SSEData(t, body) }

func TestJSONLinesStreams(t *testing.T) {
	broke := fmt.Errorf("%w: worker 1 exited", api.ErrWorkerDied)
	cases := []struct {
		name, contentType, accept string
		chunks                    []string
		closeErr                  error
		want                      string
		wantType                  string
	}{
		{"clean", jsonLines, "", []string{tokenLine(1, "a"), tokenLine(2, "b")}, nil,
			tokenLine(1, "a") + tokenLine(2, "b"), jsonLines},
		{"broken after a line", jsonLines, "", []string{tokenLine(1, "a")}, broke,
			tokenLine(1, "a") + `{"finish_reason":"error","error":"worker died: worker 1 exited"}` + "\n", jsonLines},
		{"broken mid-line", "application/x-ndjson", "", []string{`{"tok`}, broke,
			`{"tok` + "\n" + `{"finish_reason":"error","error":"worker died: worker 1 exited"}` + "\n", "application/x-ndjson"},
		{"as events", jsonLines, "application/json, text/event-stream", []string{tokenLine(1, "a"), "\n", `{"x":`, "1}\r\n"}, nil,
			"data: " + strings.TrimSpace(tokenLine(1, "a")) + "\n\ndata: {\"x\":1}\n\n" + sseDone, contentTypeSSE},
		{"as events, unterminated last line", jsonLines, "text/event-stream", []string{`{"x":1}`}, nil,
			"data: {\"x\":1}\n\n" + sseDone, contentTypeSSE},
		{"as events, broken", jsonLines, "text/event-stream", []string{tokenLine(1, "a")}, broke,
			"data: " + strings.TrimSpace(tokenLine(1, "a")) + "\n\ndata: {\"finish_reason\":\"error\",\"error\":\"worker died: worker 1 exited\"}\n\n" + sseDone, contentTypeSSE},
		{"events refused with q=0", jsonLines, "text/event-stream;q=0", []string{tokenLine(1, "a")}, nil,
			tokenLine(1, "a"), jsonLines},
		{"other streams are not reframed", "text/plain", "text/event-stream", []string{"a\nb"}, nil,
			"a\nb", "text/plain"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake("m")
			streaming(f, c.contentType, c.closeErr, c.chunks...)
			ts := startServer(t, f)
			hdr := map[string]string{}
			if c.accept != "" {
				hdr["Accept"] = c.accept
			}
			resp, body := ts.do(t, "POST", ts.inf+"/predictions/m", `{"inputs":"x","stream":true}`, hdr)
			if resp.StatusCode != 200 || string(body) != c.want {
				t.Fatalf("answer %d:\n%q\nwant\n%q", resp.StatusCode, body, c.want)
			}
			if ct := resp.Header.Get("Content-Type"); ct != c.wantType {
				t.Errorf("Content-Type = %q, want %q", ct, c.wantType)
			}
			if resp.Header.Get("X-Switchyard-Warning") != "w" {
				t.Error("worker property lost")
			}
			if c.wantType == contentTypeSSE {
				events(t, string(body))
			}
		})
	}
}

func TestStreamFailsBeforeFirstChunk(t *testing.T) {
	cases := []struct {
		name string
		err  error
		code int
	}{
		{"worker died", fmt.Errorf("%w: worker 1 exited", api.ErrWorkerDied), 503},
		{"worker error", errors.New("worker: stream ended with an error: boom"), 500},
		{"predict timeout", fmt.Errorf("%w: nothing sent", api.ErrPredictTimeout), 500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake("m")
			streaming(f, jsonLines, c.err)
			ts := startServer(t, f)
			resp, body := ts.do(t, "POST", ts.inf+"/invocations", "x", nil)
			if p := mustProblem(t, resp, body); p.Code != c.code {
				t.Errorf("problem %+v, want code %d", p, c.code)
			}
		})
	}
}

func TestEmptyStream(t *testing.T) {
	f := newFake("m")
	streaming(f, jsonLines, nil)
	ts := startServer(t, f)
	resp, body := ts.do(t, "POST", ts.inf+"/invocations", "x", map[string]string{"Accept": "text/event-stream"})
	if resp.StatusCode != 200 || string(body) != sseDone {
		t.Fatalf("answer %d %q", resp.StatusCode, body)
	}
}

// TestClientGoneMidStream checks that a client who leaves between two
// chunks cancels the job before any further chunk is written: the worker
// must stop generating without waiting for a write to fail.
func TestClientGoneMidStream(t *testing.T) {
	f := holding("m")
	ts := startServer(t, f)
	conn := rawRequest(t, ts.InferenceAddr(), postInvocations)
	j := heldJob(t, f)
	st := message.NewStream()
	st.Push([]byte(tokenLine(1, "a")))
	j.Finish(&message.Response{Code: 200, Props: []message.Prop{{Key: "Content-Type", Value: jsonLines}}, Stream: st})
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("headers: %v", err)
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || line != tokenLine(1, "a") {
		t.Fatalf("first line %q, %v", line, err)
	}
	conn.Close()
	waitDone(t, j.Context())
	if cause := context.Cause(j.Context()); !errors.Is(cause, batching.ErrClientGone) {
		t.Fatalf("cause = %v, want %v", cause, batching.ErrClientGone)
	}
	eventually(t, func() bool {
		return strings.Contains(scrape(t, ts), `switchyard_requests_total{code="499",model="m"} 1`)
	})
}

// scrape returns the server's metrics page.
func scrape(t *testing.T, ts *testServer) string {
	t.Helper()
	_, body := ts.do(t, "GET", ts.mgmt+"/metrics", "", nil)
	return string(body)
}

// eventually polls cond until it holds, failing the test after guard. It
// waits for a state change that has no event to wait on; it measures
// nothing.
func eventually(t *testing.T, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	limit := time.After(guard)
	for !cond() {
		select {
		case <-tick.C:
		case <-limit:
			t.Fatal("condition not met")
		}
	}
}
