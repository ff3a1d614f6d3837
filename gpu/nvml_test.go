package gpu_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"go.uber.org/zap/zaptest"

	"github.com/switchyard/switchyard/gpu"
	"github.com/switchyard/switchyard/gpu/gputest"
)

const gib = 1 << 30

// mockDevice returns device i of a dgxa100 server.
func mockDevice(s *dgxa100.Server, i int) *dgxa100.Device {
	return s.Devices[i].(*dgxa100.Device)
}

// newDGX returns a dgxa100 server whose devices answer what the stock mock
// leaves unset: device i is i*10 % busy, reports its MemoryInfo through
// GetMemoryInfo_v2 too (with 300 MiB reserved, out of the used memory), and
// its PCI bus id through GetPciInfo.
func newDGX() *dgxa100.Server {
	s := dgxa100.New()
	for i := range s.Devices {
		d := mockDevice(s, i)
		d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: uint32(i * 10)}, nvml.SUCCESS
		}
		d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
			m := d.MemoryInfo
			return nvml.Memory_v2{Total: m.Total, Reserved: 300 << 20, Free: m.Free, Used: m.Used - 300<<20}, nvml.SUCCESS
		}
		d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
			var p nvml.PciInfo
			copy(p.BusId[:], d.PciBusID)
			return p, nvml.SUCCESS
		}
	}
	return s
}

func openInfo(t *testing.T, lib nvml.Interface) gpu.Info {
	t.Helper()
	info, err := gpu.NewNVML(lib, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("NewNVML: %v", err)
	}
	t.Cleanup(func() {
		if err := info.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return info
}

func u32(v uint32) *uint32 { return &v }

func TestDevicesOnDGXA100(t *testing.T) {
	s := newDGX()
	for i := range s.Devices {
		mockDevice(s, i).MemoryInfo = nvml.Memory{Total: 40 * gib, Used: uint64(i+1) * gib, Free: uint64(39-i) * gib}
	}
	info := openInfo(t, s)
	devs, err := info.Devices()
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	if len(devs) != 8 || info.Err() != nil {
		t.Fatalf("got %d devices (Err %v), want 8", len(devs), info.Err())
	}
	for i, d := range devs {
		m := mockDevice(s, i)
		want := gpu.Device{
			Index: i, UUID: m.UUID, Name: "Mock NVIDIA A100-SXM4-40GB", PCIBusID: m.PciBusID,
			Memory:             &gpu.Memory{TotalMiB: 40960, UsedMiB: uint64(i+1)*1024 - 300, FreeMiB: uint64(39-i) * 1024, ReservedMiB: 300},
			UtilizationPercent: u32(uint32(i * 10)),
		}
		if !reflect.DeepEqual(d, want) || !d.Up() {
			t.Errorf("device %d = %+v, want %+v", i, d, want)
		}
	}
}

// TestMemoryInfoVersions reads GetMemoryInfo_v2 where the library has it,
// and GetMemoryInfo where it does not or where the call fails.
func TestMemoryInfoVersions(t *testing.T) {
	tests := []struct {
		name       string
		symbolErr  error
		v2Ret      nvml.Return
		want       gpu.Memory
		wantV2Call bool
	}{
		{name: "v2", want: gpu.Memory{TotalMiB: 40960, UsedMiB: 724, FreeMiB: 39936, ReservedMiB: 300}, wantV2Call: true},
		{name: "driver without v2", symbolErr: errors.New("undefined symbol"), want: gpu.Memory{TotalMiB: 40960, UsedMiB: 1024, FreeMiB: 39936}},
		{name: "v2 fails", v2Ret: nvml.ERROR_NOT_SUPPORTED, want: gpu.Memory{TotalMiB: 40960, UsedMiB: 1024, FreeMiB: 39936}, wantV2Call: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newDGX()
			s.LookupSymbolFunc = func(string) error { return tt.symbolErr }
			d := mockDevice(s, 0)
			d.MemoryInfo = nvml.Memory{Total: 40 * gib, Used: gib, Free: 39 * gib}
			if tt.v2Ret != nvml.SUCCESS {
				d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, tt.v2Ret }
			}
			devs, err := openInfo(t, s).Devices()
			if err != nil || devs[0].Memory == nil || *devs[0].Memory != tt.want {
				t.Fatalf("device 0 memory = %+v, %v; want %+v", devs[0].Memory, err, tt.want)
			}
			if called := len(d.GetMemoryInfo_v2Calls()) > 0; called != tt.wantV2Call {
				t.Errorf("GetMemoryInfo_v2 called: %v, want %v", called, tt.wantV2Call)
			}
		})
	}
}

