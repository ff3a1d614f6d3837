package main

import (
	"os"
	"testing"
)

func TestParseStat(t *testing.T) {
	tests := []struct {
		name    string
		line    string
		want    int64
		wantErr bool
	}{
		{"plain", "42 (switchyard) S 1 42 42 0 -1 4194560 100 0 0 0 150 25 0 0 20 0 9 0 100 1000 200", 175, false},
		{"name with spaces and parens", "7 (a b) (c)) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 1 1", 7, false},
		{"too short", "1 (x) S 1 2 3", 0, true},
		{"no name", "1 x S 1 2 3 4 5 6 7 8 9 10 11 12 13 14", 0, true},
		{"not a number", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 a 4 0", 0, true},
		{"negative", "1 (x) S 1 1 1 0 -1 0 0 0 0 0 -3 4 0", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat([]byte(tc.line))
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseStat = %d, %v; want %d, error %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}

func TestParseWatch(t *testing.T) {
	tests := []struct {
		in      string
		want    watched
		wantErr bool
	}{
		{"server=42", watched{"server", 42}, false},
		{"server", watched{}, true},
		{"=42", watched{}, true},
		{"server=0", watched{}, true},
		{"server=x", watched{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseWatch(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseWatch(%q) = %v, %v", tc.in, got, err)
			}
		})
	}
}

// TestCPUMeter reads this process's own CPU time around some work.
func TestCPUMeter(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	m := startCPU([]watched{{"self", os.Getpid()}, {"gone", 1 << 30}})
	sum := 0
	for i := range 20_000_000 {
		sum += i % 7
	}
	got := m.perRequest(10)
	if _, ok := got["self"]; !ok || got["self"] < 0 || sum == 0 {
		t.Errorf("perRequest = %v, want a figure for self", got)
	}
	if _, ok := got["gone"]; ok {
		t.Errorf("perRequest reported a process that does not exist: %v", got)
	}
	if m.perRequest(0) != nil {
		t.Error("perRequest(0) should report nothing")
	}
}
