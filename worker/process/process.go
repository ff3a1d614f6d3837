package process

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/worker/wire"
)

// ReadyLine is what a worker prints on stdout once its socket listens.
const ReadyLine = "Python engine started."

// Defaults for the zero values of Spec's durations: DJL's
// option.model_loading_timeout and option.predict_timeout, and the SIGTERM to
// SIGKILL delay.
const (
	DefaultLoadTimeout    = 240 * time.Second
	DefaultPredictTimeout = 120 * time.Second
	DefaultStopGrace      = 5 * time.Second
)

// Sentinel errors of a worker's life. Errors about a worker that died while
// it held requests wrap api.ErrWorkerDied instead (see ExitError).
var (
	// ErrSpec means a Spec lacks a required field.
	ErrSpec = errors.New("worker: invalid spec")
	// ErrLoad means the worker exited during its start or answered the
	// initialization request with a failure.
	ErrLoad = errors.New("worker: model load failed")
	// ErrLoadTimeout means the worker was not ready and initialized within
	// the load timeout.
	ErrLoadTimeout = errors.New("worker: load timed out")
	// ErrStream means a streamed reply ended with an error from the worker.
	ErrStream = errors.New("worker: stream ended with an error")
	// ErrDuplicateID means a tracked request with that id is still in flight.
	ErrDuplicateID = errors.New("worker: tracking id already in flight")
	// ErrProtocol means the worker sent something the protocol does not allow.
	ErrProtocol = errors.New("worker: protocol error")
	// ErrNotSent means a request never reached the worker (it had died, or
	// writing the request failed), so another worker may take it.
	ErrNotSent = errors.New("worker: request not sent")
)

// Spec says how to start one worker process.
type Spec struct {
	Model          string         // model name, for logs and errors
	ModelDir       string         // working directory, --model-dir
	Python         string         // interpreter (e.g. /usr/bin/python3)
	Engine         string         // engine script path (switchyard_engine.py, or DJL's djl_python_engine.py)
	PythonPath     []string       // put first on PYTHONPATH; the model folder is appended, then the environment's PYTHONPATH
	EntryPoint     string         // --entry-point ("" travels as an empty argument, as in DJL)
	Recommended    string         // --recommended-entry-point, likewise
	AsyncMode      bool           // --async-mode, else --no-async-mode
	Handler        string         // the handler function every request names (property handler); "" means handle
	DeviceID       int            // --device-id: -1 for CPU; 0 for a GPU worker pinned by VisibleDevices
	VisibleDevices string         // CUDA_VISIBLE_DEVICES when not empty (a GPU or MIG device UUID)
	LogLevel       string         // --log-level; "" means info
	SocketDir      string         // created 0700 if missing
	Env            []string       // extra environment (KEY=VALUE), last, so it wins
	InitProps      []message.Prop // the initialization request's properties (every model option)
	LoadTimeout    time.Duration  // readiness + initialization, option.model_loading_timeout
	PredictTimeout time.Duration  // option.predict_timeout
	StopGrace      time.Duration  // SIGTERM → SIGKILL delay (default 5s)
	MaxItem        int            // cap on one received item; 0 means wire.DefaultMaxItem
	Logger         *zap.Logger    // nil means no logging
}

// withDefaults checks the spec, fills in the defaults and makes the paths
// absolute, since the worker runs in the model folder.
func (s Spec) withDefaults() (Spec, error) {
	if s.Python == "" || s.Engine == "" || s.ModelDir == "" || s.SocketDir == "" {
		return s, fmt.Errorf("%w: Python, Engine, ModelDir and SocketDir are required", ErrSpec)
	}
	var err error
	for _, p := range []*string{&s.ModelDir, &s.Engine, &s.SocketDir} {
		if *p, err = filepath.Abs(*p); err != nil {
			return s, fmt.Errorf("%w: %w", ErrSpec, err)
		}
	}
	if strings.ContainsRune(s.Python, filepath.Separator) {
		if s.Python, err = filepath.Abs(s.Python); err != nil {
			return s, fmt.Errorf("%w: %w", ErrSpec, err)
		}
	}
	s.fillDefaults()
	return s, nil
}