func TestDevicesAreFreshOnEveryCall(t *testing.T) {
	s := gputest.New(1000, 2000)
	info := openInfo(t, s)
	for _, free := range []uint64{1000, 500, 40000} {
		s.SetFree(0, free)
		devs, err := info.Devices()
		if err != nil {
			t.Fatalf("Devices: %v", err)
		}
		if devs[0].Memory.FreeMiB != free || devs[0].Memory.UsedMiB != gputest.TotalMiB-free {
			t.Errorf("after SetFree(0, %d): %+v", free, devs[0].Memory)
		}
	}
}

func TestUtilization(t *testing.T) {
	tests := []struct {
		name    string
		ret     nvml.Return
		want    *uint32
		wantErr string
	}{
		{name: "reported", ret: nvml.SUCCESS, want: u32(37)},
		{name: "not supported is unknown", ret: nvml.ERROR_NOT_SUPPORTED},
		{name: "gpu lost is a device down", ret: nvml.ERROR_GPU_IS_LOST, wantErr: "GetUtilizationRates: ERROR_GPU_IS_LOST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newDGX()
			mockDevice(s, 3).GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
				if tt.ret != nvml.SUCCESS {
					return nvml.Utilization{}, tt.ret
				}
				return nvml.Utilization{Gpu: 37}, nvml.SUCCESS
			}
			devs, err := openInfo(t, s).Devices()
			if err != nil {
				t.Fatalf("Devices: %v", err)
			}
			d := devs[3]
			if d.Err != tt.wantErr || tt.wantErr == "" && !reflect.DeepEqual(d.UtilizationPercent, tt.want) {
				t.Errorf("device 3 = %+v (utilization %v), want error %q and utilization %v", d, d.UtilizationPercent, tt.wantErr, tt.want)
			}
		})
	}
}

// TestOneBadDeviceIsNotEveryDevice makes one device fail each way NVML can
// and checks that it alone is down.
func TestOneBadDeviceIsNotEveryDevice(t *testing.T) {
	tests := []struct {
		name string
		fail func(s *gputest.Server)
		bad  int
		want string
	}{
		{"handle refused by the cgroup", func(s *gputest.Server) { s.FailHandle(3, nvml.ERROR_NO_PERMISSION) },
			3, "DeviceGetHandleByIndex: ERROR_NO_PERMISSION"},
		{"uuid", func(s *gputest.Server) {
			s.Device(2).GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
		}, 2, "GetUUID: ERROR_GPU_IS_LOST"},
		{"name", func(s *gputest.Server) {
			s.Device(5).GetNameFunc = func() (string, nvml.Return) { return "", nvml.ERROR_UNKNOWN }
		}, 5, "GetName: ERROR_UNKNOWN"},
		{"memory lost", func(s *gputest.Server) {
			s.Device(5).GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_GPU_IS_LOST }
			s.Device(5).GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, nvml.ERROR_GPU_IS_LOST }
		}, 5, "GetMemoryInfo: ERROR_GPU_IS_LOST"},
		{"memory refused outside MIG mode", func(s *gputest.Server) {
			s.Device(7).GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_NO_PERMISSION }
			s.Device(7).GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, nvml.ERROR_NO_PERMISSION }
		}, 7, "GetMemoryInfo: ERROR_NO_PERMISSION"},
		{"mig mode", func(s *gputest.Server) {
			s.Device(1).GetMigModeFunc = func() (int, int, nvml.Return) { return 0, 0, nvml.ERROR_UNKNOWN }
		}, 1, "GetMigMode: ERROR_UNKNOWN"},
		{"pci", func(s *gputest.Server) {
			s.Device(4).GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) { return nvml.PciInfo{}, nvml.ERROR_GPU_IS_LOST }
		}, 4, "GetPciInfo: ERROR_GPU_IS_LOST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := gputest.New(1, 2, 3, 4, 5, 6, 7, 8)
			tt.fail(s)
			devs, err := openInfo(t, s).Devices()
			if err != nil || len(devs) != 8 {
				t.Fatalf("Devices = %d devices, %v; want 8", len(devs), err)
			}
			for i, d := range devs {
				if i == tt.bad && (d.Up() || d.Err != tt.want || d.Index != i) {
					t.Errorf("device %d = %+v, want down with %q", i, d, tt.want)
				}
				if i != tt.bad && (!d.Up() || d.Memory == nil || d.Memory.FreeMiB != uint64(i+1)) {
					t.Errorf("device %d = %+v, want up with %d MiB free", i, d, i+1)
				}
			}
		})
	}
}

