package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"64MiB", 64 << 20, true}, {"512KiB", 512 << 10, true}, {"1000", 1000, true},
		{"0", 0, false}, {"-1MiB", 0, false}, {"1GB", 0, false}, {"MiB", 0, false},
	}
	for _, tt := range tests {
		got, err := parseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestParseArgs(t *testing.T) {
	var stderr bytes.Buffer
	cfg, err := parseArgs([]string{"-size", "1MiB", "-requests", "3", "-watch", "2s"}, &stderr)
	if err != nil || cfg.size != 1<<20 || cfg.requests != 3 || cfg.watch != 2*time.Second {
		t.Errorf("parseArgs = %+v, %v", cfg, err)
	}
	cfg, err = parseArgs([]string{"-conns", "4000", "-partial", "-max-connections", "1000"}, &stderr)
	if err != nil || cfg.conns != 4000 || !cfg.partial || cfg.maxConns != 1000 {
		t.Errorf("parseArgs = %+v, %v", cfg, err)
	}
	for _, bad := range [][]string{{"-requests", "0"}, {"-watch", "1ms"}, {"extra"}, {"-size", "x"}, {"-conns", "-1"}, {"-max-connections", "-2"}} {
		if _, err := parseArgs(bad, &stderr); err == nil {
			t.Errorf("parseArgs(%q) accepted", bad)
		}
	}
}

func TestStatusField(t *testing.T) {
	status := []byte("Name:\tswitchyard\nVmHWM:\t  218000 kB\nVmRSS:\t   17400 kB\nThreads:\t9\n")
	if n, err := statusField(status, "VmRSS"); err != nil || n != 17400<<10 {
		t.Errorf("VmRSS = %d, %v", n, err)
	}
	if _, err := statusField(status, "VmSwap"); err == nil {
		t.Error("a missing field was found")
	}
	if _, err := statusField([]byte("VmRSS: 12 MB\n"), "VmRSS"); err == nil {
		t.Error("a field in another unit was accepted")
	}
}

func TestReport(t *testing.T) {
	mb := func(n float64) int64 { return int64(n * 1e6) }
	r := &result{idle: mb(16), peak: mb(218), samples: []sample{
		{0, mb(218)}, {500 * time.Millisecond, mb(218)}, {time.Second, mb(17.4)},
		{2 * time.Second, mb(17.4)},
	}}
	var out bytes.Buffer
	r.print(&out, config{size: 64 << 20, requests: 1, watch: 2 * time.Second, targetMB: 40})
	for _, want := range []string{
		"| idle, before | 16.0 |", "| peak (VmHWM) | 218.0 |", "| 0s after the answer | 218.0 |",
		"| 1s after the answer | 17.4 |", "below 40 MB from 1.00 s", "within 2s of the answer: MET",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	r.samples = append(r.samples, sample{3 * time.Second, mb(41)})
	out.Reset()
	r.print(&out, config{watch: 3 * time.Second, targetMB: 40})
	if !strings.Contains(out.String(), ": MISSED") {
		t.Errorf("a last sample over the target is not MISSED:\n%s", out.String())
	}
}

func TestConnReport(t *testing.T) {
	mb := func(n float64) int64 { return int64(n * 1e6) }
	r := &connResult{idle: mb(24), open: mb(41.4), closed: mb(48.7), peak: mb(48.7), opened: 1000, refused: 14000,
		openTook: 2 * time.Second, refusalTook: 1490 * time.Microsecond}
	var out bytes.Buffer
	r.print(&out, config{conns: 15000, maxConns: 1000, partial: true})
	for _, want := range []string{
		"15000 connections that send half a request, max_connections=1000",
		"| connections open (2 s after the last) | 41.4 |",
		"held open: 1000, refused with a 503: 14000",
		"503 and closed in 1.49ms",
		"+17.4 MB over idle",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}
