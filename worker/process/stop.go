package process

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
)

// ExitError says why a worker is gone: it names the worker, its pid and its
// exit status or signal. It wraps api.ErrWorkerDied.
type ExitError struct {
	Model  string
	ID     int
	PID    int
	Status string // how the process ended ("exit status 1", "signal: killed"); empty if unknown yet
	Detail string // what switchyard saw or did ("stopped", "killed: predict timeout", "connection lost: EOF")
}

// Error returns a sentence such as
// "worker 19003 (pid 4242) of model echo exited: signal: killed".
func (e *ExitError) Error() string {
	s := fmt.Sprintf("worker %d (pid %d) of model %s", e.ID, e.PID, e.Model)
	switch {
	case e.Status != "" && e.Detail != "":
		return s + " exited: " + e.Status + " (" + e.Detail + ")"
	case e.Status != "":
		return s + " exited: " + e.Status
	default:
		return s + ": " + e.Detail
	}
}

// Unwrap returns api.ErrWorkerDied.
func (e *ExitError) Unwrap() error { return api.ErrWorkerDied }

// wait is the one goroutine that waits for the process. It records how the
// process ended and closes the connection, so that the reader notices at once.
func (p *Process) wait() {
	err := p.cmd.Wait()
	p.stdout.flush()
	p.stderr.flush()
	p.mu.Lock()
	p.exitErr = p.exitError(err)
	conn := p.conn
	p.mu.Unlock()
	p.log.Info("worker exited", zap.String("status", p.exitErr.Status), zap.String("detail", p.exitErr.Detail))
	if conn != nil {
		_ = conn.Close()
	}
	close(p.exited)
}

// exitError describes the end of the process; p.mu is held.
func (p *Process) exitError(err error) *ExitError {
	e := &ExitError{Model: p.spec.Model, ID: p.id, PID: p.pid, Detail: p.killReason}
	switch {
	case p.cmd.ProcessState != nil:
		e.Status = p.cmd.ProcessState.String()
	case err != nil:
		e.Status = err.Error()
	}
	if p.stopping && e.Detail == "" {
		e.Detail = "stopped"
	}
	return e
}

// kill sends SIGKILL to the worker's process group, giving reason in the
// exit error. The first reason is kept.
func (p *Process) kill(reason string) {
	p.mu.Lock()
	if p.killReason == "" && !p.stopping {
		p.killReason = "killed: " + reason
	}
	p.mu.Unlock()
	select {
	case <-p.exited:
	default:
		_ = signalGroup(p.pid, syscall.SIGKILL)
	}
}

// awaitExit waits up to d for the process to exit and reports whether it did.
func (p *Process) awaitExit(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-p.exited:
		return true
	case <-timer.C:
		return false
	}
}

// Stop ends the worker: it closes the connection, sends SIGTERM to the
// process group, SIGKILL after the spec's StopGrace (or at once when ctx is
// done first), waits for the process and its goroutines, and removes the
// socket file. Requests still outstanding fail with an error wrapping
// api.ErrWorkerDied. Stop is idempotent; later calls return the first
// call's result.
func (p *Process) Stop(ctx context.Context) error {
	p.stopOnce.Do(func() { p.stopErr = p.stop(ctx) })
	return p.stopErr
}

func (p *Process) stop(ctx context.Context) error {
	p.mu.Lock()
	p.stopping = true
	conn := p.conn
	p.mu.Unlock()
	_ = conn.Close()
	p.cancel()
	p.awaitStop(ctx)
	<-p.readerDone
	p.mu.Lock()
	if p.headTimer != nil {
		p.headTimer.Stop()
	}
	p.mu.Unlock()
	p.bg.Wait()
	p.log.Info("worker stopped")
	return removeSocket(p.sock)
}

// awaitStop waits for the exit after SIGTERM, and sends SIGKILL when the
// grace period ends or ctx is done.
func (p *Process) awaitStop(ctx context.Context) {
	timer := time.NewTimer(p.spec.StopGrace)
	defer timer.Stop()
	select {
	case <-p.exited:
		return
	case <-timer.C:
		p.log.Warn("worker ignored SIGTERM; killing it", zap.Duration("grace", p.spec.StopGrace))
	case <-ctx.Done():
	}
	_ = signalGroup(p.pid, syscall.SIGKILL)
	<-p.exited
}
