package main

import (
	"bytes"
	"encoding/json"
	"errors"
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

// fakeEnv returns an env over lib with fixed host memory, and its outputs.
func fakeEnv(lib *gputest.Server) (env, *bytes.Buffer, *bytes.Buffer) {
	var stdout, stderr bytes.Buffer
	return env{
		stdout: &stdout, stderr: &stderr,
		open:       func(log *zap.Logger) gpu.Info { return gpuNew(lib, log) },
		hostMemory: func() (uint64, uint64, error) { return 64000, 50000, nil },
	}, &stdout, &stderr
}

// gpuNew is gpu.New over a chosen library: NVML when it initialises, the
// CPU-only Info otherwise.
func gpuNew(lib nvml.Interface, log *zap.Logger) gpu.Info {
	info, err := gpu.NewNVML(lib, log)
	if err != nil {
		return gpu.CPUOnly()
	}
	return info
}

func TestTable(t *testing.T) {
	lib := gputest.New(30000, 1200)
	lib.SetUtilization(1, 87)
	lib.SetProcess(1, 4242, 852)
	e, stdout, stderr := fakeEnv(lib)
	if code := run(nil, e); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	want := `GPU  NAME                        UUID                                      TOTAL MiB  USED MiB  FREE MiB  UTIL %
0    Mock NVIDIA A100-SXM4-40GB  GPU-00000000-0000-4000-8000-000000000000  40960      10960     30000     0
1    Mock NVIDIA A100-SXM4-40GB  GPU-00000000-0000-4000-8000-000000000001  40960      39760     1200      87

GPU  PID   USED MiB
1    4242  852

host memory: 64000 MiB total, 50000 MiB available
`
	if stdout.String() != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", stdout, want)
	}
	if lib.InitCount() != 1 || lib.ShutdownCount() != 1 {
		t.Errorf("Init %d, Shutdown %d; want 1 and 1", lib.InitCount(), lib.ShutdownCount())
	}
}

func TestJSON(t *testing.T) {
	lib := gputest.New(30000)
	lib.SetProcess(0, 4242, 852)
	e, stdout, stderr := fakeEnv(lib)
	if code := run([]string{"-json"}, e); code != 0 {
		t.Fatalf("exit %d, stderr %s", code, stderr)
	}
	var got report
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, stdout)
	}
	wantDev := gpu.Device{Index: 0, UUID: gputest.UUID(0), Name: "Mock NVIDIA A100-SXM4-40GB", TotalMiB: 40960, UsedMiB: 10960, FreeMiB: 30000}
	if len(got.Devices) != 1 || got.Devices[0] != wantDev {
		t.Errorf("devices = %+v, want [%+v]", got.Devices, wantDev)
	}
	if len(got.Processes) != 1 || got.Processes[0] != (gpu.ProcessMemory{PID: 4242, DeviceIndex: 0, UsedMiB: 852}) {
		t.Errorf("processes = %+v", got.Processes)
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
		name     string
		args     []string
		prepare  func(s *gputest.Server, e *env)
		wantCode int
		wantErr  string
	}{
		{name: "bad flag", args: []string{"-x"}, wantCode: 2, wantErr: "flag provided but not defined: -x"},
		{name: "nvml call fails", prepare: func(s *gputest.Server, _ *env) {
			s.Device(0).GetNameFunc = func() (string, nvml.Return) { return "", nvml.ERROR_GPU_IS_LOST }
		}, wantCode: 1, wantErr: "nvmlcheck: gpu: nvml call failed: gpu 0: GetName: ERROR_GPU_IS_LOST"},
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
			if lib.InitCount() != lib.ShutdownCount() {
				t.Errorf("Init %d, Shutdown %d", lib.InitCount(), lib.ShutdownCount())
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
