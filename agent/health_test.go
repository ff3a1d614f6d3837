package agent

import (
	"testing"
	"time"
)

// TestHealth: Healthy, HealthyBusy while invocations run, and the time of
// the last change, on an injected clock.
func TestHealth(t *testing.T) {
	now := time.Unix(1000, 0)
	h := NewHealth(func() time.Time { return now })
	check := func(status string, at int64) {
		t.Helper()
		if p := h.Ping(); p.Status != status || p.TimeOfLastUpdate != at {
			t.Errorf("ping %+v, want %s at %d", p, status, at)
		}
	}
	check(StatusHealthy, 1000)
	now = now.Add(5 * time.Second)
	end1 := h.Begin()
	check(StatusHealthyBusy, 1005)
	now = now.Add(5 * time.Second)
	end2 := h.Begin()
	end1()
	end1() // a second call counts once
	check(StatusHealthyBusy, 1005)
	now = now.Add(5 * time.Second)
	end2()
	check(StatusHealthy, 1015)
}
