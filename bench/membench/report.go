package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// readStatus returns a "<key>: <n> kB" field of /proc/<pid>/status in bytes.
func readStatus(pid int, key string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	return statusField(b, key)
}

// statusField finds key in the text of a /proc status file.
func statusField(status []byte, key string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(status))
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != key {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("%s: unexpected value %q", key, rest)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", key, err)
		}
		return n << 10, nil
	}
	return 0, fmt.Errorf("no %s in the status file", key)
}

// mb is bytes in MB (10^6 bytes), as the targets are written.
func mb(n int64) float64 { return float64(n) / 1e6 }

// marks are the times after the last answer the report shows.
var marks = []time.Duration{0, time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 20 * time.Second, 30 * time.Second}

// at returns the last sample taken at or before d; the first sample,
// taken right after the answer, stands for 0.
func (r *result) at(d time.Duration) (sample, bool) {
	if len(r.samples) == 0 {
		return sample{}, false
	}
	s := r.samples[0]
	for _, x := range r.samples[1:] {
		if x.at > d {
			break
		}
		s = x
	}
	return s, true
}

// below returns when the RSS was first under limit bytes and stayed there
// for the rest of the watch.
func (r *result) below(limit int64) (time.Duration, bool) {
	at, ok := time.Duration(0), false
	for _, s := range r.samples {
		switch {
		case s.rss >= limit:
			ok = false
		case !ok:
			at, ok = s.at, true
		}
	}
	return at, ok
}

// print writes the report: the readings, then the target's verdict.
func (r *result) print(w io.Writer, cfg config) {
	fmt.Fprintf(w, "front-end RSS, %d request(s) of %d bytes to the echo model\n\n", cfg.requests, cfg.size)
	fmt.Fprintf(w, "| when | RSS (MB) |\n|---|---:|\n")
	fmt.Fprintf(w, "| idle, before | %.1f |\n", mb(r.idle))
	fmt.Fprintf(w, "| peak (VmHWM) | %.1f |\n", mb(r.peak))
	for _, m := range marks {
		if s, ok := r.at(m); ok && m <= cfg.watch {
			fmt.Fprintf(w, "| %v after the answer | %.1f |\n", m, mb(s.rss))
		}
	}
	limit := int64(cfg.targetMB * 1e6)
	verdict := "MISSED"
	if at, ok := r.below(limit); ok {
		verdict = "MET"
		fmt.Fprintf(w, "\nbelow %.0f MB from %.2f s after the answer on\n", cfg.targetMB, at.Seconds())
	}
	fmt.Fprintf(w, "target: RSS under %.0f MB within %v of the answer: %s\n", cfg.targetMB, cfg.watch, verdict)
}
