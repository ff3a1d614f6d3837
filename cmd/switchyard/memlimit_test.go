package main

import (
	"errors"
	"io/fs"
	"os"
	"runtime/debug"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

// fakeFiles reads from a map; a missing name is fs.ErrNotExist.
func fakeFiles(files map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		if s, ok := files[name]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
}

func TestMemoryCeiling(t *testing.T) {
	const host = 24 << 30
	tests := []struct {
		name  string
		files map[string]string
		want  int64
		from  string
	}{
		{"v2 container", map[string]string{
			"/proc/self/cgroup":            "0::/\n",
			"/sys/fs/cgroup/memory.max":    "2147483648\n",
			"/sys/fs/cgroup/cpu.max":       "max 100000\n",
			"/sys/fs/cgroup/unrelated.max": "1\n",
		}, 2 << 30, "/sys/fs/cgroup/memory.max"},
		{"v2 lowest ancestor wins", map[string]string{
			"/proc/self/cgroup": "0::/system.slice/app.service\n",
			"/sys/fs/cgroup/system.slice/app.service/memory.max": "max\n",
			"/sys/fs/cgroup/system.slice/memory.max":             "1073741824\n",
			"/sys/fs/cgroup/memory.max":                          "4294967296\n",
		}, 1 << 30, "/sys/fs/cgroup/system.slice/memory.max"},
		{"v2 no limit", map[string]string{
			"/proc/self/cgroup":         "0::/\n",
			"/sys/fs/cgroup/memory.max": "max\n",
		}, host, "/proc/meminfo"},
		{"v1 hybrid, host path not mounted", map[string]string{
			"/proc/self/cgroup":                           "9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "536870912\n",
		}, 512 << 20, "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
		{"v1 unlimited", map[string]string{
			"/proc/self/cgroup":                           "4:cpu,memory:/\n",
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
		}, host, "/proc/meminfo"},
		{"no cgroup file", map[string]string{}, host, "/proc/meminfo"},
		{"garbage", map[string]string{
			"/proc/self/cgroup":         "nonsense\n0::relative\n",
			"/sys/fs/cgroup/memory.max": "-5\n",
		}, host, "/proc/meminfo"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, from, err := memoryCeiling(fakeFiles(tt.files), func() (int64, error) { return host, nil })
			if err != nil || got != tt.want || from != tt.from {
				t.Errorf("memoryCeiling = %d, %q, %v; want %d, %q", got, from, err, tt.want, tt.from)
			}
		})
	}
}

func TestMemoryCeilingUnknown(t *testing.T) {
	boom := errors.New("no meminfo")
	_, _, err := memoryCeiling(fakeFiles(nil), func() (int64, error) { return 0, boom })
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
}

func TestSetMemoryLimitKeepsGOMEMLIMIT(t *testing.T) {
	core, logs := observer.New(zap.InfoLevel)
	setMemoryLimit(func(k string) string {
		if k == "GOMEMLIMIT" {
			return "1GiB"
		}
		return ""
	}, zap.New(core))
	if logs.FilterMessage("soft memory limit from GOMEMLIMIT").Len() != 1 {
		t.Errorf("logs %v, want the GOMEMLIMIT line", logs.All())
	}
}

func TestSetMemoryLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(old) })
	core, logs := observer.New(zap.InfoLevel)
	setMemoryLimit(func(string) string { return "" }, zap.New(core))
	ceiling, _, err := memoryCeiling(os.ReadFile, hostTotal)
	if err != nil {
		t.Skipf("this machine's memory is unknown: %v", err)
	}
	if got := debug.SetMemoryLimit(-1); got != ceiling/memoryShare {
		t.Errorf("limit %d, want %d (a quarter of %d)", got, ceiling/memoryShare, ceiling)
	}
	if logs.FilterMessage("soft memory limit set").Len() != 1 {
		t.Errorf("logs %v, want the limit logged", logs.All())
	}
}
