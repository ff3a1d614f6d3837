package gpu_test

import (
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
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

// newDGX returns a dgxa100 server whose devices report utilisation, which the
// stock mock leaves unset: device i is i*10 % busy.
func newDGX() *dgxa100.Server {
	s := dgxa100.New()
	for i := range s.Devices {
		mockDevice(s, i).GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
			return nvml.Utilization{Gpu: uint32(i * 10)}, nvml.SUCCESS
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

func TestDevicesOnDGXA100(t *testing.T) {
	s := newDGX()
	for i := range s.Devices {
		mockDevice(s, i).MemoryInfo = nvml.Memory{Total: 40 * gib, Used: uint64(i) * gib, Free: uint64(40-i) * gib}
	}
	devs, err := openInfo(t, s).Devices()
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	if len(devs) != 8 {
		t.Fatalf("got %d devices, want 8", len(devs))
	}
	for i, d := range devs {
		m := mockDevice(s, i)
		want := gpu.Device{
			Index: i, UUID: m.UUID, Name: "Mock NVIDIA A100-SXM4-40GB",
			TotalMiB: 40960, UsedMiB: uint64(i) * 1024, FreeMiB: uint64(40-i) * 1024,
			UtilizationPercent: uint32(i * 10),
		}
		if d != want {
			t.Errorf("device %d = %+v, want %+v", i, d, want)
		}
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
		if devs[0].FreeMiB != free || devs[0].UsedMiB != gputest.TotalMiB-free {
			t.Errorf("after SetFree(0, %d): %+v", free, devs[0])
		}
	}
}

func TestUtilization(t *testing.T) {
	tests := []struct {
		name    string
		ret     nvml.Return
		want    uint32
		wantErr string
	}{
		{name: "reported", ret: nvml.SUCCESS, want: 37},
		{name: "not supported is 0", ret: nvml.ERROR_NOT_SUPPORTED, want: 0},
		{name: "gpu lost is an error", ret: nvml.ERROR_GPU_IS_LOST, wantErr: "gpu 3: GetUtilizationRates: ERROR_GPU_IS_LOST"},
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
			if tt.wantErr != "" {
				checkErr(t, err, gpu.ErrNVML, tt.wantErr)
				return
			}
			if err != nil {
				t.Fatalf("Devices: %v", err)
			}
			if devs[3].UtilizationPercent != tt.want {
				t.Errorf("utilization = %d, want %d", devs[3].UtilizationPercent, tt.want)
			}
		})
	}
}

func TestNVMLErrors(t *testing.T) {
	tests := []struct {
		name string
		fail func(s *dgxa100.Server)
		want string
	}{
		{"count", func(s *dgxa100.Server) {
			s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		}, "DeviceGetCount: ERROR_UNKNOWN"},
		{"handle", func(s *dgxa100.Server) {
			s.DeviceGetHandleByIndexFunc = func(int) (nvml.Device, nvml.Return) { return nil, nvml.ERROR_NO_PERMISSION }
		}, "gpu 0: DeviceGetHandleByIndex: ERROR_NO_PERMISSION"},
		{"uuid", func(s *dgxa100.Server) {
			mockDevice(s, 2).GetUUIDFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
		}, "gpu 2: GetUUID: ERROR_GPU_IS_LOST"},
		{"name", func(s *dgxa100.Server) {
			mockDevice(s, 5).GetNameFunc = func() (string, nvml.Return) { return "", nvml.ERROR_UNKNOWN }
		}, "gpu 5: GetName: ERROR_UNKNOWN"},
		{"memory", func(s *dgxa100.Server) {
			mockDevice(s, 7).GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return nvml.Memory{}, nvml.ERROR_TIMEOUT }
		}, "gpu 7: GetMemoryInfo: ERROR_TIMEOUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newDGX()
			info := openInfo(t, s)
			tt.fail(s)
			_, err := info.Devices()
			checkErr(t, err, gpu.ErrNVML, tt.want)
		})
	}
}

// setProcs makes device i of s report the given compute and graphics lists.
func setProcs(s *dgxa100.Server, i int, compute, graphics []nvml.ProcessInfo, computeRet nvml.Return) {
	d := mockDevice(s, i)
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return compute, computeRet }
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return graphics, nvml.SUCCESS }
}

func proc(pid uint32, bytes uint64) nvml.ProcessInfo {
	return nvml.ProcessInfo{Pid: pid, UsedGpuMemory: bytes}
}

func TestProcessesOnDGXA100(t *testing.T) {
	s := newDGX()
	for i := range s.Devices {
		setProcs(s, i, nil, nil, nvml.SUCCESS)
	}
	// Device 0: a process listed as both compute and graphics counts once.
	setProcs(s, 0, []nvml.ProcessInfo{proc(200, 2*gib), proc(100, gib)}, []nvml.ProcessInfo{proc(100, gib)}, nvml.SUCCESS)
	// Device 1: compute listing unsupported, graphics only.
	setProcs(s, 1, nil, []nvml.ProcessInfo{proc(300, 512<<20)}, nvml.ERROR_NOT_SUPPORTED)
	// Device 6: memory not available, and one PID in two MIG instances.
	setProcs(s, 6, []nvml.ProcessInfo{proc(400, ^uint64(0)), proc(500, gib), proc(500, 3*gib)}, nil, nvml.SUCCESS)

	got, err := openInfo(t, s).Processes()
	if err != nil {
		t.Fatalf("Processes: %v", err)
	}
	want := []gpu.ProcessMemory{
		{PID: 100, DeviceIndex: 0, UsedMiB: 1024},
		{PID: 200, DeviceIndex: 0, UsedMiB: 2048},
		{PID: 300, DeviceIndex: 1, UsedMiB: 512},
		{PID: 400, DeviceIndex: 6, UsedMiB: 0},
		{PID: 500, DeviceIndex: 6, UsedMiB: 4096},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Processes =\n%+v\nwant\n%+v", got, want)
	}
}

func TestProcessesError(t *testing.T) {
	s := newDGX()
	for i := range s.Devices {
		setProcs(s, i, nil, nil, nvml.SUCCESS)
	}
	setProcs(s, 4, nil, nil, nvml.ERROR_NO_PERMISSION)
	_, err := openInfo(t, s).Processes()
	checkErr(t, err, gpu.ErrNVML, "gpu 4: GetComputeRunningProcesses: ERROR_NO_PERMISSION")
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
	want := []gpu.ProcessMemory{{PID: 77, DeviceIndex: 0, UsedMiB: 10}, {PID: 4242, DeviceIndex: 1, UsedMiB: 852}}
	if !slices.Equal(got, want) {
		t.Errorf("Processes = %+v, want %+v", got, want)
	}
	s.RemoveProcess(1, 4242)
	if got, _ = info.Processes(); !slices.Equal(got, want[:1]) {
		t.Errorf("after RemoveProcess: %+v, want %+v", got, want[:1])
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
