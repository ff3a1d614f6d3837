package process

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/pyruntime"
	"github.com/switchyard/switchyard/worker/wire"
)

// logWatch lets a test wait for a log line: the fake worker prints markers
// on stdout when a request has reached it.
type logWatch struct {
	mu    sync.Mutex
	waits map[string]chan struct{}
}

func (w *logWatch) hook(e zapcore.Entry) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for s, ch := range w.waits {
		if strings.Contains(e.Message, s) {
			close(ch)
			delete(w.waits, s)
		}
	}
	return nil
}

// expect returns a channel closed at the next line that contains s; call it
// before the line can appear.
func (w *logWatch) expect(s string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	ch := make(chan struct{})
	w.waits[s] = ch
	return ch
}

// harness is one test's logger, log watch and fake worker spec.
type harness struct {
	logs    *observer.ObservedLogs
	watch   *logWatch
	spec    Spec
	runtime pyruntime.Runtime // the unpacked Python runtime, for pythonHarness
}

func newHarness(t testing.TB, env ...string) *harness {
	t.Helper()
	core, logs := observer.New(zap.DebugLevel)
	w := &logWatch{waits: map[string]chan struct{}{}}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	sockDir, err := os.MkdirTemp("", "sy")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	spec := Spec{
		Model: "echo", ModelDir: t.TempDir(), Python: exe, Engine: "fake_engine.py",
		DeviceID: -1, SocketDir: filepath.Join(sockDir, "s"),
		Env:         append([]string{fakeWorkerEnv + "=1"}, env...),
		LoadTimeout: time.Minute, PredictTimeout: time.Minute, StopGrace: 5 * time.Second,
		Logger: zap.New(zapcore.RegisterHooks(core, w.hook)),
	}
	return &harness{logs: logs, watch: w, spec: spec}
}

// start starts the fake worker and stops it when the test ends.
func (h *harness) start(t testing.TB) *Process {
	t.Helper()
	p, err := Start(context.Background(), h.spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(context.Background()) })
	return p
}

// recordPath asks the fake to write its argv, env and cwd to a file and
// returns the file's path.
func (h *harness) recordPath(t *testing.T) string {
	path := filepath.Join(t.TempDir(), "record.json")
	h.spec.Env = append(h.spec.Env, fakeRecordEnv+"="+path)
	return path
}

func readRecord(t *testing.T, path string) fakeRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r fakeRecord
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

func input(body string, kv ...string) *message.Input {
	in := &message.Input{Content: []message.Item{{Key: "data", Value: []byte(body)}}}
	for i := 0; i+1 < len(kv); i += 2 {
		in.Props = append(in.Props, message.Prop{Key: kv[i], Value: kv[i+1]})
	}
	return in
}

// readAll drains a stream and returns its chunks and the error it ended with
// (nil for a clean end).
func readAll(t *testing.T, s *message.Stream) ([]string, error) {
	t.Helper()
	var chunks []string
	for {
		c, err := s.Next(context.Background())
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return chunks, err
		}
		chunks = append(chunks, string(c))
	}
}

// gone reports whether the process pid no longer exists.
func gone(pid int) bool {
	err := signalGroup(pid, 0)
	return err != nil
}

func fileGone(path string) bool {
	_, err := os.Lstat(path)
	return os.IsNotExist(err)
}

// predict sends one untracked request and returns the worker's reply. A
// streamed reply comes back as soon as its header arrives, with the body on
// Stream. It is bounded as Dispatch is; the tests call the worker through it to
// see the reply whole.
func (p *Process) predict(ctx context.Context, in *message.Input) (*message.Response, error) {
	frame, err := wire.RequestBuffers(in, p.handlerProp(in))
	if err != nil {
		return nil, p.badRequest(err)
	}
	resp, st, err := p.roundTrip(ctx, frame)
	if err != nil {
		return nil, err
	}
	return resp.ToBatching(st), nil
}

// predictBatch sends ins as one dynamic batch (batch_size=N, keys prefixed
// batch_%03d.) and splits the reply into one result per request, in order.
// It is bounded as Dispatch is. The error is for the batch as a whole; a
// request that the reply leaves out gets its own error in its result.
func (p *Process) predictBatch(ctx context.Context, ins []*message.Input) ([]batchResult, error) {
	if len(ins) == 0 {
		return nil, fmt.Errorf("%s: %w: empty batch", p.name(), wire.ErrBadBatch)
	}
	frame, err := wire.BatchBuffers(ins, p.handlerProp(nil))
	if err != nil {
		return nil, p.badRequest(err)
	}
	resp, st, err := p.roundTrip(ctx, frame)
	if err != nil {
		return nil, err
	}
	return p.split(resp, st, len(ins))
}

// roundTrip sends one untracked frame and waits for the first frame of its
// reply, or for ctx: the reply, when it comes, is then dropped.
func (p *Process) roundTrip(ctx context.Context, frame net.Buffers) (*wire.Response, *message.Stream, error) {
	type first struct {
		resp *wire.Response
		st   *message.Stream
		err  error
	}
	got := make(chan first, 1)
	err := p.send(frame, func(resp *wire.Response, st *message.Stream, err error) { got <- first{resp, st, err} }, nil)
	if err != nil {
		return nil, nil, err
	}
	select {
	case f := <-got:
		return f.resp, f.st, f.err
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// track is Track for a caller that waits for the answer, as the tests do.
func track(p *Process, ctx context.Context, id string, in *message.Input, done func()) (*message.Response, error) {
	type result struct {
		resp *message.Response
		err  error
	}
	answered := make(chan result, 1)
	p.Track(ctx, id, in, func(resp *message.Response, err error) { answered <- result{resp, err} }, done)
	r := <-answered
	return r.resp, r.err
}

// propOf returns the value of r's last property named key, or "".
func propOf(r *message.Response, key string) string {
	v, _ := r.Prop(key)
	return v
}
