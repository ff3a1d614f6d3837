package frontend

import (
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// countingReclaimer is a reclaimer whose free only counts.
func countingReclaimer(size int, delay time.Duration) (*reclaimer, *atomic.Int32) {
	var n atomic.Int32
	return &reclaimer{size: size, delay: delay, free: func() { n.Add(1) }}, &n
}

func TestReclaimerWaitsForQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, freed := countingReclaimer(10, time.Second)
		defer r.stop()
		r.note(9) // small: ignored
		time.Sleep(2 * time.Second)
		if freed.Load() != 0 {
			t.Fatalf("freed %d times after a small request", freed.Load())
		}
		r.note(10)
		time.Sleep(600 * time.Millisecond)
		r.note(50) // another large request restarts the wait
		time.Sleep(600 * time.Millisecond)
		if freed.Load() != 0 {
			t.Fatalf("freed before the requests were quiet for a second")
		}
		time.Sleep(500 * time.Millisecond)
		synctest.Wait()
		if freed.Load() != 1 {
			t.Fatalf("freed %d times, want once", freed.Load())
		}
		r.note(10)
		time.Sleep(2 * time.Second)
		if freed.Load() != 2 {
			t.Fatalf("freed %d times after a second large request, want 2", freed.Load())
		}
	})
}

func TestReclaimerStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, freed := countingReclaimer(1, time.Second)
		r.note(5)
		r.stop()
		r.note(5)
		time.Sleep(5 * time.Second)
		if freed.Load() != 0 {
			t.Errorf("freed %d times after stop", freed.Load())
		}
	})
}

// TestLargeRequestReclaims sends a body of reclaimSize through the server:
// once it is answered, the memory is given back.
func TestLargeRequestReclaims(t *testing.T) {
	ts := startServer(t, newFake("m"))
	freed := make(chan struct{}, 4)
	ts.reclaim.mu.Lock()
	ts.reclaim.delay, ts.reclaim.free = time.Millisecond, func() { freed <- struct{}{} }
	ts.reclaim.mu.Unlock()
	resp, body := ts.do(t, "POST", ts.inf+"/predictions/m", "small", nil)
	if resp.StatusCode != 200 || string(body) != "small" {
		t.Fatalf("answer %d %q", resp.StatusCode, body)
	}
	select {
	case <-freed:
		t.Fatal("a small request gave memory back")
	case <-time.After(100 * time.Millisecond):
	}
	large := strings.Repeat("x", reclaimSize)
	if resp, body := ts.do(t, "POST", ts.inf+"/predictions/m", large, nil); resp.StatusCode != 200 || len(body) != len(large) {
		t.Fatalf("answer %d with %d bytes", resp.StatusCode, len(body))
	}
	select {
	case <-freed:
	case <-time.After(guard):
		t.Fatal("memory not given back after a large request")
	}
}
