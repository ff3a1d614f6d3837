package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/goleak"
	"go.uber.org/zap"

	"github.com/switchyard/switchyard/gpu"
	"github.com/switchyard/switchyard/gpu/gputest"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeEnv returns an env over lib with fixed host memory, no visibility
// variable, and PIDs below 10000 existing; and its outputs.
func fakeEnv(lib *gputest.Server) (env, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	return env{
		stdout: &stdout, stderr: &stderr,
		open:       func(log *zap.Logger) gpu.Info { return gpuNew(lib, log) },
		hostMemory: func() (uint64, uint64, error) { return 64000, 50000, nil },
		lookupEnv:  func(string) (string, bool) { return "", false },
		pidExists:  func(pid int) bool { return pid < 10000 },
	}, &stdout, &stderr
}

// gpuNew is gpu.New over a chosen library: NVML when it initialises, the
// CPU-only Info when the library is missing, a broken Info otherwise.
func gpuNew(lib nvml.Interface, log *zap.Logger) gpu.Info {
	info, err := gpu.NewNVML(lib, log)
	switch {
	case err == nil:
		return info
	case errors.Is(err, nvml.ERROR_LIBRARY_NOT_FOUND):
		return gpu.CPUOnly()
	}
	return gpu.Broken(err)
}

func TestTable(t *testing.T) {
	lib := gputest.New(30000, 1200, 40960)
	lib.SetUtilization(1, 87)
	lib.SetReserved(1, 512)
	lib.SetProcess(1, 4242, 852)
	lib.SetProcess(1, 4243, gputest.Unknown)
	lib.SetMIG(2, 10240, 10240)
	lib.SetSliceProcess(2, 1, 77, 100)
	e, stdout, stderr := fakeEnv(lib)
	if code := run(nil, e); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	want := `GPU  NAME                                    UUID                                      PCI BUS ID        MIG     TOTAL MiB  USED MiB  FREE MiB  RESERVED MiB  UTIL %  VISIBLE  STATUS
0    Mock NVIDIA A100-SXM4-40GB              GPU-00000000-0000-4000-8000-000000000000  00000000:10:00.0  off     40960      10960     30000     0             0       yes      up
1    Mock NVIDIA A100-SXM4-40GB              GPU-00000000-0000-4000-8000-000000000001  00000000:11:00.0  off     40960      39248     1200      512           87      yes      up
2    Mock NVIDIA A100-SXM4-40GB              GPU-00000000-0000-4000-8000-000000000002  00000000:12:00.0  on (2)  -          -         -         -             -       yes      up
2/0  Mock NVIDIA A100-SXM4-40GB MIG 2g.10gb  MIG-00000000-0000-4000-0000-000000000002  -                 slice   10240      0         10240     0             -       yes      up
2/1  Mock NVIDIA A100-SXM4-40GB MIG 2g.10gb  MIG-00000000-0000-4000-0001-000000000002  -                 slice   10240      0         10240     0             -       yes      up

visibility: CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES are not set

GPU  DEVICE UUID                               PID   USED MiB  IN /proc
1    GPU-00000000-0000-4000-8000-000000000001  4242  852       yes
1    GPU-00000000-0000-4000-8000-000000000001  4243  unknown   yes
2    MIG-00000000-0000-4000-0001-000000000002  77    100       yes

host memory: 64000 MiB total, 50000 MiB available
`
	if stdout.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	if lib.InitCount() != 1 || lib.ShutdownCount() != 1 {
		t.Errorf("Init %d, Shutdown %d; want 1 and 1", lib.InitCount(), lib.ShutdownCount())
	}
}

// TestTableWithADeviceDown prints every device, the one that is down with
// why, and exits 1.
func TestTableWithADeviceDown(t *testing.T) {
	lib := gputest.New(30000, 30000, 30000)
	lib.FailHandle(1, nvml.ERROR_NO_PERMISSION)
	lib.FailProcesses(2, nvml.ERROR_NOT_SUPPORTED)
	e, stdout, stderr := fakeEnv(lib)
	e.lookupEnv = func(k string) (string, bool) {
		if k == "CUDA_VISIBLE_DEVICES" {
			return "0,2", true
		}
		return "", false
	}
	if code := run(nil, e); code != 1 || !strings.Contains(stderr.String(), "nvmlcheck: a device is down: 1 of 3 devices") {
		t.Errorf("exit %d, stderr %q; want 1 and the count of devices down", code, stderr)
	}
	for _, want := range []string{
		"1    -                           -                                         -                 off  -          -         -         -             -       no       DOWN: DeviceGetHandleByIndex: ERROR_NO_PERMISSION\n",
		"2    Mock NVIDIA A100-SXM4-40GB  GPU-00000000-0000-4000-8000-000000000002  00000000:12:00.0  off  40960      10960     30000     0             0       yes      up\n",
		`visibility: CUDA_VISIBLE_DEVICES="0,2"; the server may use GPUs [0 2]`,
		"gpu 1 -: process list failed: DeviceGetHandleByIndex: ERROR_NO_PERMISSION\n",
		"gpu 2 GPU-00000000-0000-4000-8000-000000000002: process list failed: GetComputeRunningProcesses: ERROR_NOT_SUPPORTED\n",
		"host memory: 64000 MiB total",
	} {
		checkContains(t, stdout.String(), want)
	}
}

// checkContains fails the test unless the table holds want.
func checkContains(t *testing.T, table, want string) {
	t.Helper()
	if !strings.Contains(table, want) {
		t.Errorf("table lacks %q:\n%s", want, table)
	}
}

