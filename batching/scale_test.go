package batching

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestScaleUp(t *testing.T) {
	tests := []struct {
		name                         string
		queued, batch, alive, maxWrk int
		want                         bool
	}{
		{name: "no worker and a job waits", queued: 1, batch: 4, alive: 0, maxWrk: 2, want: true},
		{name: "no worker and nothing waits", queued: 0, batch: 4, alive: 0, maxWrk: 2, want: false},
		{name: "no worker allowed", queued: 5, batch: 1, alive: 0, maxWrk: 0, want: false},
		{name: "backlog over twice the batch", queued: 9, batch: 4, alive: 1, maxWrk: 2, want: true},
		{name: "backlog of exactly twice the batch", queued: 8, batch: 4, alive: 1, maxWrk: 2, want: false},
		{name: "backlog but at the maximum", queued: 100, batch: 4, alive: 2, maxWrk: 2, want: false},
		{name: "above the maximum", queued: 100, batch: 4, alive: 3, maxWrk: 2, want: false},
		{name: "batch size zero counts as one", queued: 3, batch: 0, alive: 1, maxWrk: 4, want: true},
		{name: "batch size zero, small backlog", queued: 2, batch: 0, alive: 1, maxWrk: 4, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ScaleUp(tt.queued, tt.batch, tt.alive, tt.maxWrk); got != tt.want {
				t.Errorf("ScaleUp(%d, %d, %d, %d) = %v, want %v", tt.queued, tt.batch, tt.alive, tt.maxWrk, got, tt.want)
			}
		})
	}
}

// idleOp is one call on an IdleTracker, at t0+at.
type idleOp struct {
	call string // add, remove, busy, idle
	id   string
	at   time.Duration
}

func TestIdleTracker(t *testing.T) {
	const maxIdle = time.Minute
	tests := []struct {
		name string
		ops  []idleOp
		at   time.Duration // Stale is asked at t0+at
		want []string
	}{
		{name: "added and never used", ops: []idleOp{{"add", "w1", 0}}, at: maxIdle, want: []string{"w1"}},
		{name: "just under the limit", ops: []idleOp{{"add", "w1", 0}}, at: maxIdle - 1},
		{name: "busy however long", ops: []idleOp{{"add", "w1", 0}, {"busy", "w1", time.Second}}, at: time.Hour},
		{
			name: "finishing work restarts the count",
			ops:  []idleOp{{"add", "w1", 0}, {"busy", "w1", 10 * time.Second}, {"idle", "w1", 30 * time.Second}},
			at:   maxIdle + 20*time.Second,
		},
		{
			name: "idle long enough after work",
			ops:  []idleOp{{"add", "w1", 0}, {"busy", "w1", 10 * time.Second}, {"idle", "w1", 30 * time.Second}},
			at:   maxIdle + 30*time.Second, want: []string{"w1"},
		},
		{name: "workers never added are ignored", ops: []idleOp{{"busy", "w0", 0}, {"idle", "w0", 0}}, at: time.Hour},
		{name: "removed", ops: []idleOp{{"add", "w1", 0}, {"remove", "w1", 0}}, at: time.Hour},
		{
			name: "several, sorted",
			ops:  []idleOp{{"add", "w3", 0}, {"add", "w1", 0}, {"add", "w2", 0}, {"busy", "w2", 0}},
			at:   time.Hour, want: []string{"w1", "w3"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewIdleTracker()
			for _, op := range tt.ops {
				applyIdleOp(tr, op)
			}
			if got := tr.Stale(t0.Add(tt.at), maxIdle); !slices.Equal(got, tt.want) {
				t.Errorf("Stale = %v, want %v", got, tt.want)
			}
		})
	}
}

func applyIdleOp(tr *IdleTracker, op idleOp) {
	now := t0.Add(op.at)
	switch op.call {
	case "add":
		tr.Add(op.id, now)
	case "remove":
		tr.Remove(op.id)
	case "busy":
		tr.Busy(op.id)
	case "idle":
		tr.Idle(op.id, now)
	}
}

// TestIdleTrackerConcurrent lets workers report while Stale is asked; the
// race detector checks the locking, and every worker ends idle and stale.
func TestIdleTrackerConcurrent(t *testing.T) {
	tr := NewIdleTracker()
	var wg sync.WaitGroup
	for i := range 8 {
		id := fmt.Sprint("w", i)
		tr.Add(id, t0)
		wg.Go(func() {
			for range 100 {
				tr.Busy(id)
				tr.Idle(id, t0)
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			tr.Stale(t0, time.Second)
		}
	})
	wg.Wait()
	if got := tr.Stale(t0.Add(time.Second), time.Second); len(got) != 8 {
		t.Errorf("Stale = %v, want all eight workers", got)
	}
}