func (s *Spec) fillDefaults() {
	if s.Model == "" {
		s.Model = filepath.Base(s.ModelDir)
	}
	s.LoadTimeout = orDefault(s.LoadTimeout, DefaultLoadTimeout)
	s.PredictTimeout = orDefault(s.PredictTimeout, DefaultPredictTimeout)
	s.StopGrace = orDefault(s.StopGrace, DefaultStopGrace)
	if s.MaxItem <= 0 {
		s.MaxItem = wire.DefaultMaxItem
	}
	if s.Logger == nil {
		s.Logger = zap.NewNop()
	}
	if s.Handler == "" {
		s.Handler = defaultHandler
	}
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Process is one running worker process and its connection.
type Process struct {
	spec    Spec
	id      int // the worker's number, the n of its socket name
	sock    string
	handler []message.Prop // handler=<Spec.Handler>, added to requests that name none
	log     *zap.Logger
	stdout  *lineWriter
	stderr  *lineWriter
	tail    *ring

	cmd     *exec.Cmd
	cancel  context.CancelFunc // ends cmd's context: SIGTERM to the group
	pid     int
	started time.Time
	ready   chan struct{} // closed at the readiness line
	exited  chan struct{} // closed once the process has been waited for
	exitErr *ExitError    // set before exited is closed

	conn      *net.UnixConn
	rd        *wire.Reader
	initProps []message.Prop

	wmu       sync.Mutex // one frame on the wire at a time; taken before mu
	wdeadline time.Time  // the connection's write deadline (guarded by wmu)

	mu         sync.Mutex
	pending    []*call          // untracked requests in flight, in the order sent: the head runs, the rest wait in line
	headTimer  *time.Timer      // the predict timeout of the head of the line
	headArmed  bool             // headTimer will fire
	tracked    map[string]*call // tracked requests by id
	dead       error            // why requests fail now; set once
	deadCh     chan struct{}    // closed when dead is set
	idle       chan struct{}    // closed while nothing is outstanding
	idleClosed bool
	stopping   bool
	killReason string

	readerDone chan struct{}
	bg         sync.WaitGroup // timer and watch callbacks that may write or kill (see inBackground)
	stopOnce   sync.Once
	stopErr    error
}

// PID returns the worker's process id.
func (p *Process) PID() int { return p.pid }

// Socket returns the path of the worker's Unix socket.
func (p *Process) Socket() string { return p.sock }

// Started returns the time the process was started.
func (p *Process) Started() time.Time { return p.started }

// InitProps returns the properties of the worker's reply to the
// initialization request (rolling_batch=..., for instance).
func (p *Process) InitProps() []message.Prop { return slices.Clone(p.initProps) }

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.exited }

// Err says why the process exited, naming the worker, its pid and its exit
// status or signal; it is nil while the process runs. The error wraps
// api.ErrWorkerDied.
func (p *Process) Err() error {
	select {
	case <-p.exited:
		return p.exitErr
	default:
		return nil
	}
}

// StderrTail returns the last lines the worker wrote on stderr, oldest first.
func (p *Process) StderrTail() []string { return p.tail.lines() }

// inFlight returns the number of tracked requests outstanding, counting
// canceled ones until the worker has ended them.
func (p *Process) inFlight() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.tracked)
}

// WaitIdle blocks until nothing is outstanding on the worker: no untracked
// request or stream and no tracked request. A worker that died is idle.
func (p *Process) WaitIdle(ctx context.Context) error {
	p.mu.Lock()
	idle := p.idle
	p.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// name returns the words that name the worker in messages.
func (p *Process) name() string {
	return fmt.Sprintf("worker %d (pid %d) of model %s", p.id, p.pid, p.spec.Model)
}
