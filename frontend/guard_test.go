package frontend

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/valyala/fasthttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"github.com/switchyard/switchyard/batching"
)

// readAnswer reads one answer from a raw connection.
func readAnswer(t *testing.T, br *bufio.Reader, method string) (*http.Response, []byte) {
	t.Helper()
	resp, err := http.ReadResponse(br, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("read answer: %v", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return resp, body
}

// connClosed reports whether the server closed the connection br reads:
// the next read ends with EOF or a reset rather than more bytes (or the
// guard's deadline).
func connClosed(br *bufio.Reader) bool {
	_, err := br.ReadByte()
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
}

// TestFramingConflict sends requests with both Content-Length and
// Transfer-Encoding over a raw connection, each followed by a smuggled
// second request: the first is answered 400 with Connection: close, and the
// connection closes without the second being answered.
func TestFramingConflict(t *testing.T) {
	f := newFake("m")
	var submitted atomic.Int32
	f.set(func(f *fakeModels) {
		f.respond = func(model string, j *batching.Job) { submitted.Add(1); echo(model, j) }
	})
	ts := startServer(t, f)
	smuggled := "GET /ping HTTP/1.1\r\nHost: test\r\n\r\n"
	tests := []struct{ name, head, body string }{
		{"length then chunked", "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n", "0\r\n\r\n"},
		{"chunked then length", "Transfer-Encoding: chunked\r\nContent-Length: 40\r\n", "0\r\n\r\n"},
		{"lower case", "content-length: 5\r\ntransfer-encoding: chunked\r\n", "0\r\n\r\n"},
		{"identity coding", "Transfer-Encoding: identity\r\nContent-Length: 2\r\n", "hi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := submitted.Load()
			req := "POST /invocations HTTP/1.1\r\nHost: test\r\n" + tt.head + "\r\n" + tt.body + smuggled
			conn := rawRequest(t, ts.InferenceAddr(), req)
			br := bufio.NewReader(conn)
			resp, body := readAnswer(t, br, "POST")
			if resp.StatusCode != 400 || !resp.Close {
				t.Fatalf("answer %d, close %v (%s); want 400 and Connection: close", resp.StatusCode, resp.Close, body)
			}
			if p := mustProblem(t, resp, body); !strings.Contains(p.Message, "Content-Length and Transfer-Encoding") {
				t.Errorf("message %q", p.Message)
			}
			if resp.Header.Get(headerRequestID) == "" {
				t.Error("no request id")
			}
			if !connClosed(br) {
				t.Error("the connection stayed open after the answer")
			}
			if submitted.Load() != before {
				t.Error("the request reached the model")
			}
		})
	}
	// A request with only one of the two keeps its connection.
	conn := rawRequest(t, ts.InferenceAddr(), postInvocations+postInvocations)
	br := bufio.NewReader(conn)
	for i := range 2 {
		if resp, body := readAnswer(t, br, "POST"); resp.StatusCode != 200 || resp.Close {
			t.Fatalf("plain request %d: %d close %v (%s)", i, resp.StatusCode, resp.Close, body)
		}
	}
}

// TestExpectContinue sends requests with "Expect: 100-continue" and no
// body yet: one over the size limit, one to a guarded route without the
// token and one to no route are answered at once without "100 Continue",
// and the connection closes; one that fits gets "100 Continue", then its
// answer once the body follows.
func TestExpectContinue(t *testing.T) {
	ts := startServer(t, newFake("m"), func(c *Config) {
		c.MaxRequestSize = 1000
		c.ManagementToken = "s3cret"
	})
	tests := []struct {
		name, addr, head string
		code             int
	}{
		{"too large", ts.InferenceAddr(), "POST /invocations HTTP/1.1\r\nContent-Length: 1001\r\n", 413},
		{"unauthorized", ts.ManagementAddr(), "POST /models?url=m HTTP/1.1\r\nContent-Length: 10\r\n", 401},
		{"no route", ts.InferenceAddr(), "POST /nowhere HTTP/1.1\r\nContent-Length: 10\r\n", 404},
		{"framing", ts.InferenceAddr(), "POST /invocations HTTP/1.1\r\nContent-Length: 10\r\nTransfer-Encoding: chunked\r\n", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			conn := rawRequest(t, tt.addr, tt.head+"Host: test\r\nExpect: 100-continue\r\n\r\n")
			br := bufio.NewReader(conn)
			resp, body := readAnswer(t, br, "POST") // a "100 Continue" first would be read as the answer
			if resp.StatusCode != tt.code || !resp.Close || resp.Header.Get(headerRequestID) == "" {
				t.Fatalf("answer %d close %v id %q (%s), want %d and Connection: close", resp.StatusCode, resp.Close,
					resp.Header.Get(headerRequestID), body, tt.code)
			}
			mustProblem(t, resp, body)
			if !connClosed(br) {
				t.Error("the connection stayed open")
			}
		})
	}
	t.Run("fits", func(t *testing.T) {
		conn := rawRequest(t, ts.InferenceAddr(), "POST /invocations HTTP/1.1\r\nHost: test\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\n")
		br := bufio.NewReader(conn)
		line, err := br.ReadString('\n')
		if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
			t.Fatalf("first line %q, %v; want 100 Continue", line, err)
		}
		if _, err := br.ReadString('\n'); err != nil { // the empty line after it
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, "hi"); err != nil {
			t.Fatal(err)
		}
		if resp, body := readAnswer(t, br, "POST"); resp.StatusCode != 200 || string(body) != "hi" {
			t.Fatalf("answer %d %q", resp.StatusCode, body)
		}
	})
}

