package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of the CPU times in /proc/<pid>/stat (USER_HZ, 100 on
// every Linux platform Go supports).
const userHZ = 100

// errStat means a /proc/<pid>/stat line could not be read.
var errStat = errors.New("loadgen: malformed /proc stat line")

// watched is a process whose CPU time a cell divides by its requests.
type watched struct {
	name string
	pid  int
}

// parseWatch reads "name=pid".
func parseWatch(s string) (watched, error) {
	name, p, ok := strings.Cut(s, "=")
	pid, err := strconv.Atoi(p)
	if !ok || name == "" || err != nil || pid < 1 {
		return watched{}, fmt.Errorf("%w: %q is not name=pid", errUsage, s)
	}
	return watched{name: name, pid: pid}, nil
}

// cpuTime returns the user plus system CPU time pid has used, all its
// threads together.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	ticks, err := parseStat(b)
	if err != nil {
		return 0, err
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// parseStat returns utime+stime (fields 14 and 15, in ticks) of a
// /proc/<pid>/stat line. The command name in parentheses may hold spaces
// and parentheses, so fields are counted after the last ')'.
func parseStat(b []byte) (int64, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errStat
	}
	f := strings.Fields(string(b[i+1:])) // f[0] is field 3, the state
	if len(f) < 13 {
		return 0, errStat
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil || u < 0 || s < 0 {
		return 0, errStat
	}
	return u + s, nil
}

// cpuMeter reads the CPU times of watched processes at the start and the
// end of a phase.
type cpuMeter struct {
	procs []watched
	start []time.Duration
	ok    []bool
}

func startCPU(procs []watched) *cpuMeter {
	m := &cpuMeter{procs: procs, start: make([]time.Duration, len(procs)), ok: make([]bool, len(procs))}
	for i, p := range procs {
		t, err := cpuTime(p.pid)
		m.start[i], m.ok[i] = t, err == nil
	}
	return m
}

// perRequest returns each process's CPU microseconds per request since
// start; a process that could not be read is left out.
func (m *cpuMeter) perRequest(requests int) map[string]float64 {
	if len(m.procs) == 0 || requests == 0 {
		return nil
	}
	out := make(map[string]float64, len(m.procs))
	for i, p := range m.procs {
		end, err := cpuTime(p.pid)
		if err != nil || !m.ok[i] {
			continue
		}
		out[p.name] = micros(end-m.start[i]) / float64(requests)
	}
	return out
}
