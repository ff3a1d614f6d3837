package main

import (
	"slices"
	"time"
)

// result is one measured cell, as run writes it (one JSON line each).
type result struct {
	Label       string  `json:"label"`
	Round       int     `json:"round,omitempty"` // the benchmark's round (interleaved runs)
	Concurrency int     `json:"concurrency"`
	Requests    int     `json:"requests"` // answered with 200
	Errors      int     `json:"errors"`   // failed or answered otherwise
	Seconds     float64 `json:"seconds"`  // length of the measured phase
	RPS         float64 `json:"rps"`      // Requests / Seconds
	P50Micros   float64 `json:"p50_us"`
	P99Micros   float64 `json:"p99_us"`
	FirstError  string  `json:"first_error,omitempty"`
	// CPU is the CPU time (user + system, µs) each watched process used
	// per answered request during the measured phase.
	CPU map[string]float64 `json:"cpu_us_per_req,omitempty"`
	// Allocs and AllocBytes are the Go heap objects and bytes the server
	// allocated per answered request (its runtime.MemStats, read from its
	// /metrics page before and after the measured phase).
	Allocs     float64 `json:"allocs_per_req,omitempty"`
	AllocBytes float64 `json:"alloc_bytes_per_req,omitempty"`
	// Syscalls are each watched process's system calls per answered
	// request (perf stat -e raw_syscalls:sys_enter).
	Syscalls map[string]float64 `json:"syscalls_per_req,omitempty"`
}

// summarize merges the loops' tallies of a phase that lasted elapsed.
func summarize(tallies []tally, elapsed time.Duration) result {
	var r result
	var all []time.Duration
	for _, t := range tallies {
		all = append(all, t.latencies...)
		r.Errors += t.errors
		if r.FirstError == "" && t.firstErr != nil {
			r.FirstError = t.firstErr.Error()
		}
	}
	slices.Sort(all)
	r.Requests = len(all)
	r.Seconds = elapsed.Seconds()
	if r.Seconds > 0 {
		r.RPS = float64(r.Requests) / r.Seconds
	}
	r.P50Micros = micros(percentile(all, 50))
	r.P99Micros = micros(percentile(all, 99))
	return r
}

// percentile returns the nearest-rank p-th percentile of sorted
// latencies: the smallest value that at least p percent of them do not
// exceed. It returns 0 for none.
func percentile(sorted []time.Duration, p int) time.Duration {
	n := len(sorted)
	if n == 0 {
		return 0
	}
	rank := (p*n + 99) / 100 // ceil(p/100 * n)
	return sorted[min(max(rank, 1), n)-1]
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
