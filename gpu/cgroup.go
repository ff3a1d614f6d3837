package gpu

import (
	"bufio"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// cgroupLimit is the memory limit of the process's cgroup and what the
// cgroup can still take, in MiB.
type cgroupLimit struct {
	limitMiB, availableMiB uint64
}

// noCgroupLimit is a limit above any real one: cgroup v1 writes a number
// close to 2^63 when there is no limit.
const noCgroupLimit = 1 << 62

// readCgroupLimit returns the memory limit of the cgroup the process is in,
// from cgroup v2 (memory.max, memory.current) or v1 (memory.limit_in_bytes,
// memory.usage_in_bytes) below root (normally /sys/fs/cgroup), with the
// process's cgroup read from selfCgroup (normally /proc/self/cgroup).
// Inactive file pages (memory.stat) count as available, since the kernel
// reclaims them before it kills. ok is false when there is no limit or it
// cannot be read.
func readCgroupLimit(root, selfCgroup string) (cgroupLimit, bool) {
	v2, v1 := cgroupPaths(selfCgroup)
	for _, dir := range []string{filepath.Join(root, v2), root} {
		if l, ok := cgroupLimitIn(dir, "memory.max", "memory.current", "inactive_file"); ok {
			return l, true
		}
	}
	for _, dir := range []string{filepath.Join(root, "memory", v1), filepath.Join(root, "memory")} {
		if l, ok := cgroupLimitIn(dir, "memory.limit_in_bytes", "memory.usage_in_bytes", "total_inactive_file"); ok {
			return l, true
		}
	}
	return cgroupLimit{}, false
}

// cgroupPaths returns the process's cgroup v2 path and its v1 memory
// controller path from a /proc/self/cgroup file; "" when absent.
func cgroupPaths(selfCgroup string) (v2, v1 string) {
	f, err := os.Open(selfCgroup)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			v2 = parts[2]
		case slices.Contains(strings.Split(parts[1], ","), "memory"):
			v1 = parts[2]
		}
	}
	return v2, v1
}

// cgroupLimitIn reads a limit from one cgroup folder.
func cgroupLimitIn(dir, maxFile, usageFile, inactiveKey string) (cgroupLimit, bool) {
	limit, ok := readBytes(filepath.Join(dir, maxFile))
	if !ok || limit >= noCgroupLimit {
		return cgroupLimit{}, false
	}
	usage, ok := readBytes(filepath.Join(dir, usageFile))
	if !ok {
		return cgroupLimit{}, false
	}
	usage -= min(usage, statValue(filepath.Join(dir, "memory.stat"), inactiveKey))
	return cgroupLimit{limitMiB: toMiB(limit), availableMiB: toMiB(limit - min(limit, usage))}, true
}

// readBytes reads a file holding one number of bytes; "max" (cgroup v2's
// "no limit") and anything unreadable give ok false.
func readBytes(path string) (uint64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n, err == nil
}

// statValue returns one key of a memory.stat file; 0 when absent.
func statValue(path, key string) uint64 {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), " "); ok && k == key {
			n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
