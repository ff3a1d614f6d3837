package worker

import (
	"os/exec"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/switchyard/switchyard/gpu"
	"github.com/switchyard/switchyard/internal/testutil"
)

func TestWorkerMemory(t *testing.T) {
	f := figures{gpu: true, pidsOK: true, units: map[string]unitFigures{
		"GPU-a": {byPID: map[int]gpu.ProcessMemory{10: {PID: 10, UsedMiB: 500}, 11: {PID: 11, UsedMiB: 300}, 12: {PID: 12, Unknown: true}}},
		"GPU-b": {err: "GetComputeRunningProcesses: ERROR_NO_PERMISSION"},
	}}
	tests := []struct {
		name   string
		unit   string
		pids   []int
		want   int64
		wantOK bool
	}{
		{name: "worker alone", unit: "GPU-a", pids: []int{10}, want: 500, wantOK: true},
		{name: "worker and child", unit: "GPU-a", pids: []int{10, 11}, want: 800, wantOK: true},
		{name: "not listed holds nothing", unit: "GPU-a", pids: []int{99}, want: 0, wantOK: true},
		{name: "a child NVML cannot measure", unit: "GPU-a", pids: []int{10, 12}},
		{name: "listing failed", unit: "GPU-b", pids: []int{10}},
		{name: "unit not listed", unit: "GPU-c", pids: []int{10}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := f.workerMemory(tt.unit, tt.pids)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("workerMemory = %d, %v; want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
	f.pidsOK = false
	if _, ok := f.workerMemory("GPU-a", []int{10}); ok {
		t.Error("memory known although NVML's PIDs are another namespace's")
	}
}

func TestParseStat(t *testing.T) {
	tests := []struct {
		line      string
		pid, ppid int
		ok        bool
	}{
		{"13805 (cat) R 13798 13798 22321 0", 13805, 13798, true},
		{"42 (a (b) c) S 7 42", 42, 7, true},
		{"42 (x) S", 0, 0, false},
		{"garbage", 0, 0, false},
		{"x (y) S 1", 0, 0, false},
	}
	for _, tt := range tests {
		pid, ppid, ok := parseStat(tt.line)
		if pid != tt.pid || ppid != tt.ppid || ok != tt.ok {
			t.Errorf("parseStat(%q) = %d, %d, %v; want %d, %d, %v", tt.line, pid, ppid, ok, tt.pid, tt.ppid, tt.ok)
		}
	}
}

// TestProcTree starts a shell with two children and finds them all, through
// the kernel's children files where it has them and through the parent PIDs
// in any case.
func TestProcTree(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 60 & sleep 60 & echo started; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	buf := make([]byte, 8)
	if _, err := out.Read(buf); err != nil {
		t.Fatal(err)
	}
	kids := func() []int { return childrenByParent("/proc")(cmd.Process.Pid) }
	testutil.WaitFor(t, waitLimit, "two children", func() bool { return len(kids()) == 2 })
	for name, tree := range map[string]procTree{"default": {kids: readProcTree("/proc")}, "by parent": {kids: childrenByParent("/proc")}} {
		got := tree.of(cmd.Process.Pid)
		want := append([]int{cmd.Process.Pid}, kids()...)
		slices.Sort(got[1:])
		slices.Sort(want[1:])
		if !slices.Equal(got, want) {
			t.Errorf("%s: tree %v, want %v", name, got, want)
		}
	}
	if got := (procTree{kids: readProcTree("/proc")}).of(1 << 30); !slices.Equal(got, []int{1 << 30}) {
		t.Errorf("tree of a missing process = %v", got)
	}
}

func TestCheckPIDsWarnsOnce(t *testing.T) {
	v := &gpuView{log: zaptest.NewLogger(t), pidExists: func(pid int) bool { return pid < 100 }}
	ls := func(pids ...int) []gpu.Listing {
		l := gpu.Listing{UUID: "GPU-a"}
		for _, p := range pids {
			l.Processes = append(l.Processes, gpu.ProcessMemory{PID: p})
		}
		return []gpu.Listing{l}
	}
	for _, tt := range []struct {
		pids []int
		ok   bool
	}{{nil, true}, {[]int{5, 500}, true}, {[]int{500}, false}, {[]int{600, 700}, false}} {
		if got := v.checkPIDs(ls(tt.pids...)); got != tt.ok {
			t.Errorf("checkPIDs(%v) = %v, want %v", tt.pids, got, tt.ok)
		}
	}
	if !v.nsWarned.Load() {
		t.Error("no warning")
	}
}

func TestDescribeIDs(t *testing.T) {
	v := &gpuView{ids: []int{2, 3}, visible: gpu.NewVisibility(func(k string) (string, bool) {
		return "2,3", k == "CUDA_VISIBLE_DEVICES"
	})}
	if got := v.describeIDs(); got != "gpu 2, gpu 3 (CUDA_VISIBLE_DEVICES=2,3)" {
		t.Errorf("describeIDs = %q", got)
	}
	if got := (&gpuView{}).describeIDs(); !strings.Contains(got, "no GPU") {
		t.Errorf("describeIDs = %q", got)
	}
}