func TestDeviceCountFailureFailsAll(t *testing.T) {
	s := gputest.New(1, 2)
	info := openInfo(t, s)
	s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
	_, err := info.Devices()
	checkErr(t, err, gpu.ErrNVML, "DeviceGetCount: ERROR_UNKNOWN")
	_, err = info.Processes()
	checkErr(t, err, gpu.ErrNVML, "DeviceGetCount: ERROR_UNKNOWN")
}

// TestMIG reads a GPU in MIG mode whose own memory queries need privileges
// the process does not have: its slices carry the figures.
func TestMIG(t *testing.T) {
	s := gputest.New(40960, 30000)
	s.SetMIG(0, 10240, 20480)
	s.SetSliceFree(0, 1, 5000)
	devs, err := openInfo(t, s).Devices()
	if err != nil {
		t.Fatal(err)
	}
	d := devs[0]
	want := []gpu.Slice{
		{Index: 0, UUID: gputest.MIGUUID(0, 0), Name: "Mock NVIDIA A100-SXM4-40GB MIG 2g.10gb", Memory: gpu.Memory{TotalMiB: 10240, FreeMiB: 10240}},
		{Index: 1, UUID: gputest.MIGUUID(0, 1), Name: "Mock NVIDIA A100-SXM4-40GB MIG 2g.10gb", Memory: gpu.Memory{TotalMiB: 20480, UsedMiB: 15480, FreeMiB: 5000}},
	}
	if !d.Up() || !d.MIG || d.Memory != nil || d.UtilizationPercent != nil || !reflect.DeepEqual(d.Slices, want) {
		t.Errorf("device 0 = %+v, slices %+v; want up in MIG mode, memory unknown, slices %+v", d, d.Slices, want)
	}
	if devs[1].MIG || devs[1].Slices != nil || devs[1].Memory == nil {
		t.Errorf("device 1 = %+v, want a plain GPU", devs[1])
	}
	units := gpu.Units(devs)
	wantUnits := []gpu.Unit{
		{Device: 0, UUID: gputest.MIGUUID(0, 0), MIG: true, TotalMiB: 10240, FreeMiB: 10240},
		{Device: 0, UUID: gputest.MIGUUID(0, 1), MIG: true, TotalMiB: 20480, FreeMiB: 5000},
		{Device: 1, UUID: gputest.UUID(1), TotalMiB: 40960, FreeMiB: 30000},
	}
	if !slices.Equal(units, wantUnits) {
		t.Errorf("Units = %+v, want %+v", units, wantUnits)
	}
}

func TestMIGDeviceFailure(t *testing.T) {
	s := gputest.New(40960)
	s.SetMIG(0, 10240, 10240)
	mh, _ := s.Device(0).GetMigDeviceHandleByIndex(1)
	mh.(*mock.Device).GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_UNKNOWN }
	devs, err := openInfo(t, s).Devices()
	if err != nil {
		t.Fatal(err)
	}
	sl := devs[0].Slices
	if !devs[0].Up() || len(sl) != 2 || sl[0].Err != "" || sl[1].Err != "GetMemoryInfo: ERROR_UNKNOWN" {
		t.Errorf("device 0 = %+v, slices %+v; want slice 1 down", devs[0], sl)
	}
	if units := gpu.Units(devs); len(units) != 1 || units[0].UUID != gputest.MIGUUID(0, 0) {
		t.Errorf("Units = %+v, want slice 0 only", units)
	}
}

// setProcs makes device i of s report the given compute and graphics lists.
func setProcs(s *dgxa100.Server, i int, compute, graphics []nvml.ProcessInfo, computeRet, graphicsRet nvml.Return) {
	d := mockDevice(s, i)
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return compute, computeRet }
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return graphics, graphicsRet }
}

func proc(pid uint32, bytes uint64) nvml.ProcessInfo {
	return nvml.ProcessInfo{Pid: pid, UsedGpuMemory: bytes}
}

