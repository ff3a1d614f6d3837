package worker

// Tests of DJL's memory rules, the checks that count every worker a request
// starts, and models pinned to GPUs on a host whose NVML is broken.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/gpu"
	"github.com/switchyard/switchyard/gpu/gputest"
	"github.com/switchyard/switchyard/properties"
)

// loadModelConfig writes serving.properties (and a file of size bytes, when
// size > 0) into a new folder and loads it.
func loadModelConfig(t *testing.T, props string, size int64, env properties.Env) *properties.Model {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, properties.ModelFile), []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	if size > 0 {
		f, err := os.Create(filepath.Join(dir, "weights.bin"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(size); err != nil { // sparse: the apparent size is what counts
			t.Fatal(err)
		}
		f.Close()
	}
	cfg, err := properties.LoadModel(dir, nil, env)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func TestMemoryNeeds(t *testing.T) {
	sm := properties.Env{"SAGEMAKER_MULTI_MODEL": "true"}
	const gib = 1 << 30
	tests := []struct {
		name  string
		props string
		size  int64
		env   properties.Env
		want  memoryNeeds
	}{
		{name: "defaults: nothing required, 500 reserved", want: memoryNeeds{0, 500, 0, 500, false}},
		{name: "host keys apply to the gpu", props: "required_memory_mb=2000\nreserved_memory_mb=700\n",
			want: memoryNeeds{2000, 700, 2000, 700, false}},
		{name: "gpu keys win on the gpu", props: "required_memory_mb=2000\ngpu.required_memory_mb=9000\ngpu.reserved_memory_mb=1024\n",
			want: memoryNeeds{2000, 500, 9000, 1024, false}},
		{name: "gpu keys at 0 do not count", props: "required_memory_mb=2000\nreserved_memory_mb=700\ngpu.required_memory_mb=0\ngpu.reserved_memory_mb=0\n",
			want: memoryNeeds{2000, 700, 2000, 700, false}},
		{name: "sagemaker estimate", size: 10 * gib, env: sm, want: memoryNeeds{12288, 500, 12288, 500, true}},
		{name: "sagemaker estimate, gpu key wins on the gpu", props: "gpu.required_memory_mb=3000\n", size: 10 * gib, env: sm,
			want: memoryNeeds{12289, 500, 3000, 500, true}},
		{name: "sagemaker with required_memory_mb", props: "required_memory_mb=100\n", size: 10 * gib, env: sm,
			want: memoryNeeds{100, 500, 100, 500, false}},
		{name: "sagemaker with tensor parallelism", props: "option.tensor_parallel_degree=2\n", size: 10 * gib, env: sm,
			want: memoryNeeds{0, 500, 0, 500, false}},
		{name: "sagemaker with TENSOR_PARALLEL_DEGREE=max", size: 10 * gib,
			env:  properties.Env{"SAGEMAKER_MULTI_MODEL": "true", "TENSOR_PARALLEL_DEGREE": "max"},
			want: memoryNeeds{0, 500, 0, 500, false}},
		{name: "not a multi-model endpoint", size: 10 * gib, env: properties.Env{"SAGEMAKER_MULTI_MODEL": "false"},
			want: memoryNeeds{0, 500, 0, 500, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := needsOf(loadModelConfig(t, tt.props, tt.size, tt.env), tt.env)
			if got != tt.want {
				t.Errorf("needsOf = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// hostWith returns a Config change that makes the host have availMiB.
func hostWith(availMiB uint64) func(*Config) {
	return func(c *Config) {
		c.HostMemory = func() (uint64, uint64, error) { return 64000, availMiB, nil }
	}
}

// TestHostCheckAlwaysRuns: with nothing required, reserved_memory_mb (500)
// must still be free on the host, for CPU and GPU workers alike.
func TestHostCheckAlwaysRuns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, gpus := range [][]uint64{nil, {30000}} {
			reg := gpuRegistry(t, gputest.New(gpus...), hostWith(400))
			gpuModel(t, reg, "m", "minWorkers=1\n")
			_, err := registerSync(t, reg, "m")
			if !errors.Is(err, api.ErrInsufficientMemory) || !strings.Contains(err.Error(), "cpu has 400 MiB available") {
				t.Errorf("%d gpus: register = %v, want 507 for the host", len(gpus), err)
			}
		}
	})
}

// TestRegisterCountsEveryWorker: the check before a register counts all the
// minimum workers, not just the first.
func TestRegisterCountsEveryWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := gpuRegistry(t, gputest.New(30000))
		gpuModel(t, reg, "three", "gpu.minWorkers=3\ngpu.maxWorkers=3\ngpu.required_memory_mb=10000\n")
		_, err := registerSync(t, reg, "three")
		if !errors.Is(err, api.ErrInsufficientMemory) || !strings.Contains(err.Error(), "gpu 0 has 10000 MiB free of 40960") {
			t.Fatalf("register = %v, want 507 for the third worker", err)
		}
		if _, err := reg.Describe("three"); !errors.Is(err, api.ErrModelNotFound) {
			t.Errorf("a refused model stays registered: %v", err)
		}
		gpuModel(t, reg, "host", "minWorkers=3\nrequired_memory_mb=1000\n")
		hostWith(3200)(&reg.cfg)
		_, err = registerSync(t, reg, "host")
		if !errors.Is(err, api.ErrInsufficientMemory) || !strings.Contains(err.Error(), "3 workers: gpu: not enough memory: model needs 3000 MiB + 500 MiB reserved; cpu has 3200 MiB available") {
			t.Errorf("register = %v, want 507 for three workers' host memory", err)
		}
	})
}

// TestScaleCountsEveryWorker: scaling up checks the workers it would add.
func TestScaleCountsEveryWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lib := gputest.New(30000)
		reg := gpuRegistry(t, lib)
		gpuModel(t, reg, "m", "gpu.minWorkers=1\ngpu.maxWorkers=1\ngpu.required_memory_mb=10000\n")
		if _, err := registerSync(t, reg, "m"); err != nil {
			t.Fatal(err)
		}
		lib.SetFree(0, 20000) // the first worker took its 10000
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		err := reg.Scale(ctx, "m", api.ScaleRequest{MinWorker: ptr(3), Synchronous: true})
		if !errors.Is(err, api.ErrInsufficientMemory) {
			t.Fatalf("scale to 3 = %v, want 507: two more need 20000 MiB + 500 reserved of 20000", err)
		}
		if rec, _ := reg.Describe("m"); rec.WorkerGroups[0].MinWorkers != 1 {
			t.Errorf("a refused scale changed the counts: %+v", rec.WorkerGroups[0])
		}
		if err := reg.Scale(ctx, "m", api.ScaleRequest{MinWorker: ptr(2), Synchronous: true}); err != nil {
			t.Errorf("scale to 2 = %v", err)
		}
	})
}

