package gpu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const sampleMeminfo = `MemTotal:       24683520 kB
MemFree:         1331200 kB
MemAvailable:   23715840 kB
Buffers:          112640 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
`

func TestParseMeminfo(t *testing.T) {
	tests := []struct {
		name             string
		in               string
		total, available uint64
		wantErr          string
	}{
		{name: "proc format", in: sampleMeminfo, total: 24105, available: 23160},
		{name: "rounds down", in: "MemTotal: 2047 kB\nMemAvailable: 1023 kB\n", total: 1, available: 0},
		{name: "order and spacing do not matter", in: "MemAvailable:\t2048 kB\nFoo: bar\nMemTotal:4096   kB", total: 4, available: 2},
		{name: "missing MemAvailable", in: "MemTotal: 4096 kB\n", wantErr: "no MemAvailable line"},
		{name: "missing MemTotal", in: "MemAvailable: 4096 kB\n", wantErr: "no MemTotal line"},
		{name: "empty", in: "", wantErr: "no MemTotal line"},
		{name: "no unit", in: "MemTotal: 4096\nMemAvailable: 1 kB\n", wantErr: `MemTotal: want "<number> kB", got "4096"`},
		{name: "not a number", in: "MemTotal: lots kB\nMemAvailable: 1 kB\n", wantErr: `MemTotal: strconv.ParseUint: parsing "lots"`},
		{name: "negative", in: "MemTotal: 10 kB\nMemAvailable: -1 kB\n", wantErr: "MemAvailable: strconv.ParseUint"},
		{name: "too large", in: "MemTotal: 99999999999999999999 kB\nMemAvailable: 1 kB\n", wantErr: "value out of range"},
		{name: "line too long", in: strings.Repeat("x", 70000) + "\n" + sampleMeminfo, wantErr: "token too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			total, available, err := ParseMeminfo(strings.NewReader(tt.in))
			if tt.wantErr != "" {
				if !errors.Is(err, ErrMeminfo) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want ErrMeminfo containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || total != tt.total || available != tt.available {
				t.Errorf("ParseMeminfo = %d, %d, %v; want %d, %d", total, available, err, tt.total, tt.available)
			}
		})
	}
}

func FuzzParseMeminfo(f *testing.F) {
	f.Add(sampleMeminfo)
	f.Add("MemTotal: 1 kB\nMemAvailable: 0 kB")
	f.Add("MemTotal: kB\n")
	f.Fuzz(func(t *testing.T, in string) {
		total, available, err := ParseMeminfo(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrMeminfo) {
				t.Fatalf("error %v does not wrap ErrMeminfo", err)
			}
			return
		}
		// What parsed must print back to the same figures.
		again := fmt.Sprintf("MemTotal: %d kB\nMemAvailable: %d kB\n", total<<10, available<<10)
		t2, a2, err := ParseMeminfo(strings.NewReader(again))
		if err != nil || t2 != total || a2 != available {
			t.Fatalf("round trip of %d, %d gave %d, %d, %v", total, available, t2, a2, err)
		}
	})
}

func TestHostMemoryFrom(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meminfo")
	if err := os.WriteFile(path, []byte(sampleMeminfo), 0o600); err != nil {
		t.Fatal(err)
	}
	total, available, err := hostMemoryFrom(path)
	if err != nil || total != 24105 || available != 23160 {
		t.Errorf("hostMemoryFrom = %d, %d, %v; want 24105, 23160", total, available, err)
	}
	if _, _, err := hostMemoryFrom(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, ErrMeminfo) || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrMeminfo and ErrNotExist", err)
	}
}

// TestHostMemory reads this host's /proc/meminfo.
func TestHostMemory(t *testing.T) {
	if _, err := os.Stat(meminfoPath); err != nil {
		t.Skipf("no %s on this system: %v", meminfoPath, err)
	}
	total, available, err := HostMemory()
	if err != nil {
		t.Fatalf("HostMemory: %v", err)
	}
	if total == 0 || available > total {
		t.Errorf("HostMemory = %d MiB total, %d MiB available", total, available)
	}
}

