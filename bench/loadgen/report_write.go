package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// writeReport prints the cells, the figures each round takes against the
// bare server, the system calls per request, the reference figures and
// the targets.
func writeReport(w io.Writer, f reportFlags, rs []result) {
	writeCells(w, rs)
	writeRounds(w, f, rs)
	writeSyscalls(w, rs)
	writeReferences(w, f)
	fmt.Fprintln(w, "\nTargets (median over the rounds; each round's figure is taken against the bare server of the same round):")
	for _, v := range verdicts(f, rs) {
		fmt.Fprintln(w, "  "+v)
	}
}

// writeCells prints every measured cell of the rounds.
func writeCells(w io.Writer, rs []result) {
	fmt.Fprintln(w, "| round | target | concurrency | req/s | p50 (µs) | p99 (µs) | errors | CPU µs/req: server | worker | loadgen | server allocs/req | server B/req |")
	fmt.Fprintln(w, "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, r := range rs {
		if len(r.Syscalls) > 0 {
			continue
		}
		fmt.Fprintf(w, "| %s | %s | %d | %.0f | %.1f | %.1f | %d | %s | %s | %s | %s | %s |\n", roundCell(r.Round), r.Label, r.Concurrency,
			r.RPS, r.P50Micros, r.P99Micros, r.Errors, cpuCell(r.CPU, "server"), cpuCell(r.CPU, "worker"), cpuCell(r.CPU, "loadgen"),
			figure(r.Allocs, "%.1f"), figure(r.AllocBytes, "%.0f"))
	}
}

// writeRounds prints the three ratios of each round.
func writeRounds(w io.Writer, f reportFlags, rs []result) {
	rounds := roundsOf(rs)
	if len(rounds) == 0 {
		return
	}
	fmt.Fprintf(w, "\n| round | c=64: %s req/s ÷ %s | c=1: %s p50 − %s p50 (µs) | c=1: %s p50 ÷ %s p50 |\n", f.b8, f.bare, f.b1, f.bare, f.b8a, f.b1)
	fmt.Fprintln(w, "|---:|---:|---:|---:|")
	for _, n := range rounds {
		fmt.Fprintf(w, "| %d | %s | %s | %s |\n", n, optCell(f, rs, n, share, "%.2f"),
			optCell(f, rs, n, overBare, "%+.1f"), optCell(f, rs, n, adaptiveRatio, "%.2f"))
	}
}