// TestSageMakerEstimate: on a multi-model endpoint a model without
// required_memory_mb needs 1.2 times its files.
func TestSageMakerEstimate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := gpuRegistry(t, gputest.New(), hostWith(12000),
			func(c *Config) { c.Env = properties.Env{"SAGEMAKER_MULTI_MODEL": "true"} })
		dir := gpuModel(t, reg, "big", "")
		f, err := os.Create(filepath.Join(dir, "weights.bin"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(10 << 30); err != nil {
			t.Fatal(err)
		}
		f.Close()
		_, err = registerSync(t, reg, "big")
		if !errors.Is(err, api.ErrInsufficientMemory) || !strings.Contains(err.Error(), "model needs 12288 MiB + 500 MiB reserved") {
			t.Errorf("register = %v, want 507 for the 1.2 x 10 GiB estimate", err)
		}
		gpuModel(t, reg, "small", "")
		if _, err := registerSync(t, reg, "small"); err != nil {
			t.Errorf("register small = %v", err)
		}
	})
}

// brokenNVML returns the Info of a host whose driver is not loaded.
func brokenNVML(t *testing.T) gpu.Info {
	t.Helper()
	lib := gputest.New(30000)
	lib.InitFunc = func() nvml.Return { return nvml.ERROR_DRIVER_NOT_LOADED }
	_, err := gpu.NewNVML(lib, nil)
	if err == nil {
		t.Fatal("NewNVML worked")
	}
	return gpu.Broken(err)
}