// TestManagementToken checks each route with no token, a wrong one and the
// right one, on separate listeners and on one shared listener, with and
// without /metrics guarded.
func TestManagementToken(t *testing.T) {
	for _, shared := range []bool{false, true} {
		for _, metrics := range []bool{false, true} {
			name := map[bool]string{false: "separate", true: "shared"}[shared] + map[bool]string{false: "", true: " metrics guarded"}[metrics]
			t.Run(name, func(t *testing.T) {
				ts := startServer(t, newFake("m"), func(c *Config) {
					c.ManagementToken, c.MetricsRequireToken = "s3cret-T0ken", metrics
					if shared {
						c.ManagementAddr = c.InferenceAddr
					}
				})
				checkTokenRoutes(t, ts, metrics)
			})
		}
	}
}

func checkTokenRoutes(t *testing.T, ts *testServer, metrics bool) {
	t.Helper()
	routes := []struct {
		method, url string
		guarded     bool
	}{
		{"GET", ts.mgmt + "/models", true},
		{"POST", ts.mgmt + "/models?url=/m/x&model_name=x", true},
		{"GET", ts.mgmt + "/models/m", true},
		{"PUT", ts.mgmt + "/models/m?min_worker=1", true},
		{"DELETE", ts.mgmt + "/models/m", true},
		{"GET", ts.mgmt + "/metrics", metrics},
		{"POST", ts.inf + "/invocations", false},
		{"POST", ts.inf + "/models/m/invoke", false},
		{"POST", ts.inf + "/predictions/m", false},
		{"GET", ts.inf + "/ping", false},
		{"GET", ts.inf + "/v1/models", false},
	}
	creds := []struct {
		name, header string
		ok           bool
		invalid      bool
	}{
		{"none", "", false, false},
		{"wrong token", "Bearer s3cret-T0keN", false, true},
		{"token as basic", "Basic s3cret-T0ken", false, false},
		{"prefix of the token", "Bearer s3cret", false, true},
		{"right token", "Bearer s3cret-T0ken", true, false},
		{"scheme in lower case", "bearer  s3cret-T0ken ", true, false},
	}
	for _, c := range creds {
		for _, r := range routes {
			hdr := map[string]string{}
			if c.header != "" {
				hdr["Authorization"] = c.header
			}
			resp, body := ts.do(t, r.method, r.url, "x", hdr)
			if !r.guarded || c.ok {
				if resp.StatusCode == 401 {
					t.Errorf("%s %s with %s: 401 (%s)", r.method, r.url, c.name, body)
				}
				if r.method == "DELETE" && resp.StatusCode == 200 {
					ts.do(t, "POST", ts.mgmt+"/models?url=/m/m&model_name=m", "", hdr) // put it back
				}
				continue
			}
			if resp.StatusCode != 401 {
				t.Errorf("%s %s with %s: %d, want 401", r.method, r.url, c.name, resp.StatusCode)
				continue
			}
			p := mustProblem(t, resp, body)
			want := `Bearer realm="switchyard"`
			if c.invalid {
				want += `, error="invalid_token"`
			}
			if p.Type != "UnauthorizedException" || resp.Header.Get("WWW-Authenticate") != want {
				t.Errorf("%s %s with %s: type %s, WWW-Authenticate %q", r.method, r.url, c.name, p.Type, resp.Header.Get("WWW-Authenticate"))
			}
			if strings.Contains(string(body), "s3cret") {
				t.Errorf("the answer shows the token: %s", body)
			}
		}
	}
}

