package e2e

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// burst runs conc clients that send requests back to back until stop is
// closed, and returns what they got.
func burst(s *Server, model string, conc int, stop <-chan struct{}, headers ...string) []outcome {
	c := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	defer c.CloseIdleConnections()
	var mu sync.Mutex
	var outs []outcome
	var wg sync.WaitGroup
	for range conc {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				o := invoke(c, s, model, clientTimeout, headers...)
				mu.Lock()
				outs = append(outs, o)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return outs
}

// timeline records when a model's worker count changed.
type timeline struct {
	start      time.Time
	last       int
	steps      []string
	peak       int
	maxStarted int // most workers STARTING at once
	temporary  map[int]bool
}

func newTimeline() *timeline {
	return &timeline{start: time.Now(), last: -1, temporary: map[int]bool{}}
}

// note reads the model's workers and records a change.
func (tl *timeline) note(s *Server, model string) int {
	ws := s.workers(model)
	starting := 0
	for _, w := range ws {
		if w.Status == "STARTING" {
			starting++
		}
		if w.PID != 0 {
			tl.temporary[w.PID] = w.Temporary
		}
	}
	tl.maxStarted = max(tl.maxStarted, starting)
	tl.peak = max(tl.peak, len(ws))
	if len(ws) != tl.last {
		tl.steps = append(tl.steps, fmt.Sprintf("%.1fs:%d", time.Since(tl.start).Seconds(), len(ws)))
		tl.last = len(ws)
	}
	return len(ws)
}

// TestScaleBurstThenQuiet runs a burst a single worker cannot keep up with:
// workers grow one at a time to maxWorkers, then shrink back to minWorkers
// once the burst has been over for max_idle_time (2 s).
func TestScaleBurstThenQuiet(t *testing.T) {
	store := t.TempDir()
	faultModel(t, store, "bursty", []string{"minWorkers=1", "maxWorkers=3", "max_idle_time=2"}, nil)
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(faultWait, api.StatusHealthy, "bursty")
	tl := newTimeline()
	stop := make(chan struct{})
	result := make(chan []outcome, 1)
	go func() { result <- burst(s, "bursty", 16, stop, "X-Sleep", "0.2") }()
	grew := testutil.Poll(faultWait, func() bool { return tl.note(s, "bursty") == 3 && len(s.live("bursty")) == 3 })
	grewAfter := time.Since(tl.start)
	testutil.Poll(time.Second, func() bool { tl.note(s, "bursty"); return false }) // the three serve a while
	close(stop)
	outs := <-result
	quiet := time.Now()
	shrank := testutil.Poll(faultWait, func() bool { return tl.note(s, "bursty") == 1 })
	shrankAfter := time.Since(quiet)
	sum := newTally(outs)
	t.Logf("burst at concurrency 16: %s; workers over time %s; maxWorkers reached after %v, back to minWorkers %v after the burst ended",
		sum, strings.Join(tl.steps, " "), grewAfter.Round(time.Millisecond), shrankAfter.Round(time.Millisecond))
	if !grew || !shrank {
		t.Fatalf("grew to 3: %v, shrank to 1: %v", grew, shrank)
	}
	if sum.codes[http.StatusOK] != sum.sent {
		t.Errorf("burst answers: %s %v", sum, sum.messages)
	}
	if tl.maxStarted > 1 {
		t.Errorf("%d workers started at once, want one at a time", tl.maxStarted)
	}
	checkKinds(t, s, tl)
}

// checkKinds checks that the worker left is the permanent one and that the
// two others were temporary.
func checkKinds(t *testing.T, s *Server, tl *timeline) {
	t.Helper()
	ws := s.workers("bursty")
	if len(ws) != 1 || ws[0].Temporary {
		t.Fatalf("after the quiet: %+v, want one permanent worker", ws)
	}
	temps := 0
	for pid, temp := range tl.temporary {
		if temp {
			temps++
		} else if pid != ws[0].PID {
			t.Errorf("worker %d was permanent and is gone", pid)
		}
	}
	if temps != 2 {
		t.Errorf("%d temporary workers seen, want 2: %v", temps, tl.temporary)
	}
}

// TestScalePut changes a model's worker counts with PUT /models/{name}
// while it serves: up to three, then down to one while a request runs,
// which completes. The request waits at the probe's gate until the scale
// down is done, so it runs during it however slow the machine.
func TestScalePut(t *testing.T) {
	store := t.TempDir()
	dir := probeModel(t, store, "knob", "minWorkers=1", "maxWorkers=1")
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(faultWait, api.StatusHealthy, "knob")
	began := time.Now()
	if code, body := s.Do(http.MethodPut, s.Management+"/models/knob?min_worker=3&max_worker=3", "", nil); code != http.StatusOK {
		t.Fatalf("scale up: %d %s", code, body)
	}
	t.Logf("scaled from 1 to 3 workers in %v", time.Since(began).Round(time.Millisecond))
	if live := s.live("knob"); len(live) != 3 {
		t.Fatalf("live workers after a synchronous scale to 3: %v", live)
	}
	g := newGates(t, dir, "go")
	c := newClient(2)
	running := async(func() reply { return probeCall(c, s, "knob", "running", "go") })
	waitSeen(t, dir, "running")
	down := time.Now()
	if code, body := s.Do(http.MethodPut, s.Management+"/models/knob?min_worker=1&max_worker=1", "", nil); code != http.StatusOK {
		t.Fatalf("scale down: %d %s", code, body)
	}
	testutil.WaitFor(t, faultWait, "one worker left", func() bool { return len(s.workers("knob")) == 1 })
	t.Logf("scaled from 3 to 1 worker in %v while a request ran", time.Since(down).Round(time.Millisecond))
	if len(running) != 0 {
		t.Fatal("the request ended during the scale down, before its gate opened")
	}
	g.open("go")
	if a, err := collect(t, running, 1)[0].probe(); err != nil || a.Tag != "running" {
		t.Errorf("the request running during the scale down: %+v, %v", a, err)
	}
	if code, _ := s.Do(http.MethodPut, s.Management+"/models/knob?min_worker=2&max_worker=1", "", nil); code != http.StatusBadRequest {
		t.Errorf("min above max: %d, want 400", code)
	}
}
