package process

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/worker/wire"
)

// exitGrace is how long a reader that lost its connection waits for the
// process's exit status, so that the status can be in the error.
const exitGrace = time.Second

// StartError is the error Start returns. It carries the last lines the
// worker wrote on stderr before it was stopped (a Python traceback, often),
// for the model's describe record.
type StartError struct {
	Err    error    // what went wrong; wraps ErrLoad, ErrLoadTimeout, ErrSpec, ...
	Stderr []string // the worker's last stderr lines, oldest first; nil if it never ran
}

// Error returns the message of Err.
func (e *StartError) Error() string { return e.Err.Error() }

// Unwrap returns Err.
func (e *StartError) Unwrap() error { return e.Err }

// Start starts a worker process for spec and returns it once the worker has
// answered the initialization request. Readiness and initialization together
// are bounded by spec.LoadTimeout and by ctx; ctx does not bound the
// process's life after Start returns. On any failure the process is killed
// and its socket file removed before Start returns, and the error is a
// *StartError.
func Start(ctx context.Context, spec Spec) (*Process, error) {
	spec, err := spec.withDefaults()
	if err != nil {
		return nil, &StartError{Err: err}
	}
	p, err := newProcess(spec)
	if err != nil {
		return nil, &StartError{Err: err}
	}
	if err := p.launch(); err != nil {
		removeSocket(p.sock)
		return nil, &StartError{Err: err}
	}
	if err := p.handshake(ctx); err != nil {
		p.abort()
		return nil, &StartError{Err: err, Stderr: p.tail.lines()}
	}
	p.readerDone = make(chan struct{})
	go p.readLoop()
	return p, nil
}

func newProcess(spec Spec) (*Process, error) {
	id, sock, err := allocateSocket(spec.SocketDir)
	if err != nil {
		return nil, err
	}
	p := &Process{
		spec: spec, id: id, sock: sock, tail: newRing(stderrTailLines),
		handler: []message.Prop{{Key: HandlerKey, Value: spec.Handler}},
		ready:   make(chan struct{}), exited: make(chan struct{}),
		tracked: map[string]*call{},
		deadCh:  make(chan struct{}), idle: make(chan struct{}), idleClosed: true,
	}
	close(p.idle)
	p.log = spec.Logger.With(zap.String("model", spec.Model), zap.Int("worker", id))
	p.stdout = newLineWriter(p.log, "stdout", zap.InfoLevel, p.sawStdout)
	p.stderr = newLineWriter(p.log, "stderr", zap.WarnLevel, p.tail.add)
	return p, nil
}

// launch spawns the process and the goroutine that waits for it.
func (p *Process) launch() error {
	pctx, cancel := context.WithCancel(context.Background())
	p.cancel = cancel
	p.cmd = p.command(pctx)
	if err := p.cmd.Start(); err != nil {
		cancel()
		return fmt.Errorf("%w: worker %d of model %s: %w", ErrLoad, p.id, p.spec.Model, err)
	}
	p.pid, p.started = p.cmd.Process.Pid, time.Now()
	p.log = p.log.With(zap.Int("pid", p.pid))
	p.stdout.setLogger(p.log)
	p.stderr.setLogger(p.log)
	p.log.Info("worker started", zap.String("socket", p.sock), zap.Strings("args", p.cmd.Args))
	go p.wait()
	return nil
}

// command builds the worker's command line and environment.
func (p *Process) command(ctx context.Context) *exec.Cmd {
	cmd := exec.CommandContext(ctx, p.spec.Python, p.args()...)
	cmd.Dir = p.spec.ModelDir
	cmd.Env = p.env()
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = p.spec.StopGrace
	return cmd
}

func (p *Process) args() []string { return commandLine(p.spec, p.sock) }

func (p *Process) env() []string {
	path := append(append([]string{}, p.spec.PythonPath...), p.spec.ModelDir)
	if old := os.Getenv("PYTHONPATH"); old != "" {
		path = append(path, old)
	}
	env := append(os.Environ(), "PYTHONPATH="+strings.Join(path, string(os.PathListSeparator)))
	if p.spec.VisibleDevices != "" {
		env = append(env, "CUDA_VISIBLE_DEVICES="+p.spec.VisibleDevices)
	}
	return append(env, p.spec.Env...)
}

// sawStdout watches stdout for the readiness line.
func (p *Process) sawStdout(line string) {
	if !strings.Contains(line, ReadyLine) {
		return
	}
	select {
	case <-p.ready:
	default:
		close(p.ready)
	}
}

