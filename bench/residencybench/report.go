package main

import (
	"fmt"
	"io"
	"slices"
	"time"
)

// results is what the whole measurement found.
type results struct {
	cold coldResult
	rr   []rrResult
}

// print writes the results as Markdown tables.
func (r results) print(w io.Writer, cfg config) {
	fmt.Fprintf(w, "Cold start of %s (first request to answer, max_loaded_models=1: the request evicts the filler, starts a worker and loads), against warm requests:\n\n", cfg.model)
	fmt.Fprintln(w, "| requests | n | p50 (ms) | p90 (ms) | max (ms) |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, row := range []struct {
		name string
		d    []time.Duration
	}{{"cold", r.cold.cold}, {"warm", r.cold.warm}} {
		fmt.Fprintf(w, "| %s | %d | %.1f | %.1f | %.1f |\n", row.name, len(row.d),
			ms(percentile(row.d, 50)), ms(percentile(row.d, 90)), ms(percentile(row.d, 100)))
	}
	if warm := percentile(r.cold.warm, 50); warm > 0 {
		fmt.Fprintf(w, "\nCold p50 is %.0f times warm p50.\n", float64(percentile(r.cold.cold, 50))/float64(warm))
	}
	fmt.Fprintf(w, "\nRound robin over copies of %s, %d clients, %v per run:\n\n", cfg.model, cfg.clients, cfg.duration)
	fmt.Fprintln(w, "| run | requests | errors | req/s | p50 (ms) | p99 (ms) | loads | evictions |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|")
	for _, rr := range r.rr {
		fmt.Fprintf(w, "| %s | %d | %d | %.1f | %.1f | %.1f | %.0f | %.0f |\n", rr.name, rr.requests, rr.errors,
			float64(rr.requests-rr.errors)/rr.took.Seconds(), ms(percentile(rr.latencies, 50)), ms(percentile(rr.latencies, 99)),
			rr.loads, rr.evictions)
	}
}

// percentile returns the p-th percentile of d (nearest rank); 0 when d is
// empty.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(i, 0), len(s)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
