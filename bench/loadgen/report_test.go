package main

import (
	"slices"
	"strings"
	"testing"
)

func TestReadResults(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		n       int
		wantErr bool
	}{
		{"empty", "", 0, false},
		{"blank lines", "\n\n", 0, false},
		{"two", `{"label":"a","concurrency":1}` + "\n" + `{"label":"b","concurrency":8,"cpu_us_per_req":{"server":3}}`, 2, false},
		{"not json", "{", 0, true},
		{"wrong type", `{"concurrency":"x"}`, 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rs, err := readResults(strings.NewReader(tc.in))
			if (err != nil) != tc.wantErr || len(rs) != tc.n {
				t.Errorf("readResults = %d results, %v", len(rs), err)
			}
		})
	}
}

func TestVerdicts(t *testing.T) {
	cell := func(label string, c, round int, rps, p50 float64) result {
		return result{Label: label, Concurrency: c, Round: round, RPS: rps, P50Micros: p50}
	}
	round := func(n int, b8rps, b1p50, b8ap50 float64) []result {
		return []result{cell("bare", 64, n, 1000, 500), cell("noop-b8", 64, n, b8rps, 900),
			cell("bare", 1, n, 100, 80), cell("noop-b1", 1, n, 50, b1p50), cell("noop-b8a", 1, n, 50, b8ap50)}
	}
	labels := reportFlags{bare: "bare", b1: "noop-b1", b8: "noop-b8", b8a: "noop-b8a"}
	withRSS := func(kb int64) reportFlags { f := labels; f.rssKB = kb; return f }
	tests := []struct {
		name string
		f    reportFlags
		rs   []result
		want [4]string // the start of each verdict
	}{
		{"nothing measured", labels, nil, [4]string{"[n/a]", "[n/a]", "[n/a]", "[n/a]"}},
		{"all met", withRSS(16000), round(1, 600, 140, 280), [4]string{"[MET]", "[MET]", "[MET]", "[MET]"}},
		{"all missed", withRSS(40000), round(1, 599, 140.1, 280.3), [4]string{"[MISSED]", "[MISSED]", "[MISSED]", "[MISSED]"}},
		{"the median of three rounds", labels, slices.Concat(round(1, 500, 200, 5000), round(2, 700, 100, 150), round(3, 650, 120, 200)),
			[4]string{"[MET]", "[MET]", "[MET]", "[n/a]"}},
		{"the median of two rounds is their mean", labels, slices.Concat(round(1, 500, 200, 5000), round(2, 690, 100, 150)),
			[4]string{"[MISSED]", "[MISSED]", "[MISSED]", "[n/a]"}},
		{"cells outside the rounds do not count", labels, []result{cell("bare", 64, 0, 1000, 1), cell("noop-b8", 64, 0, 900, 1)},
			[4]string{"[n/a]", "[n/a]", "[n/a]", "[n/a]"}},
		{"a round without its bare cell", labels, []result{cell("noop-b8", 64, 1, 900, 1), cell("bare", 64, 2, 1000, 1)},
			[4]string{"[n/a]", "[n/a]", "[n/a]", "[n/a]"}},
		{"rss just under 30 MB", withRSS(29296), nil, [4]string{"[n/a]", "[n/a]", "[n/a]", "[MET]"}},
		{"rss just over 30 MB", withRSS(29297), nil, [4]string{"[n/a]", "[n/a]", "[n/a]", "[MISSED]"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := verdicts(tc.f, tc.rs)
			for i, v := range got {
				if !strings.HasPrefix(v, tc.want[i]) {
					t.Errorf("verdict %d = %q, want it to start with %s", i, v, tc.want[i])
				}
			}
		})
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{3, 1}, 2}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tc.in); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
