package frontend

import (
	"bufio"
	"context"
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/message"
)

// benchRequest is a typical small SageMaker invocation.
func benchRequest() *fasthttp.Request {
	req := &fasthttp.Request{}
	req.Header.SetMethod("POST")
	req.SetRequestURI("/invocations")
	req.Header.SetHost("bench")
	req.Header.SetContentType("application/json")
	req.Header.Set("X-Amzn-SageMaker-Target-Model", "m.tar.gz")
	req.SetBodyString(`{"inputs":"The quick brown fox"}`)
	return req
}

// instant is a registry that answers every job at once, with a fixed
// header set, so the benchmarks measure the server rather than the fake.
func instant(async bool) *fakeModels {
	f := newFake("m")
	props := []message.Prop{{Key: "Content-Type", Value: "application/json"}}
	answer := func(j *batching.Job) {
		j.Finish(&message.Response{Code: 200, Props: props, Body: j.Input.Content[0].Value})
	}
	f.respond = func(_ string, j *batching.Job) {
		if async {
			go answer(j)
			return
		}
		answer(j)
	}
	return f
}

// BenchmarkHandler runs the inference handler path (routing, job building,
// Submit, answer, metrics) without a network, against a registry that
// answers at once.
func BenchmarkHandler(b *testing.B) {
	s, err := New(Config{InferenceAddr: "x", ManagementAddr: "x"}, instant(false))
	if err != nil {
		b.Fatal(err)
	}
	handleAll(b, s, benchRequest())
}

// handleAll runs req through s's handler b.N times, in parallel, without a
// network.
func handleAll(b *testing.B, s *Server, req *fasthttp.Request) {
	l := s.newListener(nil, dialect.Inference|dialect.Management)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		var ctx fasthttp.RequestCtx
		for pb.Next() {
			ctx.Init(req, nil, nil)
			l.handle(&ctx)
			if ctx.Response.StatusCode() != 200 {
				b.Fatalf("status %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
			}
		}
	})
}

// BenchmarkTCP compares the whole server over loopback TCP with a bare
// fasthttp "hello" server, at 64 keep-alive connections; compare the req/s
// of the sub-benchmarks. "async" answers from another goroutine, as a real
// worker does, so the hang-up watcher runs.
func BenchmarkTCP(b *testing.B) {
	b.Run("hello", func(b *testing.B) {
		ln := listenLoopback(b)
		fs := &fasthttp.Server{Handler: func(ctx *fasthttp.RequestCtx) { ctx.SetBodyString("hello") }, NoDefaultServerHeader: true}
		go func() { _ = fs.Serve(ln) }()
		defer func() { _ = fs.Shutdown() }()
		hammer(b, ln.Addr().String())
	})
	b.Run("switchyard", func(b *testing.B) {
		hammer(b, benchServer(b, instant(false)))
	})
	b.Run("switchyard-async", func(b *testing.B) {
		hammer(b, benchServer(b, instant(true)))
	})
}

func listenLoopback(b *testing.B) net.Listener {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	return ln
}

func benchServer(b *testing.B, f *fakeModels) string {
	s, err := New(Config{InferenceAddr: "127.0.0.1:0", ManagementAddr: "127.0.0.1:"}, f)
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Listen(); err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx) }()
	b.Cleanup(func() { cancel(); <-served })
	return s.InferenceAddr()
}

// hammer sends benchRequest over 64 connections, one goroutine each.
func hammer(b *testing.B, addr string) {
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	req := benchRequest()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			b.Error(err)
			return
		}
		defer conn.Close()
		br, bw := bufio.NewReader(conn), bufio.NewWriter(conn)
		var resp fasthttp.Response
		for pb.Next() {
			if err := roundTripOn(bw, br, req, &resp); err != nil || resp.StatusCode() != 200 {
				b.Errorf("answer %d: %v", resp.StatusCode(), err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

func roundTripOn(bw *bufio.Writer, br *bufio.Reader, req *fasthttp.Request, resp *fasthttp.Response) error {
	if err := req.Write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return resp.Read(br)
}

// BenchmarkCheckFraming measures the per-request cost of the framing check
// on a typical inference request's header.
func BenchmarkCheckFraming(b *testing.B) {
	var h fasthttp.RequestHeader
	raw := "POST /invocations HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nUser-Agent: Go-http-client/1.1\r\n" +
		"Content-Length: 27\r\nContent-Type: application/json\r\nX-Amzn-SageMaker-Target-Model: langid.tar.gz\r\n" +
		"Accept-Encoding: gzip\r\n\r\n"
	if err := h.Read(bufio.NewReader(strings.NewReader(raw))); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := checkFraming(&h); err != nil {
			b.Fatal(err)
		}
	}
}
