package worker

// Tests of GPUs at run time: NVML kept off the model's lock, a GPU that goes
// down and comes back, PID namespaces, worker child processes and MIG
// visibility.

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/gpu/gputest"
	"github.com/switchyard/switchyard/internal/testutil"
	"github.com/switchyard/switchyard/properties"
)

// within fails the test when done is not closed within waitLimit: the step
// it waits for never came.
func within(t *testing.T, what string, done <-chan struct{}) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(waitLimit):
		t.Fatalf("%s: not within %v", what, waitLimit)
	}
}

// TestNVMLOffTheModelLock blocks NVML while the scaler places a temporary
// worker; /ping's Health and Submit, which take the model's lock, must not
// wait for it.
func TestNVMLOffTheModelLock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lib := gputest.New(30000)
		var blocking atomic.Bool
		entered, release := make(chan struct{}), make(chan struct{})
		d := lib.Device(0)
		v2 := d.GetMemoryInfo_v2Func
		d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) {
			if blocking.CompareAndSwap(true, false) {
				close(entered)
				<-release
			}
			return v2()
		}
		reg := gpuRegistry(t, lib)
		reg.gpus.ttl = 0 // every read goes to NVML
		gpuModel(t, reg, "lazy", "gpu.minWorkers=0\ngpu.maxWorkers=1\n")
		if _, err := registerSync(t, reg, "lazy"); err != nil {
			t.Fatal(err)
		}
		blocking.Store(true)
		defer func() {
			if blocking.Load() {
				close(release)
			}
		}()
		tr := reg
		first := tr.submit(t, "lazy", newJob("one")) // no worker: the scaler places one
		within(t, "the scaler reading NVML", entered)

		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = reg.Health()
			_ = reg.Submit("lazy", newJob("two"))
		}()
		within(t, "Health and Submit while NVML blocks", done)
		close(release)
		if _, err := await(t, first); err != nil {
			t.Errorf("first job: %v", err)
		}
	})
}

// TestGPUDownAndBack: a GPU lost at run time takes its group out of the
// model's health (the others serve), and its worker comes back with it.
func TestGPUDownAndBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lib := gputest.New(30000, 30000)
		reg := gpuRegistry(t, lib)
		gpuModel(t, reg, "m", "gpu.minWorkers=1\ngpu.maxWorkers=1\n")
		rec, err := registerSync(t, reg, "m")
		if err != nil {
			t.Fatal(err)
		}
		lib.FailDevice(1, nvml.ERROR_GPU_IS_LOST)
		reg.world.runner(groupOf(t, rec, 1).Workers[0].PID).crash()
		tr := reg
		testutil.WaitFor(t, waitLimit, "gpu 1 down, model Healthy", func() bool {
			rec, _ := reg.Describe("m")
			g := groupOf(t, rec, 1)
			return rec.Status == api.StatusHealthy && strings.Contains(g.DeviceError, "ERROR_GPU_IS_LOST") && len(g.Workers) == 1 &&
				g.Workers[0].Status == workerBackoff
		})
		if _, err := tr.call(t, "m", newJob("x")); err != nil {
			t.Errorf("gpu 0 does not serve: %v", err)
		}
		lib.FailDevice(1, nvml.SUCCESS)
		testutil.WaitFor(t, waitLimit, "gpu 1 back with a READY worker", func() bool {
			rec, _ := reg.Describe("m")
			g := groupOf(t, rec, 1)
			return g.DeviceError == "" && countReady(g.Workers) == 1
		})
	})
}

// TestPIDNamespaceMismatch: NVML lists only PIDs that do not exist here, as
// in a container without the host's PID namespace; worker memory is unknown
// and the mismatch is logged once.
func TestPIDNamespaceMismatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lib := gputest.New(30000)
		core, logs := observer.New(zap.WarnLevel)
		reg := gpuRegistry(t, lib, func(c *Config) { c.Logger = zap.New(zapcore.NewTee(c.Logger.Core(), core)) })
		gpuModel(t, reg, "m", "gpu.minWorkers=1\ngpu.maxWorkers=1\n")
		if _, err := registerSync(t, reg, "m"); err != nil {
			t.Fatal(err)
		}
		lib.SetProcess(0, 1<<30, 900) // the worker, as the host numbers it
		for range 2 {
			rec, _ := reg.Describe("m")
			if w := groupOf(t, rec, 0).Workers[0]; w.GPUMemoryMiB != nil || !w.GPUMemoryUnknown {
				t.Errorf("worker %+v, want its GPU memory unknown", w)
			}
		}
		if n := logs.FilterMessageSnippet("PID namespace").Len(); n != 1 {
			t.Errorf("%d warnings about the PID namespace, want 1", n)
		}
	})
}

// TestChildProcessMemoryCounts: the GPU memory of a worker includes its
// children's and theirs, as the process tree shows them.
func TestChildProcessMemoryCounts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lib := gputest.New(30000)
		var kids sync.Map // pid -> []int
		reg := gpuRegistry(t, lib, func(c *Config) {
			c.ProcessTree = func() func(int) []int {
				return func(pid int) []int {
					v, _ := kids.Load(pid)
					ks, _ := v.([]int)
					return ks
				}
			}
		})
		gpuModel(t, reg, "kids", "gpu.minWorkers=1\ngpu.maxWorkers=1\n")
		rec, err := registerSync(t, reg, "kids")
		if err != nil {
			t.Fatal(err)
		}
		pid := groupOf(t, rec, 0).Workers[0].PID
		const child, grandchild = 1 << 23, 1<<23 + 1
		kids.Store(pid, []int{child})
		kids.Store(child, []int{grandchild})
		lib.SetProcess(0, pid, 500)
		lib.SetProcess(0, child, 300)
		lib.SetProcess(0, grandchild, 100)
		lib.SetProcess(0, 1<<23+2, 4000) // another process on the GPU
		rec, _ = reg.Describe("kids")
		if w := groupOf(t, rec, 0).Workers[0]; w.GPUMemoryMiB == nil || *w.GPUMemoryMiB != 900 {
			t.Errorf("worker %+v, want 900 MiB: its own 500, its child's 300 and its grandchild's 100", w)
		}
	})
}

// TestVisibilityMIGDevice: under CUDA_VISIBLE_DEVICES=MIG-<uuid> the server
// places on that MIG device only.
func TestVisibilityMIGDevice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lib := gputest.New(40960, 30000)
		lib.SetMIG(0, 10240, 10240)
		reg := gpuRegistry(t, lib, func(c *Config) { c.Env = properties.Env{"CUDA_VISIBLE_DEVICES": gputest.MIGUUID(0, 1)} })
		gpuModel(t, reg, "m", "gpu.minWorkers=2\ngpu.maxWorkers=2\ngpu.required_memory_mb=3000\n")
		rec, err := registerSync(t, reg, "m")
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.WorkerGroups) != 1 {
			t.Fatalf("groups %+v, want gpu 0 only", rec.WorkerGroups)
		}
		for _, w := range groupOf(t, rec, 0).Workers {
			if w.VisibleDevices != gputest.MIGUUID(0, 1) || reg.workerProc(t, w.PID).env["CUDA_VISIBLE_DEVICES"] != gputest.MIGUUID(0, 1) {
				t.Errorf("worker %+v not on %s", w, gputest.MIGUUID(0, 1))
			}
		}
	})
}
