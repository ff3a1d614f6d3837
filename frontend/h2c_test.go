package frontend

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	brtypes "github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"
)

func TestReadHead(t *testing.T) {
	tests := []struct {
		name, in string
		reader   func(io.Reader) io.Reader
		want     string
	}{
		{"HTTP/1.1 request", "POST /invocations HTTP/1.1\r\n", nil, "POST /invocations HTTP/1"},
		{"a byte at a time", "POST / HTTP/1.1\r\n", iotest.OneByteReader, "PO"},
		{"the preface", h2Preface + "\x00\x00\x12\x04", nil, h2Preface},
		{"the preface a byte at a time", h2Preface + "\x00", iotest.OneByteReader, h2Preface},
		{"a start of the preface, then something else", "PRI * HTTP/1.1\r\n", iotest.OneByteReader, "PRI * HTTP/1"},
		{"nothing", "", nil, ""},
		{"a start of the preface, then the end", "PRI *", iotest.OneByteReader, "PRI *"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r io.Reader = strings.NewReader(tt.in)
			if tt.reader != nil {
				r = tt.reader(r)
			}
			got, _ := readHead(r)
			if string(got) != tt.want {
				t.Errorf("readHead = %q, want %q", got, tt.want)
			}
			rest, _ := io.ReadAll(r)
			if string(got)+string(rest) != tt.in {
				t.Errorf("bytes lost: %q + %q", got, rest)
			}
		})
	}
}

func TestPrefixConn(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	go func() { _, _ = b.Write([]byte("rest")); b.Close() }()
	c := &prefixConn{Conn: a, head: []byte("head ")}
	got, err := io.ReadAll(c)
	if err != nil || string(got) != "head rest" {
		t.Errorf("read %q, %v", got, err)
	}
	if _, err := c.SyscallConn(); err == nil {
		t.Error("a pipe has no socket, yet SyscallConn worked")
	}
}

// TestShutdownWithSilentConnection: a client that connects and sends
// nothing does not hold up a shutdown (its first bytes are being awaited).
func TestShutdownWithSilentConnection(t *testing.T) {
	s, err := New(Config{InferenceAddr: "127.0.0.1:0", ManagementAddr: "127.0.0.1:0"}, newFake("m"))
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Listen(); err != nil {
		t.Fatal(err)
	}
	go func() { served <- s.Serve(ctx) }()
	conn, err := net.Dial("tcp", s.InferenceAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// A request on a second connection shows the server is serving, so the
	// silent one has been accepted and waits to be sorted.
	other, err := net.Dial("tcp", s.InferenceAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, _ = other.Write([]byte("GET /ping HTTP/1.1\r\nHost: x\r\n\r\n"))
	buf := make([]byte, 12)
	if _, err := io.ReadFull(other, buf); err != nil || !bytes.HasPrefix(buf, []byte("HTTP/1.1 200")) {
		t.Fatalf("ping: %q %v", buf, err)
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

// h2cClient speaks cleartext HTTP/2 with prior knowledge, as the AWS SDK
// for JavaScript's Bedrock Runtime client does.
func h2cClient() *http.Client {
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	return &http.Client{Transport: &http.Transport{Protocols: &p}}
}

// TestHTTP2 serves HTTP/2 clients on the inference listener: plain routes,
// Converse and ConverseStream through the SDK, and errors keep their
// shapes and headers.
func TestHTTP2(t *testing.T) {
	ts, _, _ := startAWS(t, "chat", "lines")
	hc := h2cClient()
	defer hc.CloseIdleConnections()
	resp, err := hc.Get(ts.inf + "/ping")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != 200 || resp.Header.Get("X-Request-Id") == "" {
		t.Errorf("/ping over HTTP/2: %s %d %v", resp.Proto, resp.StatusCode, resp.Header)
	}
	c := bedrockruntime.New(bedrockruntime.Options{Region: "us-east-1", BaseEndpoint: aws.String(ts.inf),
		Credentials: awsCreds, RetryMaxAttempts: 1, HTTPClient: hc})
	user := []brtypes.Message{{Role: brtypes.ConversationRoleUser, Content: []brtypes.ContentBlock{&brtypes.ContentBlockMemberText{Value: "hi"}}}}
	out, err := c.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String("chat"), Messages: user})
	if err != nil || out.StopReason != brtypes.StopReasonStopSequence {
		t.Fatalf("Converse over HTTP/2: %+v, %v", out, err)
	}
	evs, err := streamEvents(t, c, &bedrockruntime.ConverseStreamInput{ModelId: aws.String("lines"), Messages: user})
	if want := `start assistant|delta 0 "Hal"|delta 0 "lo"|stop 0|end end_turn|usage 5/2`; err != nil || strings.Join(evs, "|") != want {
		t.Errorf("ConverseStream over HTTP/2: %q (%v)", evs, err)
	}
	_, err = c.Converse(context.Background(), &bedrockruntime.ConverseInput{ModelId: aws.String("nope"), Messages: user})
	if rnf := new(brtypes.ResourceNotFoundException); !errors.As(err, &rnf) {
		t.Errorf("unknown model over HTTP/2: %v", err)
	}
}
