package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"time"
)

func TestParseLevels(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"1,8,64", []int{1, 8, 64}, false},
		{" 2 , 4 ", []int{2, 4}, false},
		{"16", []int{16}, false},
		{"", nil, true},
		{"0", nil, true},
		{"1,,2", nil, true},
		{"5000", nil, true},
		{"x", nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseLevels(tc.in)
			if (err != nil) != tc.wantErr || !slices.Equal(got, tc.want) {
				t.Errorf("parseLevels(%q) = %v, %v", tc.in, got, err)
			}
			if err != nil && !errors.Is(err, errUsage) {
				t.Errorf("error %v is not a usage error", err)
			}
		})
	}
}

func TestParseHeader(t *testing.T) {
	tests := []struct {
		in      string
		want    header
		wantErr bool
	}{
		{"X-Target-Model: langid", header{"X-Target-Model", "langid"}, false},
		{"A:b:c", header{"A", "b:c"}, false},
		{"Empty:", header{"Empty", ""}, false},
		{"no colon", header{}, true},
		{": value", header{}, true},
		{"Two words: v", header{}, true},
		{"A: b\r\nC: d", header{}, true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := parseHeader(tc.in)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("parseHeader(%q) = %v, %v", tc.in, got, err)
			}
		})
	}
}

func TestParseRun(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		check   func(runFlags) bool
		wantErr bool
	}{
		{"url", []string{"http://127.0.0.1:1/predictions/noop-b8"}, func(f runFlags) bool {
			return f.label == "noop-b8" && f.target.method == "POST" && string(f.target.body) == "{}" &&
				slices.Equal(f.levels, []int{1, 8, 64}) && f.plan.duration == 5*time.Second && f.plan.warmup == time.Second
		}, false},
		{"all flags", []string{"-label", "x", "-c", "2", "-d", "1s", "-warmup", "0s", "-n", "5", "-method", "GET",
			"-body", "", "-H", "A: b", "-cpu", "server=9", "-syscalls", "server=9", "-metrics", "http://127.0.0.1:2/metrics",
			"-round", "3", "-procs", "1", "http://127.0.0.1:1/"}, func(f runFlags) bool {
			return f.label == "x" && slices.Equal(f.levels, []int{2}) && f.plan.requests == 5 && f.target.method == "GET" &&
				len(f.target.body) == 0 && len(f.target.headers) == 1 && f.meters.cpu[0] == (watched{"server", 9}) && f.procs == 1 &&
				f.meters.syscalls[0] == (watched{"server", 9}) && f.meters.metrics == "http://127.0.0.1:2/metrics" && f.round == 3
		}, false},
		{"hello", []string{"-hello"}, func(f runFlags) bool { return f.hello && f.label == "bare" && f.helloEx != "" }, false},
		{"hello and a url", []string{"-hello", "http://127.0.0.1:1/"}, nil, true},
		{"no url", nil, nil, true},
		{"two urls", []string{"http://a:1/", "http://b:1/"}, nil, true},
		{"bad level", []string{"-c", "0", "http://127.0.0.1:1/"}, nil, true},
		{"bad header", []string{"-H", "nope", "http://127.0.0.1:1/"}, nil, true},
		{"bad cpu", []string{"-cpu", "nope", "http://127.0.0.1:1/"}, nil, true},
		{"bad syscalls", []string{"-syscalls", "server=x", "http://127.0.0.1:1/"}, nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f, err := parseRun(tc.args, io.Discard)
			if (err != nil) != tc.wantErr {
				t.Fatalf("parseRun(%q) error %v, want error %v", tc.args, err, tc.wantErr)
			}
			if err == nil && !tc.check(f) {
				t.Errorf("parseRun(%q) = %+v", tc.args, f)
			}
		})
	}
}

func TestLabelOf(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:1/predictions/noop-b1":   "noop-b1",
		"http://h:1/predictions/noop-b1/":  "noop-b1",
		"http://h:1/invocations?model=x/y": "invocations",
	} {
		if got := labelOf(in); got != want {
			t.Errorf("labelOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRunExitCodes(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want int
	}{
		{"no command", nil, 2},
		{"unknown command", []string{"fly"}, 2},
		{"help", []string{"run", "-h"}, 0},
		{"bad flag", []string{"run", "-nope"}, 2},
		{"bad url", []string{"run", "-n", "1", "-warmup", "0s", "ftp://x/"}, 2},
		{"report without its file", []string{"report", "-results", "testdata/missing.jsonl"}, 1},
		{"report with an argument", []string{"report", "extra"}, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if got := run(context.Background(), tc.args, &out, &errOut); got != tc.want {
				t.Errorf("run(%q) = %d, want %d; stderr: %s", tc.args, got, tc.want, errOut.String())
			}
		})
	}
}
