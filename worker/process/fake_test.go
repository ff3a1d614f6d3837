package process

// The test binary doubles as a fake worker engine, the way os/exec's own
// tests re-run themselves: TestMain sees fakeWorkerEnv and runs fakeMain
// instead of the tests. The fake parses the real command line, binds the
// socket, prints the readiness line and speaks the protocol with package
// wire. What it does is picked by environment variables (before the
// connection) and by request properties (after).

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/worker/wire"
)

const (
	fakeWorkerEnv = "SWITCHYARD_FAKE_WORKER" // set: run as the fake worker
	fakeRecordEnv = "FAKE_RECORD"            // path: write argv, env and cwd there as JSON
	fakeStartEnv  = "FAKE_START"             // never-ready, exit, ignore-term
)

// fakeRecord is what the fake writes to FAKE_RECORD.
type fakeRecord struct {
	PID  int
	Args []string
	Env  []string
	Dir  string
}

func fakeMain(args []string) int {
	fs := flag.NewFlagSet("fake", flag.ContinueOnError)
	sock := fs.String("sock-name", "", "")
	fs.String("sock-type", "", "")
	fs.String("model-dir", "", "")
	fs.String("device-id", "", "")
	fs.String("entry-point", "", "")
	fs.String("cluster-size", "", "")
	fs.String("recommended-entry-point", "", "")
	fs.String("log-level", "", "")
	fs.Bool("async-mode", false, "")
	fs.Bool("no-async-mode", false, "")
	if len(args) == 0 || fs.Parse(args[1:]) != nil {
		return 2
	}
	if err := fakeRecordTo(os.Getenv(fakeRecordEnv)); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if code, stop := fakeEarly(os.Getenv(fakeStartEnv)); stop {
		return code
	}
	return fakeServe(*sock)
}

func fakeRecordTo(path string) error {
	if path == "" {
		return nil
	}
	dir, _ := os.Getwd()
	b, _ := json.Marshal(fakeRecord{PID: os.Getpid(), Args: os.Args, Env: os.Environ(), Dir: dir})
	return os.WriteFile(path, b, 0o600)
}

// fakeEarly plays the behaviours that happen before the socket listens.
func fakeEarly(mode string) (int, bool) {
	switch mode {
	case "never-ready":
		fmt.Println("fake: never ready")
		time.Sleep(time.Hour)
		return 0, true
	case "exit":
		fmt.Fprintln(os.Stderr, "Traceback (most recent call last):")
		fmt.Fprintln(os.Stderr, `  File "model.py", line 3, in <module>`)
		fmt.Fprintln(os.Stderr, "ValueError: no model here")
		return 1, true
	case "ignore-term":
		signal.Ignore(syscall.SIGTERM)
	}
	return 0, false
}

func fakeServe(sock string) int {
	ln, err := net.Listen("unix", sock)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	fmt.Fprintln(os.Stderr, "INFO:fake:listening")
	fmt.Fprintln(os.Stderr, "a plain stderr line")
	fmt.Println("hello from stdout")
	fmt.Println(ReadyLine)
	conn, err := ln.Accept()
	if err != nil {
		return 2
	}
	_ = ln.Close()
	f := &fake{conn: conn, rd: wire.NewReader(conn, 0), holds: map[string]chan struct{}{}, groups: map[string][]*fakeSeq{}}
	code := f.run()
	if os.Getenv(fakeStartEnv) == "ignore-term" {
		time.Sleep(time.Hour) // a stuck worker: only SIGKILL ends it
	}
	return code
}

// fake is the fake worker's connection state.
type fake struct {
	conn   net.Conn
	rd     *wire.Reader
	wmu    sync.Mutex
	mu     sync.Mutex
	holds  map[string]chan struct{} // tracked requests waiting for a cancel
	groups map[string][]*fakeSeq    // tracked requests waiting for their group
}

// fakeSeq is one tracked request of an interleaving group.
type fakeSeq struct {
	id     string
	tokens []string
}

func (f *fake) run() int {
	init, err := f.rd.ReadRequest()
	if err != nil {
		return 2
	}
	if code := f.initialize(props(init)); code >= 0 {
		return code
	}
	for {
		in, err := f.rd.ReadRequest()
		if err == io.EOF {
			return 0
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "fake:", err)
			return 2
		}
		if code := f.handle(in); code >= 0 {
			return code
		}
	}
}

func props(in *message.Input) map[string]string {
	m := map[string]string{}
	for _, p := range in.Props {
		m[p.Key] = p.Value
	}
	return m
}

// initialize answers the initialization request; a code >= 0 ends the fake.
func (f *fake) initialize(p map[string]string) int {
	switch {
	case p["fail"] != "":
		f.send(&wire.Response{Code: 500, Message: p["fail"]})
	case p["oom"] != "":
		f.send(&wire.Response{Code: 507, Message: "CUDA out of memory"})
	case p["hang_init"] != "":
		time.Sleep(time.Hour)
	case p["exit_init"] != "":
		fmt.Fprintln(os.Stderr, "RuntimeError: "+p["exit_init"])
		return 4
	default:
		mode := p["rolling_batch"]
		if mode == "" {
			mode = "disable"
		}
		f.send(&wire.Response{Code: 200, Props: []message.Prop{{Key: "rolling_batch", Value: mode}}})
	}
	return -1
}

