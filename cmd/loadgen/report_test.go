package main

import (
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
	bare64 := result{Label: "bare", Concurrency: 64, RPS: 1000}
	b8 := func(rps float64) result { return result{Label: "noop-b8", Concurrency: 64, RPS: rps} }
	b1 := func(p50 float64) result { return result{Label: "noop-b1", Concurrency: 1, P50Micros: p50} }
	labels := reportFlags{bare: "bare", b1: "noop-b1", b8: "noop-b8"}
	with := func(echo float64, rss int64) reportFlags { f := labels; f.bareEcho, f.rssKB = echo, rss; return f }
	tests := []struct {
		name string
		f    reportFlags
		rs   []result
		want [3]string // the start of each verdict
	}{
		{"nothing measured", labels, nil, [3]string{"[n/a]", "[n/a]", "[n/a]"}},
		{"all met", with(20000, 16000), []result{bare64, b8(500), b1(120)}, [3]string{"[MET]", "[MET]", "[MET]"}},
		{"all missed", with(20000, 40000), []result{bare64, b8(499), b1(120.1)}, [3]string{"[MISSED]", "[MISSED]", "[MISSED]"}},
		{"wrong concurrency", with(20000, 1), []result{{Label: "bare", Concurrency: 8, RPS: 1}, b8(1), {Label: "noop-b1", Concurrency: 8}}, [3]string{"[n/a]", "[n/a]", "[MET]"}},
		{"rss just under 30 MB", with(0, 29296), nil, [3]string{"[n/a]", "[n/a]", "[MET]"}},
		{"rss just over 30 MB", with(0, 29297), nil, [3]string{"[n/a]", "[n/a]", "[MISSED]"}},
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