func TestBearer(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"Bearer abc", "abc", true},
		{"bearer abc", "abc", true},
		{"BEARER   abc  ", "abc", true},
		{"Bearer", "", false},
		{"Bearer ", "", false},
		{"Basic abc", "", false},
		{"Bearerabc", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, ok := bearer([]byte(tt.in))
		if string(got) != tt.want || ok != tt.ok {
			t.Errorf("bearer(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

// fixedAddr is a listener that was never bound, with the address it
// reports, for the start-up warning.
type fixedAddr struct {
	net.Listener
	addr net.TCPAddr
}

func (f fixedAddr) Addr() net.Addr { return &f.addr }

func TestWarnOpenManagement(t *testing.T) {
	tests := []struct {
		name   string
		ip     net.IP
		planes plane
		token  string
		warn   bool
	}{
		{"all interfaces without a token", net.IPv4zero, planeManagement, "", true},
		{"shared listener on all interfaces", net.IPv6zero, planeInference | planeManagement, "", true},
		{"a public address", net.IPv4(192, 0, 2, 7), planeManagement, "", true},
		{"with a token", net.IPv4zero, planeManagement, "t", false},
		{"loopback", net.IPv4(127, 0, 0, 1), planeManagement, "", false},
		{"IPv6 loopback", net.IPv6loopback, planeManagement, "", false},
		{"inference only", net.IPv4zero, planeInference, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zap.WarnLevel)
			s := &Server{log: zap.New(core), token: newToken(tt.token, false)}
			s.listeners = []*listener{{planes: tt.planes, ln: fixedAddr{addr: net.TCPAddr{IP: tt.ip, Port: 8084}}}}
			s.warnOpenManagement()
			if got := logs.FilterMessageSnippet("non-loopback").Len() == 1; got != tt.warn {
				t.Errorf("warned %v, want %v", got, tt.warn)
			}
		})
	}
}

// TestErrorsQuoteBriefly sends 7 KB of input in a path, a header and
// parameters: every error answer quotes a short prefix of it.
func TestErrorsQuoteBriefly(t *testing.T) {
	ts := startServer(t, newFake("m", "n"))
	long := strings.Repeat("z", 7<<10)
	tests := []struct {
		method, url string
		hdr         map[string]string
	}{
		{"POST", ts.inf + "/predictions/" + long, nil},
		{"POST", ts.inf + "/predictions/m/" + long, nil},
		{"GET", ts.inf + "/" + long, nil},
		{"POST", ts.inf + "/invocations", map[string]string{"X-Amzn-SageMaker-Target-Model": long}},
		{"POST", ts.inf + "/invocations?model_name=" + long, nil},
		{"GET", ts.mgmt + "/models?limit=" + long, nil},
		{"PUT", ts.mgmt + "/models/m?min_worker=" + long, nil},
		{"POST", ts.mgmt + "/models?url=/x&synchronous=" + long, nil},
		{"PATCH", ts.mgmt + "/models/" + long, nil},
	}
	for _, tt := range tests {
		resp, body := ts.do(t, tt.method, tt.url, "", tt.hdr)
		p := mustProblem(t, resp, body)
		if len(p.Message) > 200 || !strings.Contains(p.Message, `zzz"...`) {
			t.Errorf("%s %.60s: %d, message of %d bytes: %.200s", tt.method, tt.url, resp.StatusCode, len(p.Message), p.Message)
		}
	}
}

func TestPublicMessage(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{errors.New("api: model not found: x"), "model not found: x"},
		{errors.New("api: bad request: properties: /m/serving.properties:3: batch_size: \"x\" is not an integer"),
			"bad request: /m/serving.properties:3: batch_size: \"x\" is not an integer"},
		{errors.New("batching: queue full: model m has 1000 requests waiting (job_queue_size)"),
			"queue full: model m has 1000 requests waiting (job_queue_size)"},
		{errors.New("model m: batching: closed: model m unregistered"), "model m: closed: model m unregistered"},
		{errors.New("api: model failed: worker: model x: pip failed"), "model failed: model x: pip failed"},
		{errors.New("plain"), "plain"},
	}
	for _, tt := range tests {
		if got := publicMessage(tt.err); got != tt.want {
			t.Errorf("publicMessage(%q) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

// TestProblemBodies checks that writeError's body for a 401 is the JSON
// error shape (the other codes are covered elsewhere).
func TestUnauthorizedBody(t *testing.T) {
	var ctx fasthttp.RequestCtx
	s := &Server{log: zap.NewNop()}
	s.writeError(&ctx, nil, &httpError{sentinel: errUnauthorized, msg: "no"})
	var p problem
	if err := json.Unmarshal(ctx.Response.Body(), &p); err != nil || p.Code != 401 || p.Type != "UnauthorizedException" {
		t.Errorf("body %s: %+v, %v", ctx.Response.Body(), p, err)
	}
}
