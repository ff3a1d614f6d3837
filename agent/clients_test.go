package agent

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
)

// recordingClient keeps the last request it was asked to send.
type recordingClient struct{ got *http.Request }

func (c *recordingClient) Do(r *http.Request) (*http.Response, error) {
	c.got = r
	return &http.Response{StatusCode: 200, Body: io.NopCloser(strings.NewReader(""))}, nil
}

// TestPlainBodies: the body reaches the transport whole, without WriteTo.
func TestPlainBodies(t *testing.T) {
	rec := &recordingClient{}
	req, _ := http.NewRequest("POST", "http://127.0.0.1/", bytes.NewReader([]byte("body")))
	if _, err := (plainBodies{rec}).Do(req); err != nil {
		t.Fatal(err)
	}
	if _, ok := rec.got.Body.(io.WriterTo); ok {
		t.Error("the body still offers WriteTo")
	}
	if b, _ := io.ReadAll(rec.got.Body); string(b) != "body" {
		t.Errorf("body %q", b)
	}
	get, _ := http.NewRequest("GET", "http://127.0.0.1/", nil)
	if _, err := (plainBodies{rec}).Do(get); err != nil || rec.got != get {
		t.Error("a request without a body is not passed on as it is")
	}
}

// closingStreams makes the first ConverseStream answer's body fail at once
// as the SDK's own connection close does (aws/aws-sdk-go-v2#2737).
type closingStreams struct {
	next  http.RoundTripper
	broke atomic.Bool
}

func (c *closingStreams) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(r)
	if err == nil && strings.HasSuffix(r.URL.Path, "/converse-stream") && c.broke.CompareAndSwap(false, true) {
		resp.Body.Close()
		resp.Body = io.NopCloser(errReader{&net.OpError{Op: "read", Net: "tcp", Err: net.ErrClosed}})
	}
	return resp, err
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// TestStreamRetriedOnceWhenTheSDKClosedItsConnection: a stream that breaks
// with net.ErrClosed before any text went out is called once more.
func TestStreamRetriedOnceWhenTheSDKClosedItsConnection(t *testing.T) {
	f := newFakeCloud(t)
	a := f.agent(t, "classification")
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	broken := &closingStreams{next: tr}
	a.Planner = bedrockruntime.New(a.Planner.(*bedrockruntime.Client).Options(), func(o *bedrockruntime.Options) {
		o.HTTPClient = plainBodies{&http.Client{Transport: broken}}
	})
	result, err := a.Stream(t.Context(), "Hallo", func(string) error { return nil })
	converse, _ := f.calls()
	if err != nil || result != "The tool answered: German (deu)" || !broken.broke.Load() || len(converse) != 3 {
		t.Errorf("result %q, %v; broke %v; %d calls, want 3", result, err, broken.broke.Load(), len(converse))
	}
}