// TestPinnedModelsOnBrokenNVML: models pinned to GPUs are refused (503),
// or FAILED when loaded at startup, with NVML's error instead of running on
// the CPU; others run on the CPU.
func TestPinnedModelsOnBrokenNVML(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := gpuRegistry(t, gputest.New(), func(c *Config) { c.GPU = brokenNVML(t) })
		for name, props := range map[string]string{"ids": "load_on_devices=0\n", "gpukey": "gpu.minWorkers=1\n"} {
			gpuModel(t, reg, name, props)
			_, err := registerSync(t, reg, name)
			if !errors.Is(err, api.ErrModelFailed) || !strings.Contains(err.Error(), "pinned to GPUs") ||
				!strings.Contains(err.Error(), "ERROR_DRIVER_NOT_LOADED") {
				t.Errorf("register %s = %v, want 503 naming NVML's error", name, err)
			}
			if _, err := reg.Describe(name); !errors.Is(err, api.ErrModelNotFound) {
				t.Errorf("describe %s = %v, want it not registered", name, err)
			}
		}
		gpuModel(t, reg, "plain", "")
		rec, err := registerSync(t, reg, "plain")
		if err != nil || rec.WorkerGroups[0].Device.DeviceType != "cpu" {
			t.Errorf("register plain = %+v, %v; want it on the CPU", rec, err)
		}
		dir := gpuModel(t, reg, "startup", "load_on_devices=0\n")
		if err := reg.LoadStartup([]properties.ModelRef{{Name: "startup", Path: dir}}); err != nil {
			t.Fatal(err)
		}
		if h := reg.Health()["startup"]; h.Status != api.StatusFailed || !strings.Contains(h.Error, "NVML failed") {
			t.Errorf("health of a pinned startup model = %+v, want Failed", h)
		}
		rec, err = reg.Describe("startup")
		if err != nil || len(rec.WorkerGroups) != 0 || !strings.Contains(rec.LastError, "ERROR_DRIVER_NOT_LOADED") {
			t.Errorf("describe startup = %+v, %v; want FAILED without workers", rec, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		if err := reg.Scale(ctx, "startup", api.ScaleRequest{MinWorker: ptr(1)}); !errors.Is(err, api.ErrModelFailed) {
			t.Errorf("scale startup = %v, want it refused", err)
		}
	})
}

// TestMemoryErrorSaysItOnce: a gpu refusal becomes a 507 (api's sentinel)
// without saying "not enough memory" twice in the message a client gets;
// a device that is down keeps both parts, since each says something.
func TestMemoryErrorSaysItOnce(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want string
	}{
		{"no room", fmt.Errorf("%w: model needs 10 MiB + 500 MiB reserved; gpu 0 has 100 MiB free of 81559", gpu.ErrInsufficientMemory),
			"gpu: not enough memory: model needs 10 MiB + 500 MiB reserved; gpu 0 has 100 MiB free of 81559"},
		{"down", fmt.Errorf("%w: gpu 1 is down", gpu.ErrDeviceDown),
			"api: not enough memory: gpu: device down: gpu 1 is down"},
		{"already api", fmt.Errorf("%w: cpu", api.ErrInsufficientMemory), "api: not enough memory: cpu"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := memoryError(tt.err)
			if !errors.Is(err, api.ErrInsufficientMemory) || !errors.Is(err, tt.err) {
				t.Errorf("%v does not wrap both api.ErrInsufficientMemory and %v", err, tt.err)
			}
			if err.Error() != tt.want {
				t.Errorf("message %q, want %q", err.Error(), tt.want)
			}
		})
	}
	if memoryError(nil) != nil {
		t.Error("memoryError(nil) is not nil")
	}
}