// cgroupFixture writes a /proc/self/cgroup file and the files of a cgroup
// below a fake /sys/fs/cgroup, and returns their paths.
func cgroupFixture(t *testing.T, self string, files map[string]string) (root, selfPath string) {
	t.Helper()
	dir := t.TempDir()
	root = filepath.Join(dir, "cgroup")
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	selfPath = filepath.Join(dir, "self-cgroup")
	if err := os.WriteFile(selfPath, []byte(self), 0o600); err != nil {
		t.Fatal(err)
	}
	return root, selfPath
}

// TestHostMemoryCgroup: a container's memory limit lowers the host's
// figures (MemTotal 24105 MiB, MemAvailable 23160 MiB in sampleMeminfo).
func TestHostMemoryCgroup(t *testing.T) {
	const gib = 1 << 30
	tests := []struct {
		name             string
		self             string
		files            map[string]string
		total, available uint64
	}{
		{name: "v2 limit", self: "0::/\n", files: map[string]string{
			"memory.max": "8589934592\n", "memory.current": "3221225472\n", "memory.stat": "anon 1\ninactive_file 1073741824\n"},
			total: 8192, available: 6144},
		{name: "v2 nested path", self: "0::/kubepods/pod1/c1\n", files: map[string]string{
			"kubepods/pod1/c1/memory.max": fmt.Sprint(4 * gib), "kubepods/pod1/c1/memory.current": fmt.Sprint(gib)},
			total: 4096, available: 3072},
		{name: "v2 without limit", self: "0::/\n", files: map[string]string{"memory.max": "max\n", "memory.current": "1"},
			total: 24105, available: 23160},
		{name: "v1 limit", self: "4:memory:/docker/abc\n0::/\n", files: map[string]string{
			"memory/docker/abc/memory.limit_in_bytes": fmt.Sprint(16 * gib), "memory/docker/abc/memory.usage_in_bytes": fmt.Sprint(2 * gib),
			"memory/docker/abc/memory.stat": "total_inactive_file 1073741824\n"},
			total: 16384, available: 15360},
		{name: "v1 mounted at its own root", self: "4:memory:/docker/abc\n", files: map[string]string{
			"memory/memory.limit_in_bytes": fmt.Sprint(2 * gib), "memory/memory.usage_in_bytes": fmt.Sprint(gib)},
			total: 2048, available: 1024},
		{name: "v1 without limit", self: "4:memory:/\n", files: map[string]string{
			"memory/memory.limit_in_bytes": "9223372036854771712", "memory/memory.usage_in_bytes": "1"},
			total: 24105, available: 23160},
		{name: "usage above the limit", self: "0::/\n", files: map[string]string{"memory.max": fmt.Sprint(gib), "memory.current": fmt.Sprint(2 * gib)},
			total: 1024, available: 0},
		{name: "limit above the host", self: "0::/\n", files: map[string]string{"memory.max": fmt.Sprint(64 * gib), "memory.current": "0"},
			total: 24105, available: 23160},
		{name: "no cgroup files", self: "garbage", total: 24105, available: 23160},
	}
	meminfo := filepath.Join(t.TempDir(), "meminfo")
	if err := os.WriteFile(meminfo, []byte(sampleMeminfo), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, self := cgroupFixture(t, tt.self, tt.files)
			total, available, err := hostMemoryAt(meminfo, root, self)
			if err != nil || total != tt.total || available != tt.available {
				t.Errorf("hostMemoryAt = %d, %d, %v; want %d, %d", total, available, err, tt.total, tt.available)
			}
		})
	}
}

func TestPIDExists(t *testing.T) {
	if !PIDExists(os.Getpid()) {
		t.Error("this process does not exist")
	}
	if PIDExists(1 << 30) {
		t.Error("PID 2^30 exists")
	}
}
