package main

import (
	"runtime"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestFrontendProcs(t *testing.T) {
	tests := []struct {
		def, workers, want int
	}{
		{1, 0, 1},
		{1, 3, 1},
		{2, 0, 2},
		{2, 1, 1},
		{2, 3, 1},
		{3, 1, 2},
		{3, 5, 2},
		{4, 1, 3},
		{4, 2, 2},
		{4, 9, 2},
		{16, 4, 12},
		{16, 40, 8},
		{8, -1, 8},
	}
	for _, tt := range tests {
		if got := frontendProcs(tt.def, tt.workers); got != tt.want {
			t.Errorf("frontendProcs(%d CPUs, %d workers) = %d, want %d", tt.def, tt.workers, got, tt.want)
		}
	}
}

func TestChooseProcs(t *testing.T) {
	tests := []struct {
		name                  string
		env                   string
		setting, def, workers int
		want                  procsChoice
	}{
		{"env wins over the setting", "3", 6, 3, 2, procsChoice{procs: 3, why: "$GOMAXPROCS"}},
		{"env wins over auto", "2", 0, 2, 8, procsChoice{procs: 2, why: "$GOMAXPROCS"}},
		{"setting", "", 6, 2, 2, procsChoice{procs: 6, why: "gomaxprocs", set: true}},
		{"setting equal to the default is still set", "", 2, 2, 0, procsChoice{procs: 2, why: "gomaxprocs", set: true}},
		{"auto lowers it", "", 0, 2, 3, procsChoice{procs: 1, set: true}},
		{"auto keeps the default", "", 0, 8, 0, procsChoice{procs: 8}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := chooseProcs(tt.env, tt.setting, tt.def, tt.workers)
			if tt.want.why == "" {
				got.why = "" // auto's reason is prose; its numbers are checked by TestFrontendProcs
			}
			if got != tt.want {
				t.Errorf("chooseProcs = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestSetGOMAXPROCSEnvWins checks that with $GOMAXPROCS set, the setting
// changes nothing in the running process.
func TestSetGOMAXPROCSEnvWins(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	getenv := func(k string) string {
		if k == "GOMAXPROCS" {
			return "1"
		}
		return ""
	}
	core, logs := observer.New(zap.InfoLevel)
	setGOMAXPROCS(getenv, before+3, 5, zap.New(core))
	if got := runtime.GOMAXPROCS(0); got != before {
		runtime.GOMAXPROCS(before)
		t.Fatalf("GOMAXPROCS %d after start with $GOMAXPROCS set, want %d unchanged", got, before)
	}
	entries := logs.FilterMessage("GOMAXPROCS").All()
	if len(entries) != 1 || entries[0].ContextMap()["from"] != "$GOMAXPROCS" || entries[0].ContextMap()["procs"] != int64(before) {
		t.Errorf("log %+v, want one GOMAXPROCS line from $GOMAXPROCS with procs %d", entries, before)
	}
}
