package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path"
	"runtime/debug"
	"strconv"
	"strings"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/gpu"
)

// memoryShare is the part of the memory the process may use (its cgroup's
// limit, else the host's) that the front-end takes as its soft memory
// limit: the rest is for the Python workers, which share the container.
const memoryShare = 4

// unlimited is the smallest cgroup v1 figure that means "no limit" (the
// kernel writes a page-rounded 2^63-1).
const unlimited = 1 << 62

// setMemoryLimit gives the Go runtime a soft memory limit of a quarter of
// the memory the process may use, unless GOMEMLIMIT (which the runtime
// reads itself) is set. Near the limit the runtime collects more often and
// returns freed memory to the system at once.
func setMemoryLimit(getenv func(string) string, log *zap.Logger) {
	if v := getenv("GOMEMLIMIT"); v != "" {
		log.Info("soft memory limit from GOMEMLIMIT", zap.String("GOMEMLIMIT", v))
		return
	}
	ceiling, from, err := memoryCeiling(os.ReadFile, hostTotal)
	if err != nil {
		log.Warn("no soft memory limit: the memory available is unknown", zap.Error(err))
		return
	}
	limit := ceiling / memoryShare
	debug.SetMemoryLimit(limit)
	log.Info("soft memory limit set", zap.Int64("bytes", limit), zap.String("from", from), zap.Int64("ceiling", ceiling))
}

// hostTotal returns the host's MemTotal in bytes.
func hostTotal() (int64, error) {
	total, _, err := gpu.HostMemory()
	return int64(total) << 20, err
}

// memoryCeiling returns the memory this process may use and where that
// figure comes from: the lowest memory limit of its cgroups (v2
// memory.max, v1 memory.limit_in_bytes, on its cgroup and the ones
// above), else the host's total memory.
func memoryCeiling(read func(string) ([]byte, error), host func() (int64, error)) (int64, string, error) {
	cg, err := read("/proc/self/cgroup")
	if err == nil {
		if limit, file, ok := cgroupLimit(read, cg); ok {
			return limit, file, nil
		}
	}
	total, err := host()
	if err != nil {
		return 0, "", err
	}
	if total <= 0 {
		return 0, "", errors.New("the host reports no memory")
	}
	return total, "/proc/meminfo", nil
}

// cgroupLimit finds the lowest memory limit along the cgroup paths that
// /proc/self/cgroup lists, and the file it was read from.
func cgroupLimit(read func(string) ([]byte, error), cgroups []byte) (int64, string, bool) {
	best, bestFile := int64(0), ""
	sc := bufio.NewScanner(bytes.NewReader(cgroups))
	for sc.Scan() {
		for _, file := range limitFiles(sc.Text()) {
			if n, ok := readLimit(read, file); ok && (best == 0 || n < best) {
				best, bestFile = n, file
			}
		}
	}
	return best, bestFile, best > 0
}

// limitFiles returns the files that may hold a memory limit for one line
// of /proc/self/cgroup ("0::/path" for v2, "4:memory:/path" for v1): the
// one of the cgroup itself and those of every cgroup above it.
func limitFiles(line string) []string {
	parts := strings.SplitN(line, ":", 3)
	if len(parts) != 3 || !strings.HasPrefix(parts[2], "/") {
		return nil
	}
	var dir, name string
	switch {
	case parts[0] == "0" && parts[1] == "":
		dir, name = "/sys/fs/cgroup", "memory.max"
	case hasController(parts[1], "memory"):
		dir, name = "/sys/fs/cgroup/memory", "memory.limit_in_bytes"
	default:
		return nil
	}
	var files []string
	for p := path.Clean(parts[2]); ; p = path.Dir(p) {
		files = append(files, path.Join(dir, p, name))
		if p == "/" {
			return files
		}
	}
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// readLimit reads a limit file; "max", a figure meaning no limit, a
// missing file and anything unreadable count as no limit.
func readLimit(read func(string) ([]byte, error), file string) (int64, bool) {
	b, err := read(file)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n <= 0 || n >= unlimited {
		return 0, false
	}
	return n, true
}