func TestProcessesOnDGXA100(t *testing.T) {
	s := newDGX()
	for i := range s.Devices {
		setProcs(s, i, nil, nil, nvml.SUCCESS, nvml.SUCCESS)
	}
	// Device 0: a process listed as both compute and graphics counts once.
	setProcs(s, 0, []nvml.ProcessInfo{proc(200, 2*gib), proc(100, gib)}, []nvml.ProcessInfo{proc(100, gib)}, nvml.SUCCESS, nvml.SUCCESS)
	// Device 1: compute listing unsupported: what processes hold is unknown.
	setProcs(s, 1, nil, []nvml.ProcessInfo{proc(300, 512<<20)}, nvml.ERROR_NOT_SUPPORTED, nvml.SUCCESS)
	// Device 2: graphics listing unsupported, compute only.
	setProcs(s, 2, []nvml.ProcessInfo{proc(350, 256<<20)}, nil, nvml.SUCCESS, nvml.ERROR_NOT_SUPPORTED)
	// Device 6: memory not available, and one PID in two MIG instances.
	setProcs(s, 6, []nvml.ProcessInfo{proc(400, ^uint64(0)), proc(500, gib), proc(500, 3*gib)}, nil, nvml.SUCCESS, nvml.SUCCESS)
	// Device 7: a known compute figure and an unknown graphics one.
	setProcs(s, 7, []nvml.ProcessInfo{proc(600, gib)}, []nvml.ProcessInfo{proc(600, ^uint64(0))}, nvml.SUCCESS, nvml.SUCCESS)

	got, err := openInfo(t, s).Processes()
	if err != nil {
		t.Fatalf("Processes: %v", err)
	}
	uuid := func(i int) string { return mockDevice(s, i).UUID }
	none := []gpu.ProcessMemory{}
	want := []gpu.Listing{
		{DeviceIndex: 0, UUID: uuid(0), Processes: []gpu.ProcessMemory{{PID: 100, UsedMiB: 1024}, {PID: 200, UsedMiB: 2048}}},
		{DeviceIndex: 1, UUID: uuid(1), Processes: none, Err: "GetComputeRunningProcesses: ERROR_NOT_SUPPORTED"},
		{DeviceIndex: 2, UUID: uuid(2), Processes: []gpu.ProcessMemory{{PID: 350, UsedMiB: 256}}},
		{DeviceIndex: 3, UUID: uuid(3), Processes: none},
		{DeviceIndex: 4, UUID: uuid(4), Processes: none},
		{DeviceIndex: 5, UUID: uuid(5), Processes: none},
		{DeviceIndex: 6, UUID: uuid(6), Processes: []gpu.ProcessMemory{{PID: 400, Unknown: true}, {PID: 500, UsedMiB: 4096}}},
		{DeviceIndex: 7, UUID: uuid(7), Processes: []gpu.ProcessMemory{{PID: 600, Unknown: true}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Processes =\n%+v\nwant\n%+v", got, want)
	}
}

// TestProcessesErrorIsPerDevice: one device refusing its process list does
// not empty the others'.
func TestProcessesErrorIsPerDevice(t *testing.T) {
	s := gputest.New(1, 1, 1)
	s.SetProcess(0, 10, 100)
	s.SetProcess(2, 30, 300)
	s.FailProcesses(1, nvml.ERROR_NO_PERMISSION)
	s.FailHandle(2, nvml.ERROR_GPU_IS_LOST)
	got, err := openInfo(t, s).Processes()
	if err != nil {
		t.Fatal(err)
	}
	want := []gpu.Listing{
		{DeviceIndex: 0, UUID: gputest.UUID(0), Processes: []gpu.ProcessMemory{{PID: 10, UsedMiB: 100}}},
		{DeviceIndex: 1, UUID: gputest.UUID(1), Processes: []gpu.ProcessMemory{}, Err: "GetComputeRunningProcesses: ERROR_NO_PERMISSION"},
		{DeviceIndex: 2, Err: "DeviceGetHandleByIndex: ERROR_GPU_IS_LOST"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Processes =\n%+v\nwant\n%+v", got, want)
	}
}

// TestProcessesOnMIG lists each MIG device apart: the GPU's own list needs
// privileges, and would not say which slice a process is on.
func TestProcessesOnMIG(t *testing.T) {
	s := gputest.New(40960)
	s.SetMIG(0, 10240, 10240)
	s.SetSliceProcess(0, 1, 4242, 852)
	got, err := openInfo(t, s).Processes()
	if err != nil {
		t.Fatal(err)
	}
	want := []gpu.Listing{
		{DeviceIndex: 0, UUID: gputest.MIGUUID(0, 0), Processes: []gpu.ProcessMemory{}},
		{DeviceIndex: 0, UUID: gputest.MIGUUID(0, 1), Processes: []gpu.ProcessMemory{{PID: 4242, UsedMiB: 852}}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Processes = %+v, want %+v", got, want)
	}
}

func TestProcessesFollowFake(t *testing.T) {
	s := gputest.New(40000, 40000)
	info := openInfo(t, s)
	s.SetProcess(1, 4242, 852)
	s.SetProcess(0, 77, 10)
	got, err := info.Processes()
	if err != nil {
		t.Fatalf("Processes: %v", err)
	}
	if len(got) != 2 || !slices.Equal(got[0].Processes, []gpu.ProcessMemory{{PID: 77, UsedMiB: 10}}) ||
		!slices.Equal(got[1].Processes, []gpu.ProcessMemory{{PID: 4242, UsedMiB: 852}}) {
		t.Errorf("Processes = %+v", got)
	}
	s.RemoveProcess(1, 4242)
	if got, _ = info.Processes(); len(got[1].Processes) != 0 {
		t.Errorf("after RemoveProcess: %+v", got)
	}
}

func TestInitShutdownPairing(t *testing.T) {
	tests := []struct {
		name          string
		prepare       func(s *gputest.Server)
		wantNewErr    string
		wantShutdowns int
	}{
		{name: "open and close", wantShutdowns: 1},
		{name: "init fails", prepare: func(s *gputest.Server) {
			s.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
		}, wantNewErr: "Init: ERROR_DRIVER_NOT_LOADED", wantShutdowns: 0},
		{name: "count fails after init", prepare: func(s *gputest.Server) {
			s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		}, wantNewErr: "DeviceGetCount: ERROR_UNKNOWN", wantShutdowns: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := gputest.New(100)
			if tt.prepare != nil {
				tt.prepare(s)
			}
			info, err := gpu.NewNVML(s, zaptest.NewLogger(t))
			if tt.wantNewErr != "" {
				checkErr(t, err, gpu.ErrNVML, tt.wantNewErr)
			} else {
				closeTwice(t, info)
			}
			if s.InitCount() != 1 || s.ShutdownCount() != tt.wantShutdowns {
				t.Errorf("Init called %d times, Shutdown %d; want 1 and %d", s.InitCount(), s.ShutdownCount(), tt.wantShutdowns)
			}
		})
	}
}

func closeTwice(t *testing.T, info gpu.Info) {
	t.Helper()
	for range 2 {
		if err := info.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}
	if _, err := info.Devices(); !errors.Is(err, gpu.ErrClosed) {
		t.Errorf("Devices after Close: %v, want ErrClosed", err)
	}
	if _, err := info.Processes(); !errors.Is(err, gpu.ErrClosed) {
		t.Errorf("Processes after Close: %v, want ErrClosed", err)
	}
}

func TestCloseReportsShutdownFailure(t *testing.T) {
	s := gputest.New()
	info, err := gpu.NewNVML(s, nil)
	if err != nil {
		t.Fatalf("NewNVML: %v", err)
	}
	s.ShutdownFunc = func() nvml.Return { return nvml.ERROR_UNINITIALIZED }
	checkErr(t, info.Close(), gpu.ErrNVML, "Shutdown: ERROR_UNINITIALIZED")
}

// TestConcurrentUseAndClose runs queries while another goroutine closes the
// Info; under -race it checks the locking, and each query either works or
// reports ErrClosed.
func TestConcurrentUseAndClose(t *testing.T) {
	s := gputest.New(1000, 2000, 3000)
	info, err := gpu.NewNVML(s, nil)
	if err != nil {
		t.Fatalf("NewNVML: %v", err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 20 {
		wg.Go(func() {
			_, err := info.Devices()
			errs <- err
		})
		wg.Go(func() {
			_, err := info.Processes()
			errs <- err
		})
	}
	wg.Go(func() { _ = info.Close() })
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && !errors.Is(err, gpu.ErrClosed) {
			t.Errorf("query: %v", err)
		}
	}
	if s.ShutdownCount() != 1 {
		t.Errorf("Shutdown called %d times, want 1", s.ShutdownCount())
	}
}

// checkErr fails unless err wraps target and its message contains want.
func checkErr(t *testing.T, err, target error, want string) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("error %v does not wrap %v", err, target)
	}
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not contain %q", err, want)
	}
}
