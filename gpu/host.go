package gpu

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// meminfoPath is where Linux reports the host's memory.
const meminfoPath = "/proc/meminfo"

// HostMemory returns the host's total and available memory in MiB, from the
// MemTotal and MemAvailable lines of /proc/meminfo. These are the figures of
// the whole machine: a container's cgroup memory limit is not taken into
// account.
func HostMemory() (totalMiB, availableMiB uint64, err error) {
	return hostMemoryFrom(meminfoPath)
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
