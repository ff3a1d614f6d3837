package gputest_test

import (
	"slices"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/goleak"

	"github.com/switchyard/switchyard/gpu/gputest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// handle returns device i through the nvml.Interface, as library code sees it.
func handle(t *testing.T, lib nvml.Interface, i int) nvml.Device {
	t.Helper()
	d, ret := lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		t.Fatalf("DeviceGetHandleByIndex(%d): %v", i, ret)
	}
	return d
}

func TestDeviceCount(t *testing.T) {
	for _, n := range []int{0, 1, 3, gputest.MaxDevices} {
		lib := gputest.New(make([]uint64, n)...)
		if got, ret := lib.DeviceGetCount(); got != n || ret != nvml.SUCCESS {
			t.Errorf("New with %d figures: DeviceGetCount = %d, %v", n, got, ret)
		}
		if _, ret := lib.DeviceGetHandleByIndex(n); ret != nvml.ERROR_INVALID_ARGUMENT {
			t.Errorf("New with %d figures: handle %d gave %v, want ERROR_INVALID_ARGUMENT", n, n, ret)
		}
	}
}

func TestTooManyDevicesPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New with 9 figures did not panic")
		}
	}()
	gputest.New(make([]uint64, gputest.MaxDevices+1)...)
}

func TestMemory(t *testing.T) {
	tests := []struct {
		name                string
		free                uint64
		setFree             *uint64
		wantTotal, wantFree uint64
	}{
		{name: "free of the default total", free: 1200, wantTotal: gputest.TotalMiB, wantFree: 1200},
		{name: "free above the default total", free: 81920, wantTotal: 81920, wantFree: 81920},
		{name: "SetFree", free: 1200, setFree: ptr(uint64(30000)), wantTotal: gputest.TotalMiB, wantFree: 30000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib := gputest.New(40000, tt.free)
			if tt.setFree != nil {
				lib.SetFree(1, *tt.setFree)
			}
			mem, ret := handle(t, lib, 1).GetMemoryInfo()
			want := nvml.Memory{Total: tt.wantTotal << 20, Free: tt.wantFree << 20, Used: (tt.wantTotal - tt.wantFree) << 20}
			if ret != nvml.SUCCESS || mem != want {
				t.Errorf("GetMemoryInfo = %+v, %v; want %+v", mem, ret, want)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestIdentityAndUtilization(t *testing.T) {
	lib := gputest.New(1, 1)
	lib.SetUtilization(1, 64)
	d := handle(t, lib, 1)
	if uuid, _ := d.GetUUID(); uuid != gputest.UUID(1) {
		t.Errorf("UUID = %q, want %q", uuid, gputest.UUID(1))
	}
	if byUUID, ret := lib.DeviceGetHandleByUUID(gputest.UUID(1)); ret != nvml.SUCCESS || byUUID != d {
		t.Errorf("DeviceGetHandleByUUID = %v, %v", byUUID, ret)
	}
	if _, ret := lib.DeviceGetHandleByUUID("GPU-nope"); ret != nvml.ERROR_NOT_FOUND {
		t.Errorf("unknown UUID gave %v", ret)
	}
	if u, ret := d.GetUtilizationRates(); ret != nvml.SUCCESS || u.Gpu != 64 {
		t.Errorf("GetUtilizationRates = %+v, %v", u, ret)
	}
	if lib.Device(1) != d {
		t.Error("Device(1) is not the handle NVML returns")
	}
}

func TestProcesses(t *testing.T) {
	lib := gputest.New(1, 1)
	lib.SetProcess(0, 300, 100)
	lib.SetProcess(0, 20, 5)
	lib.SetProcess(0, 300, 200) // replaces
	lib.SetProcess(1, 7, 1)
	lib.RemoveProcess(1, 7)
	got, ret := handle(t, lib, 0).GetComputeRunningProcesses()
	want := []nvml.ProcessInfo{{Pid: 20, UsedGpuMemory: 5 << 20}, {Pid: 300, UsedGpuMemory: 200 << 20}}
	if ret != nvml.SUCCESS || !slices.Equal(got, want) {
		t.Errorf("device 0 processes = %+v, %v; want %+v", got, ret, want)
	}
	if got, _ := handle(t, lib, 1).GetComputeRunningProcesses(); len(got) != 0 {
		t.Errorf("device 1 processes = %+v, want none", got)
	}
	if got, ret := handle(t, lib, 0).GetGraphicsRunningProcesses(); ret != nvml.SUCCESS || len(got) != 0 {
		t.Errorf("graphics processes = %+v, %v; want none", got, ret)
	}
}

func TestInitShutdownCounts(t *testing.T) {
	lib := gputest.New(1)
	for range 2 {
		lib.Init()
	}
	lib.Shutdown()
	if lib.InitCount() != 2 || lib.ShutdownCount() != 1 {
		t.Errorf("InitCount %d, ShutdownCount %d; want 2 and 1", lib.InitCount(), lib.ShutdownCount())
	}
}
