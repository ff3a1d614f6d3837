package gpu

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// Where Linux reports the host's memory, the process's cgroup and the
// cgroup file systems.
const (
	meminfoPath = "/proc/meminfo"
	selfCgroup  = "/proc/self/cgroup"
	cgroupRoot  = "/sys/fs/cgroup"
)

// HostMemory returns the memory this process can count on, in MiB: the
// MemTotal and MemAvailable lines of /proc/meminfo, lowered to the memory
// limit of the process's cgroup (a container's limit, cgroup v2 memory.max
// or v1 memory.limit_in_bytes) and what that cgroup can still take, when
// those are lower.
func HostMemory() (totalMiB, availableMiB uint64, err error) {
	return hostMemoryAt(meminfoPath, cgroupRoot, selfCgroup)
}

// hostMemoryAt is HostMemory with its files named.
func hostMemoryAt(meminfo, root, self string) (totalMiB, availableMiB uint64, err error) {
	totalMiB, availableMiB, err = hostMemoryFrom(meminfo)
	if err != nil {
		return 0, 0, err
	}
	if l, ok := readCgroupLimit(root, self); ok {
		totalMiB, availableMiB = min(totalMiB, l.limitMiB), min(availableMiB, l.availableMiB)
	}
	return totalMiB, availableMiB, nil
}

// PIDExists reports whether a process with that PID is visible in this
// process's PID namespace (/proc/<pid> exists). NVML reports PIDs of the
// host's namespace, which a container without it does not see.
func PIDExists(pid int) bool {
	_, err := os.Stat("/proc/" + strconv.Itoa(pid))
	return err == nil
}

func hostMemoryFrom(path string) (totalMiB, availableMiB uint64, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrMeminfo, err)
	}
	defer f.Close()
	return ParseMeminfo(f)
}

// ParseMeminfo reads text in the format of /proc/meminfo and returns its
// MemTotal and MemAvailable figures converted from kB (KiB) to MiB, rounded
// down. Both lines must be present, with a decimal number and the unit kB;
// other lines are ignored. Errors wrap ErrMeminfo.
func ParseMeminfo(r io.Reader) (totalMiB, availableMiB uint64, err error) {
	found := map[string]uint64{}
	sc := bufio.NewScanner(r)
	for len(found) < 2 && sc.Scan() {
		key, kib, ok, err := meminfoLine(sc.Text())
		if err != nil {
			return 0, 0, err
		}
		if ok {
			found[key] = kib >> 10
		}
	}
	if err := sc.Err(); err != nil {
		return 0, 0, fmt.Errorf("%w: %w", ErrMeminfo, err)
	}
	return meminfoResult(found)
}

// meminfoLine parses one line. ok is false for lines other than MemTotal and
// MemAvailable, which are not checked.
func meminfoLine(line string) (key string, kib uint64, ok bool, err error) {
	key, rest, _ := strings.Cut(line, ":")
	if key != "MemTotal" && key != "MemAvailable" {
		return "", 0, false, nil
	}
	fields := strings.Fields(rest)
	if len(fields) != 2 || fields[1] != "kB" {
		return "", 0, false, fmt.Errorf("%w: %s: want \"<number> kB\", got %q", ErrMeminfo, key, strings.TrimSpace(rest))
	}
	kib, err = strconv.ParseUint(fields[0], 10, 64)
	if err != nil {
		return "", 0, false, fmt.Errorf("%w: %s: %w", ErrMeminfo, key, err)
	}
	return key, kib, true, nil
}

func meminfoResult(found map[string]uint64) (totalMiB, availableMiB uint64, err error) {
	for _, key := range []string{"MemTotal", "MemAvailable"} {
		if _, ok := found[key]; !ok {
			return 0, 0, fmt.Errorf("%w: no %s line", ErrMeminfo, key)
		}
	}
	return found["MemTotal"], found["MemAvailable"], nil
}