// TestPIDNamespace: NVML lists processes none of which exists here.
func TestPIDNamespace(t *testing.T) {
	lib := gputest.New(30000)
	lib.SetProcess(0, 123456, 852)
	e, stdout, _ := fakeEnv(lib)
	if code := run(nil, e); code != 0 {
		t.Fatalf("exit %d", code)
	}
	checkContains(t, stdout.String(), "0    GPU-00000000-0000-4000-8000-000000000000  123456  852       no\n")
	checkContains(t, stdout.String(), "none of NVML's PIDs exists in /proc")
}

func TestJSON(t *testing.T) {
	lib := gputest.New(30000)
	lib.SetProcess(0, 4242, 852)
	e, stdout, stderr := fakeEnv(lib)
	e.lookupEnv = func(k string) (string, bool) {
		if k == "NVIDIA_VISIBLE_DEVICES" {
			return "all", true
		}
		return "", false
	}
	if code := run([]string{"-json"}, e); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	var got report
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	util := uint32(0)
	wantDev := gpu.Device{Index: 0, UUID: gputest.UUID(0), Name: "Mock NVIDIA A100-SXM4-40GB", PCIBusID: gputest.PCIBusID(0),
		Memory: &gpu.Memory{TotalMiB: 40960, UsedMiB: 10960, FreeMiB: 30000}, UtilizationPercent: &util}
	if len(got.Devices) != 1 || !reflect.DeepEqual(got.Devices[0], wantDev) {
		t.Errorf("devices = %+v, want [%+v]", got.Devices, wantDev)
	}
	wantProcs := []listing{{DeviceIndex: 0, UUID: gputest.UUID(0), Processes: []process{{ProcessMemory: gpu.ProcessMemory{PID: 4242, UsedMiB: 852}, InProc: true}}}}
	if !reflect.DeepEqual(got.Processes, wantProcs) {
		t.Errorf("processes = %+v", got.Processes)
	}
	if got.Visibility.CUDAVisibleDevices != nil || got.Visibility.NVIDIAVisibleDevices == nil || *got.Visibility.NVIDIAVisibleDevices != "all" ||
		!slices.Equal(got.Visibility.Visible, []int{0}) {
		t.Errorf("visibility = %+v", got.Visibility)
	}
	if got.Host != (hostMemory{TotalMiB: 64000, AvailableMiB: 50000}) {
		t.Errorf("host = %+v", got.Host)
	}
}

func TestCPUOnly(t *testing.T) {
	lib := gputest.New()
	lib.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	e, stdout, _ := fakeEnv(lib)
	if code := run([]string{"-json"}, e); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(stdout.String(), `"devices": []`) || !strings.Contains(stdout.String(), `"processes": []`) {
		t.Errorf("CPU-only JSON should list no devices and no processes:\n%s", stdout)
	}
	stdout.Reset()
	if code := run(nil, e); code != 0 || !strings.HasPrefix(stdout.String(), "no NVIDIA GPU found: CPU only\n") {
		t.Errorf("exit %d, table:\n%s", code, stdout)
	}
}

func TestFailures(t *testing.T) {
	tests := []struct {
		name      string
		args      []string
		prepare   func(s *gputest.Server, e *env)
		wantCode  int
		wantErr   string
		initFails bool // Init itself fails
	}{
		{name: "bad flag", args: []string{"-x"}, wantCode: 2, wantErr: "flag provided but not defined: -x"},
		{name: "driver not loaded", prepare: func(s *gputest.Server, _ *env) {
			s.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
		}, wantCode: 1, wantErr: "nvmlcheck: gpu: nvml call failed: Init: ERROR_DRIVER_NOT_LOADED", initFails: true},
		{name: "nvml unknown after a daemon reload", prepare: func(s *gputest.Server, _ *env) {
			s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		}, wantCode: 1, wantErr: "nvmlcheck: gpu: nvml call failed: DeviceGetCount: ERROR_UNKNOWN"},
		{name: "a device is lost", prepare: func(s *gputest.Server, _ *env) {
			s.Device(0).GetNameFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
		}, wantCode: 1, wantErr: "nvmlcheck: a device is down: 1 of 1 devices"},
		{name: "meminfo fails", prepare: func(_ *gputest.Server, e *env) {
			e.hostMemory = func() (uint64, uint64, error) { return 0, 0, gpu.ErrMeminfo }
		}, wantCode: 1, wantErr: "nvmlcheck: gpu: bad meminfo"},
		{name: "shutdown fails", prepare: func(s *gputest.Server, _ *env) {
			s.ShutdownFunc = func() nvml.Return { return nvml.ERROR_UNKNOWN }
		}, wantCode: 1, wantErr: "Shutdown: ERROR_UNKNOWN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib := gputest.New(1000)
			e, _, stderr := fakeEnv(lib)
			if tt.prepare != nil {
				tt.prepare(lib, &e)
			}
			if code := run(tt.args, e); code != tt.wantCode || !strings.Contains(stderr.String(), tt.wantErr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tt.wantCode, tt.wantErr)
			}
			// A failed Init is not shut down; every other is, once.
			if want := lib.InitCount() - boolInt(tt.initFails); lib.ShutdownCount() != want {
				t.Errorf("Init %d, Shutdown %d; want %d", lib.InitCount(), lib.ShutdownCount(), want)
			}
		})
	}
}

func TestWriteErrorIsReported(t *testing.T) {
	e, _, stderr := fakeEnv(gputest.New(1))
	e.stdout = failingWriter{}
	if code := run(nil, e); code != 1 || !strings.Contains(stderr.String(), "disk full") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