func (f *fake) send(r *wire.Response, chunks ...[]byte) {
	frame, err := wire.AppendResponse(nil, r)
	if err != nil {
		panic(err)
	}
	for i := 0; i+1 < len(chunks); i += 2 {
		frame, _ = wire.AppendChunk(frame, chunks[i+1], chunks[i] != nil)
	}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	_, _ = f.conn.Write(frame)
}

// more and end mark the chunks passed to send: pairs of (marker, data).
var (
	more = []byte{1}
	end  = []byte(nil)
)

// handle answers one request; a code >= 0 ends the fake.
func (f *fake) handle(in *message.Input) int {
	p := props(in)
	if id, ok := p[TrackingKey]; ok {
		f.tracked(id, p, in)
		return -1
	}
	if _, ok := p[wire.BatchSizeKey]; ok {
		f.batch(in)
		return -1
	}
	return f.untracked(p, in)
}

func (f *fake) untracked(p map[string]string, in *message.Input) int {
	switch p["action"] {
	case "hang":
		fmt.Println("fake: hanging")
		time.Sleep(time.Hour)
	case "sleep":
		ms, _ := strconv.Atoi(p["ms"])
		time.Sleep(time.Duration(ms) * time.Millisecond)
		f.send(&wire.Response{Code: 200, Message: "OK", Props: in.Props, Content: in.Content})
	case "exit":
		code, _ := strconv.Atoi(p["code"])
		return code
	case "garbage":
		f.wmu.Lock()
		_, _ = f.conn.Write([]byte{0, 200, 0, 0, 0, 0, 0xff, 0xf0})
		f.wmu.Unlock()
	case "stream":
		f.send(&wire.Response{Code: 200, Streaming: true}, f.streamChunks(p)...)
	default:
		f.send(&wire.Response{Code: 200, Message: "OK", Props: in.Props, Content: in.Content})
	}
	return -1
}

// streamChunks turns chunks=a,b,c and error=text into send's pairs.
func (f *fake) streamChunks(p map[string]string) [][]byte {
	var out [][]byte
	for _, c := range strings.Split(p["chunks"], ",") {
		out = append(out, more, []byte(c))
	}
	return append(out, end, []byte(p["error"]))
}

// batch echoes each request's data in reverse order with unpadded keys, and
// gives request i the property seen=<its x property>.
func (f *fake) batch(in *message.Input) {
	resp := &wire.Response{Code: 200}
	for i := len(in.Content) - 1; i >= 0; i-- {
		it := in.Content[i]
		idx, key, _ := strings.Cut(strings.TrimPrefix(it.Key, "batch_"), ".")
		n, _ := strconv.Atoi(idx)
		resp.Content = append(resp.Content, message.Item{Key: fmt.Sprintf("batch_%d.%s", n, key), Value: it.Value})
	}
	for _, pr := range in.Props {
		if prefix, ok := strings.CutSuffix(pr.Key, ".x"); ok {
			resp.Props = append(resp.Props, message.Prop{Key: prefix + ".seen", Value: pr.Value})
		}
	}
	f.send(resp)
}

func (f *fake) tracked(id string, p map[string]string, in *message.Input) {
	switch {
	case p["cancel"] == "true":
		f.cancel(id)
	case p["group"] != "":
		f.join(p["group"], p["size"], &fakeSeq{id: id, tokens: strings.Split(p["tokens"], ",")})
	case p["hold"] != "":
		f.hold(id, p["hold"] == "first")
	default:
		f.send(&wire.Response{Code: 200, Props: []message.Prop{{Key: TrackingKey, Value: id}}, Content: in.Content})
	}
}

func (f *fake) trackedFrame(id string, data []byte, isMore bool) {
	marker := end
	if isMore {
		marker = more
	}
	f.send(&wire.Response{Code: 200, Props: []message.Prop{{Key: TrackingKey, Value: id}}, Streaming: true}, marker, data)
}

// join adds seq to its group; the last member to arrive starts the group,
// whose tokens then go out round robin, one frame each.
func (f *fake) join(group, size string, seq *fakeSeq) {
	n, _ := strconv.Atoi(size)
	f.mu.Lock()
	f.groups[group] = append(f.groups[group], seq)
	members := f.groups[group]
	f.mu.Unlock()
	if len(members) == n {
		go f.play(members)
	}
}

func (f *fake) play(seqs []*fakeSeq) {
	for step := 0; ; step++ {
		sent := false
		for _, s := range seqs {
			if step < len(s.tokens) {
				f.trackedFrame(s.id, []byte(s.tokens[step]), true)
				sent = true
			}
		}
		if !sent {
			break
		}
	}
	for _, s := range seqs {
		f.trackedFrame(s.id, nil, false)
	}
}

// hold keeps a tracked request open until it is canceled, sending one chunk
// first when asked to.
func (f *fake) hold(id string, first bool) {
	ch := make(chan struct{})
	f.mu.Lock()
	f.holds[id] = ch
	f.mu.Unlock()
	fmt.Println("fake: holding", id)
	go func() {
		if first {
			f.trackedFrame(id, []byte("first"), true)
		}
		<-ch
		f.trackedFrame(id, []byte("canceled"), false)
	}()
}

func (f *fake) cancel(id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ch, ok := f.holds[id]; ok {
		close(ch)
		delete(f.holds, id)
	}
}
