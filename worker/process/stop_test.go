package process

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/switchyard/switchyard/api"
)

func TestStop(t *testing.T) {
	tests := []struct {
		name       string
		env        []string
		grace      time.Duration
		wantStatus string
	}{
		{name: "worker ends on SIGTERM", grace: time.Minute, wantStatus: "(stopped)"},
		{name: "worker ignores SIGTERM", env: []string{fakeStartEnv + "=ignore-term"}, grace: 100 * time.Millisecond, wantStatus: "signal: killed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t)
			h := newHarness(t, tt.env...)
			h.spec.StopGrace = tt.grace
			p, err := Start(context.Background(), h.spec)
			if err != nil {
				t.Fatal(err)
			}
			if err := p.Stop(context.Background()); err != nil {
				t.Fatal(err)
			}
			checkStopped(t, p)
			checkErr(t, p.Err(), []error{api.ErrWorkerDied}, []string{tt.wantStatus})
			if err := p.Stop(context.Background()); err != nil {
				t.Errorf("second Stop: %v", err)
			}
		})
	}
}

func checkStopped(t *testing.T, p *Process) {
	t.Helper()
	select {
	case <-p.Done():
	default:
		t.Error("Done is open after Stop")
	}
	if !gone(p.PID()) {
		t.Errorf("pid %d still exists after Stop", p.PID())
	}
	if !fileGone(p.Socket()) {
		t.Errorf("socket %s still exists after Stop", p.Socket())
	}
}

// TestStopFailsOutstanding stops a worker that holds an untracked request
// and a tracked stream: both fail with the stop, and nothing leaks.
func TestStopFailsOutstanding(t *testing.T) {
	defer goleak.VerifyNone(t)
	h := rollingHarness(t)
	p, err := Start(context.Background(), h.spec)
	if err != nil {
		t.Fatal(err)
	}
	done := newDoneProbe()
	stream, err := track(p, context.Background(), "t", input("", "hold", "first"), done.fn)
	if err != nil {
		t.Fatal(err)
	}
	hanging := h.watch.expect("fake: hanging")
	errc := make(chan error, 1)
	go func() {
		_, err := p.predict(context.Background(), input("", "action", "hang"))
		errc <- err
	}()
	<-hanging
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("worker %d (pid %d) of model echo: stopped", p.id, p.PID())
	checkErr(t, <-errc, []error{api.ErrWorkerDied}, []string{want})
	_, err = readAll(t, stream.Stream)
	checkErr(t, err, []error{api.ErrWorkerDied}, []string{want})
	done.check(t)
	checkStopped(t, p)
	late := newDoneProbe()
	if _, err := track(p, context.Background(), "late", input(""), late.fn); !errors.Is(err, api.ErrWorkerDied) || !errors.Is(err, ErrNotSent) {
		t.Errorf("Track after Stop: %v", err)
	}
	late.check(t)
}

// TestStopContextKills checks that a done context skips the grace period.
func TestStopContextKills(t *testing.T) {
	h := newHarness(t, fakeStartEnv+"=ignore-term")
	h.spec.StopGrace = time.Hour
	p, err := Start(context.Background(), h.spec)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	checkStopped(t, p)
}

func TestWaitIdleContext(t *testing.T) {
	h := rollingHarness(t)
	p := h.start(t)
	if err := p.WaitIdle(context.Background()); err != nil {
		t.Fatalf("WaitIdle on an idle worker: %v", err)
	}
	held, cancelHeld := context.WithCancel(context.Background())
	defer cancelHeld()
	if _, err := track(p, held, "busy", input("", "hold", "first"), nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := p.WaitIdle(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("WaitIdle on a busy worker with a done context: %v", err)
	}
}
