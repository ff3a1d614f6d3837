//go:build switchyard_pprof

// This file is never built where it lies. bench/bench.sh, when asked for
// a profile (BENCH_PPROF), overlays it into cmd/switchyard's package main
// (go build -tags switchyard_pprof -overlay) so that the benchmarked server
// can take a CPU profile without a profiling flag in the product:
// SIGUSR1 starts the profile, SIGUSR2 stops it and writes it to the file
// named by SWITCHYARD_CPUPROFILE.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"syscall"
)

func init() {
	path := os.Getenv("SWITCHYARD_CPUPROFILE")
	if path == "" {
		return
	}
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, syscall.SIGUSR1, syscall.SIGUSR2)
	go profileOnSignals(path, sig)
}

// profileOnSignals runs for the life of the process: a profiling build
// only, where nothing else needs to stop it.
func profileOnSignals(path string, sig <-chan os.Signal) {
	var f *os.File
	for s := range sig {
		switch {
		case s == syscall.SIGUSR1 && f == nil:
			f = startProfile(path)
		case s == syscall.SIGUSR2 && f != nil:
			pprof.StopCPUProfile()
			if err := f.Close(); err != nil {
				fmt.Fprintln(os.Stderr, "cpuprofile:", err)
			}
			f = nil
		}
	}
}

func startProfile(path string) *os.File {
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cpuprofile:", err)
		return nil
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "cpuprofile:", err)
		f.Close()
		return nil
	}
	return f
}
