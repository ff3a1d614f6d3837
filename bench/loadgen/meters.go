package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// errMetrics means a server's /metrics page lacked the allocation counters.
var errMetrics = errors.New("loadgen: no allocation counters in the metrics")

// allocCounters are the Go runtime's cumulative allocation counters
// (runtime.MemStats.Mallocs and TotalAlloc) as client_golang's Go collector
// exports them.
type allocCounters struct {
	objects, bytes float64
}

// Names of the two counters on a Prometheus page.
const (
	mallocsMetric    = "go_memstats_mallocs_total"
	allocBytesMetric = "go_memstats_alloc_bytes_total"
)

// readAllocs fetches url (a /metrics page) and returns its allocation
// counters.
func readAllocs(url string) (allocCounters, error) {
	status, body, err := fasthttp.GetTimeout(nil, url, 10*time.Second)
	if err != nil {
		return allocCounters{}, err
	}
	if status != fasthttp.StatusOK {
		return allocCounters{}, fmt.Errorf("%w: %s answered %d", errMetrics, url, status)
	}
	return parseAllocs(body)
}

// parseAllocs reads the two counters from a Prometheus text page.
func parseAllocs(page []byte) (allocCounters, error) {
	var c allocCounters
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(page))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		var dst *float64
		switch {
		case !ok:
			continue
		case name == mallocsMetric:
			dst = &c.objects
		case name == allocBytesMetric:
			dst = &c.bytes
		default:
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if err != nil {
			return c, fmt.Errorf("%w: %s %q", errMetrics, name, value)
		}
		*dst = v
		found++
	}
	if found != 2 {
		return c, errMetrics
	}
	return c, sc.Err()
}

// allocMeter reads a server's allocation counters at the start and the
// end of a phase; a zero url measures nothing.
type allocMeter struct {
	url   string
	start allocCounters
	err   error
}

func startAllocs(url string) *allocMeter {
	m := &allocMeter{url: url}
	if url != "" {
		m.start, m.err = readAllocs(url)
	}
	return m
}

// perRequest returns the objects and bytes the server allocated per
// request since start, or an error when the counters could not be read.
// The scrape itself (a few hundred objects) is counted too; over tens of
// thousands of requests it is lost in the rounding.
func (m *allocMeter) perRequest(requests int) (objects, bytes float64, err error) {
	if m.url == "" || requests == 0 {
		return 0, 0, nil
	}
	if m.err != nil {
		return 0, 0, m.err
	}
	end, err := readAllocs(m.url)
	if err != nil {
		return 0, 0, err
	}
	n := float64(requests)
	return (end.objects - m.start.objects) / n, (end.bytes - m.start.bytes) / n, nil
}

// syscallMeter counts the system calls of watched processes during a
// phase with perf(1) (perf stat -e raw_syscalls:sys_enter, one perf per
// process), so that it needs no change to the processes measured.
type syscallMeter struct {
	procs []watched
	perfs []*exec.Cmd
	outs  []string
}

// startSyscalls attaches one perf per process; it fails when perf cannot
// be started (not installed, or not allowed to trace).
func startSyscalls(procs []watched, dir string) (*syscallMeter, error) {
	m := &syscallMeter{procs: procs}
	for _, p := range procs {
		out := fmt.Sprintf("%s/perf-%s-%d.csv", dir, p.name, p.pid)
		cmd := exec.Command("perf", "stat", "-x", ",", "-e", "raw_syscalls:sys_enter", "-p", strconv.Itoa(p.pid), "-o", out)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			m.stop()
			return nil, fmt.Errorf("loadgen: perf for %s: %w", p.name, err)
		}
		m.perfs, m.outs = append(m.perfs, cmd), append(m.outs, out)
	}
	time.Sleep(200 * time.Millisecond) // perf attaches after it starts; what it misses is the warm-up's end
	return m, nil
}

// stop ends every perf and waits for it; perf writes its counts on SIGINT.
func (m *syscallMeter) stop() {
	for _, c := range m.perfs {
		_ = c.Process.Signal(syscall.SIGINT)
	}
	for _, c := range m.perfs {
		_ = c.Wait()
	}
}

// perRequest stops the meter and returns each process's system calls per
// request.
func (m *syscallMeter) perRequest(requests int) (map[string]float64, error) {
	m.stop()
	if requests == 0 {
		return nil, nil
	}
	out := make(map[string]float64, len(m.procs))
	for i, p := range m.procs {
		f, err := os.Open(m.outs[i])
		if err != nil {
			return nil, err
		}
		n, err := perfCount(f)
		f.Close()
		os.Remove(m.outs[i])
		if err != nil {
			return nil, fmt.Errorf("loadgen: perf for %s: %w", p.name, err)
		}
		out[p.name] = n / float64(requests)
	}
	return out, nil
}

// errPerf means perf's output held no count.
var errPerf = errors.New("no raw_syscalls:sys_enter count in perf's output")

// perfCount reads the count from perf stat's CSV output (-x ,): the line
// "<count>,<unit>,raw_syscalls:sys_enter,...".
func perfCount(r io.Reader) (float64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Split(sc.Text(), ",")
		if len(f) >= 3 && f[2] == "raw_syscalls:sys_enter" {
			n, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				return 0, fmt.Errorf("%w: %q", errPerf, sc.Text())
			}
			return n, nil
		}
	}
	return 0, errPerf
}
