package main

import (
	"errors"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		out := make([]time.Duration, len(ns))
		for i, n := range ns {
			out[i] = time.Duration(n) * time.Millisecond
		}
		return out
	}
	hundred := make([]time.Duration, 100)
	for i := range hundred {
		hundred[i] = time.Duration(i+1) * time.Millisecond
	}
	tests := []struct {
		name   string
		sorted []time.Duration
		p      int
		want   time.Duration
	}{
		{"none", nil, 50, 0},
		{"one", ms(7), 50, 7 * time.Millisecond},
		{"one p99", ms(7), 99, 7 * time.Millisecond},
		{"two p50 is the lower", ms(1, 2), 50, time.Millisecond},
		{"two p99 is the upper", ms(1, 2), 99, 2 * time.Millisecond},
		{"hundred p50", hundred, 50, 50 * time.Millisecond},
		{"hundred p99", hundred, 99, 99 * time.Millisecond},
		{"hundred p100", hundred, 100, 100 * time.Millisecond},
		{"three p50", ms(1, 2, 3), 50, 2 * time.Millisecond},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := percentile(tc.sorted, tc.p); got != tc.want {
				t.Errorf("percentile(%v, %d) = %v, want %v", tc.sorted, tc.p, got, tc.want)
			}
		})
	}
}

func TestSummarize(t *testing.T) {
	boom := errors.New("boom")
	tallies := []tally{
		{latencies: []time.Duration{3 * time.Millisecond, time.Millisecond}},
		{latencies: []time.Duration{2 * time.Millisecond}, errors: 2, firstErr: boom},
		{latencies: []time.Duration{4 * time.Millisecond}},
	}
	r := summarize(tallies, 2*time.Second)
	want := result{Requests: 4, Errors: 2, Seconds: 2, RPS: 2, P50Micros: 2000, P99Micros: 4000, FirstError: "boom"}
	if r.Requests != want.Requests || r.Errors != want.Errors || r.Seconds != want.Seconds || r.RPS != want.RPS ||
		r.P50Micros != want.P50Micros || r.P99Micros != want.P99Micros || r.FirstError != want.FirstError {
		t.Errorf("summarize = %+v, want %+v", r, want)
	}
}

func TestTallyRecord(t *testing.T) {
	var tl tally
	first, second := errors.New("first"), errors.New("second")
	tl.record(time.Millisecond, nil)
	tl.record(time.Second, first)
	tl.record(time.Second, second)
	if len(tl.latencies) != 1 || tl.errors != 2 || tl.firstErr != first {
		t.Errorf("tally = %+v, want one latency, two errors, the first kept", tl)
	}
}
