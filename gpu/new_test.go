package gpu

import (
	"errors"
	"strings"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/switchyard/switchyard/gpu/gputest"
)

const cpuOnlyMessage = "gpu: NVML not available, running CPU-only"

// TestNewFallsBackToCPU checks the CPU-only Info on a library whose Init
// fails the way a host without the driver does.
func TestNewFallsBackToCPU(t *testing.T) {
	lib := gputest.New(1000)
	lib.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	core, logs := observer.New(zapcore.DebugLevel)
	info := newWith(lib, zap.New(core))
	checkCPUOnly(t, info)
	entries := logs.AllUntimed()
	if len(entries) != 1 || entries[0].Level != zapcore.InfoLevel || entries[0].Message != cpuOnlyMessage {
		t.Fatalf("log = %+v, want one Info line %q", entries, cpuOnlyMessage)
	}
	if lib.InitCount() != 1 || lib.ShutdownCount() != 0 {
		t.Errorf("Init %d, Shutdown %d; want 1 and 0", lib.InitCount(), lib.ShutdownCount())
	}
}

// TestNewWarnsOnBrokenDriver: a library that is installed but fails is a
// warning, and the Info says why, so that models pinned to GPUs can be
// refused instead of quietly running on the CPU.
func TestNewWarnsOnBrokenDriver(t *testing.T) {
	tests := []struct {
		name      string
		prepare   func(s *gputest.Server)
		want      string
		shutdowns int
	}{
		{"driver not loaded", func(s *gputest.Server) {
			s.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
		}, "Init: ERROR_DRIVER_NOT_LOADED", 0},
		{"unknown after a daemon reload", func(s *gputest.Server) {
			s.DeviceGetCountFunc = func() (int, nvml.Return) { return 0, nvml.ERROR_UNKNOWN }
		}, "DeviceGetCount: ERROR_UNKNOWN", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lib := gputest.New(1000)
			tt.prepare(lib)
			core, logs := observer.New(zapcore.DebugLevel)
			info := newWith(lib, zap.New(core))
			entries := logs.AllUntimed()
			if len(entries) != 1 || entries[0].Level != zapcore.WarnLevel {
				t.Fatalf("log = %+v, want one Warn line", entries)
			}
			err := info.Err()
			if !errors.Is(err, ErrNVML) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Err = %v, want ErrNVML with %q", err, tt.want)
			}
			if devs, err := info.Devices(); len(devs) != 0 || err != nil {
				t.Errorf("Devices = %v, %v; want none", devs, err)
			}
			if lib.InitCount() != 1 || lib.ShutdownCount() != tt.shutdowns {
				t.Errorf("Init %d, Shutdown %d; want 1 and %d", lib.InitCount(), lib.ShutdownCount(), tt.shutdowns)
			}
		})
	}
}

// TestNewOnThisHost runs New against the host's real library. Without the
// NVIDIA driver (CI) it must give the CPU-only Info; on a GPU host it must
// list as many devices as it logged.
func TestNewOnThisHost(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	info := New(zap.New(core))
	defer func() {
		if err := info.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	entries := logs.AllUntimed()
	if len(entries) != 1 || entries[0].Level != zapcore.InfoLevel {
		t.Fatalf("log = %+v, want exactly one Info line", entries)
	}
	if entries[0].Message == cpuOnlyMessage {
		checkCPUOnly(t, info)
		return
	}
	devs, err := info.Devices()
	if err != nil {
		t.Fatalf("Devices: %v", err)
	}
	if logged := entries[0].ContextMap()["devices"]; logged != int64(len(devs)) {
		t.Errorf("logged %v devices, Devices() returned %d", logged, len(devs))
	}
}

func TestNilLogger(t *testing.T) {
	lib := gputest.New()
	lib.InitFunc = func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }
	checkCPUOnly(t, newWith(lib, nil))
}

func checkCPUOnly(t *testing.T, info Info) {
	t.Helper()
	if err := info.Err(); err != nil {
		t.Errorf("Err = %v, want nil on a host without NVML", err)
	}
	devs, err := info.Devices()
	if err != nil || len(devs) != 0 {
		t.Errorf("Devices = %v, %v; want none", devs, err)
	}
	procs, err := info.Processes()
	if err != nil || len(procs) != 0 {
		t.Errorf("Processes = %v, %v; want none", procs, err)
	}
	if err := info.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
}