// writeSyscalls prints the cells that counted system calls.
func writeSyscalls(w io.Writer, rs []result) {
	var counted []result
	for _, r := range rs {
		if len(r.Syscalls) > 0 {
			counted = append(counted, r)
		}
	}
	if len(counted) == 0 {
		return
	}
	fmt.Fprintln(w, "\n| system calls per request | concurrency | req/s | server | worker |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
	for _, r := range counted {
		fmt.Fprintf(w, "| %s | %d | %.0f | %s | %s |\n", r.Label, r.Concurrency, r.RPS, cpuCell(r.Syscalls, "server"), cpuCell(r.Syscalls, "worker"))
	}
}

func writeReferences(w io.Writer, f reportFlags) {
	fmt.Fprintln(w)
	if f.load != "" {
		fmt.Fprintf(w, "Load average (1, 5, 15 min) during the run: %s\n", f.load)
	}
	if f.bareEcho > 0 {
		fmt.Fprintf(w, "Go-to-Python bare echo round trip (worker BenchmarkRoundTrip/bare-echo): %.1f µs\n", f.bareEcho/1e3)
	}
	if f.runtime > 0 {
		fmt.Fprintf(w, "Go-to-Python runtime no-op round trip (worker BenchmarkRoundTrip/runtime-noop): %.1f µs\n", f.runtime/1e3)
	}
	if f.rssLoadKB > 0 {
		fmt.Fprintf(w, "front-end RSS after the load: %.1f MB\n", float64(f.rssLoadKB)*1024/1e6)
	}
}

// verdicts judges the four targets; a target without its figures is n/a.
func verdicts(f reportFlags, rs []result) []string {
	return []string{
		ratioVerdict(rs, f, share, fmt.Sprintf("c=64, %s: at least %.1f of the bare server's req/s (aim %.1f)", f.b8, minShareOfBare, aimShareOfBare),
			"%.2f", func(v float64) bool { return v >= minShareOfBare }),
		ratioVerdict(rs, f, overBare, fmt.Sprintf("c=1, %s: p50 at most the bare server's + %.0f µs (aim + %.0f µs)", f.b1, maxOverBareUS, aimOverBareUS),
			"%+.1f µs", func(v float64) bool { return v <= maxOverBareUS }),
		ratioVerdict(rs, f, adaptiveRatio, fmt.Sprintf("c=1, %s (adaptive batching): p50 within %.0fx of %s's", f.b8a, maxAdaptiveOfB1, f.b1),
			"%.2fx", func(v float64) bool { return v <= maxAdaptiveOfB1 }),
		rssVerdict(f),
	}
}

// roundFigure is one figure of round n, and whether the round has it.
type roundFigure func(f reportFlags, rs []result, n int) (float64, bool)

func share(f reportFlags, rs []result, n int) (float64, bool) {
	bare, ok1 := find(rs, f.bare, 64, n)
	b8, ok2 := find(rs, f.b8, 64, n)
	if !ok1 || !ok2 || bare.RPS == 0 {
		return 0, false
	}
	return b8.RPS / bare.RPS, true
}

func overBare(f reportFlags, rs []result, n int) (float64, bool) {
	bare, ok1 := find(rs, f.bare, 1, n)
	b1, ok2 := find(rs, f.b1, 1, n)
	if !ok1 || !ok2 {
		return 0, false
	}
	return b1.P50Micros - bare.P50Micros, true
}

func adaptiveRatio(f reportFlags, rs []result, n int) (float64, bool) {
	b1, ok1 := find(rs, f.b1, 1, n)
	b8a, ok2 := find(rs, f.b8a, 1, n)
	if !ok1 || !ok2 || b1.P50Micros == 0 {
		return 0, false
	}
	return b8a.P50Micros / b1.P50Micros, true
}

// ratioVerdict judges the median of fig over the rounds with ok, and lists
// every round's figure.
func ratioVerdict(rs []result, f reportFlags, fig roundFigure, name, format string, ok func(float64) bool) string {
	var vals []string
	var all []float64
	for _, n := range roundsOf(rs) {
		if v, has := fig(f, rs, n); has {
			all = append(all, v)
			vals = append(vals, fmt.Sprintf(format, v))
		}
	}
	if len(all) == 0 {
		return "[n/a]    " + name
	}
	m := median(all)
	return fmt.Sprintf("%s %s: %s (rounds: %s)", mark(ok(m)), name, fmt.Sprintf(format, m), strings.Join(vals, ", "))
}

func rssVerdict(f reportFlags) string {
	const name = "front-end RSS idle with three models under 30 MB"
	if f.rssKB <= 0 {
		return "[n/a]    " + name
	}
	mb := float64(f.rssKB) * 1024 / 1e6
	return fmt.Sprintf("%s %s: %.1f MB (%.1f MiB)", mark(mb < maxIdleRSSMB), name, mb, float64(f.rssKB)/1024)
}

// roundsOf returns the rounds the results hold, in order; round 0 (a cell
// outside the rounds) is not one.
func roundsOf(rs []result) []int {
	var out []int
	for _, r := range rs {
		if r.Round > 0 && !slices.Contains(out, r.Round) {
			out = append(out, r.Round)
		}
	}
	slices.Sort(out)
	return out
}

// median returns the median of xs, which is not empty.
func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// cpuCell prints one process's figure, or "-".
func cpuCell(m map[string]float64, name string) string {
	v, ok := m[name]
	if !ok {
		return "-"
	}
	return fmt.Sprintf("%.1f", v)
}

// figure prints v, or "-" for a figure not measured.
func figure(v float64, format string) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

// optCell prints round n's figure, or "-" when the round lacks it.
func optCell(f reportFlags, rs []result, n int, fig roundFigure, format string) string {
	v, ok := fig(f, rs, n)
	if !ok {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func roundCell(n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

func mark(ok bool) string {
	if ok {
		return "[MET]   "
	}
	return "[MISSED]"
}

// find returns the result of label at concurrency c in round n (cells that
// counted system calls aside).
func find(rs []result, label string, c, n int) (result, bool) {
	for _, r := range rs {
		if r.Label == label && r.Concurrency == c && r.Round == n && len(r.Syscalls) == 0 {
			return r, true
		}
	}
	return result{}, false
}