// handshake waits for readiness, connects and initializes the worker, all
// within the load timeout.
func (p *Process) handshake(ctx context.Context) error {
	deadline := time.Now().Add(p.spec.LoadTimeout)
	if err := p.awaitReady(ctx, deadline); err != nil {
		return err
	}
	if err := p.connect(ctx, deadline); err != nil {
		return err
	}
	return p.initialize(ctx, deadline)
}

func (p *Process) awaitReady(ctx context.Context, deadline time.Time) error {
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-p.ready:
		return nil
	case <-p.exited:
		return p.earlyExit()
	case <-timer.C:
		return p.loadTimeout("no readiness line")
	case <-ctx.Done():
		return p.startCanceled(ctx)
	}
}

func (p *Process) connect(ctx context.Context, deadline time.Time) error {
	dctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	var d net.Dialer
	c, err := d.DialContext(dctx, "unix", p.sock)
	switch {
	case err == nil:
	case ctx.Err() != nil:
		return p.startCanceled(ctx)
	case dctx.Err() != nil:
		return p.loadTimeout("socket did not accept")
	default:
		return fmt.Errorf("%w: %s: connect %s: %w", ErrLoad, p.name(), p.sock, err)
	}
	p.mu.Lock()
	p.conn = c.(*net.UnixConn)
	p.mu.Unlock()
	p.rd = wire.NewReader(p.conn, p.spec.MaxItem)
	return nil
}

// initialize sends the initialization request and reads its reply.
func (p *Process) initialize(ctx context.Context, deadline time.Time) error {
	if err := p.conn.SetDeadline(deadline); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrLoad, p.name(), err)
	}
	stop := context.AfterFunc(ctx, func() { _ = p.conn.SetDeadline(time.Unix(1, 0)) })
	resp, err := p.exchangeInit()
	if !stop() {
		return p.startCanceled(ctx)
	}
	if err != nil {
		return p.initFailed(err)
	}
	if err := p.conn.SetDeadline(time.Time{}); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrLoad, p.name(), err)
	}
	return p.acceptInit(resp)
}

func (p *Process) exchangeInit() (*wire.Response, error) {
	init := &message.Input{Props: p.spec.InitProps}
	frame, err := wire.AppendRequestWith(nil, init, p.handlerProp(init))
	if err != nil {
		return nil, err
	}
	if _, err := p.conn.Write(frame); err != nil {
		return nil, err
	}
	return p.rd.ReadResponse()
}

func (p *Process) acceptInit(resp *wire.Response) error {
	switch {
	case resp.Streaming:
		return fmt.Errorf("%w: %s: %w: streamed reply to the initialization request", ErrLoad, p.name(), ErrProtocol)
	case resp.Code == 507:
		return fmt.Errorf("%w: %w: %s: %s", ErrLoad, api.ErrInsufficientMemory, p.name(), resp.Message)
	case resp.Code >= 300:
		return fmt.Errorf("%w: %s answered %d: %s", ErrLoad, p.name(), resp.Code, resp.Message)
	}
	p.initProps = resp.Props
	p.log.Info("worker ready", zap.Duration("load", time.Since(p.started)))
	return nil
}

// initFailed explains a failed initialization exchange.
func (p *Process) initFailed(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return p.loadTimeout("no reply to the initialization request")
	}
	if errors.Is(err, wire.ErrTooLong) || errors.Is(err, wire.ErrTooMany) {
		return fmt.Errorf("%w: %s: %w: %w", ErrLoad, p.name(), api.ErrBadRequest, err)
	}
	if p.awaitExit(exitGrace) {
		return p.earlyExit()
	}
	return fmt.Errorf("%w: %s: %w: %w", ErrLoad, p.name(), ErrProtocol, err)
}

// earlyExit explains an exit during the start, with the last stderr line
// (the last line of a Python traceback, usually).
func (p *Process) earlyExit() error {
	last := p.tail.last()
	if last == "" {
		return fmt.Errorf("%w: %w", ErrLoad, p.exitErr)
	}
	return fmt.Errorf("%w: %w: %s", ErrLoad, p.exitErr, last)
}

func (p *Process) loadTimeout(why string) error {
	return fmt.Errorf("%w: %s did not start within %v (%s)", ErrLoadTimeout, p.name(), p.spec.LoadTimeout, why)
}

func (p *Process) startCanceled(ctx context.Context) error {
	return fmt.Errorf("%s: start canceled: %w", p.name(), context.Cause(ctx))
}

// abort kills a process whose start failed, waits for it and removes its
// socket file.
func (p *Process) abort() {
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	p.kill("start failed")
	p.cancel()
	<-p.exited
	if p.conn != nil {
		_ = p.conn.Close()
	}
	removeSocket(p.sock)
}
