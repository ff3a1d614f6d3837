package worker

// Tests of GPU worker groups, memory checks and placement (issue 5) on
// go-nvml's mock DGX A100 with chosen free memory per device, run on fake
// workers in virtual time. What the registry asks of a GPU worker is in the
// spec it starts it with (--device-id, CUDA_VISIBLE_DEVICES); package
// process's tests check that a spec becomes that command line and
// environment.

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/gpu"
	"github.com/switchyard/switchyard/gpu/gputest"
	"github.com/switchyard/switchyard/message"
)

// gpuRegistry returns a registry on fake workers whose GPUs are the fake
// lib's; it must run in a synctest bubble (gpuTest). change adjusts its
// configuration before it is built.
func gpuRegistry(t *testing.T, lib *gputest.Server, change ...func(*Config)) *testRegistry {
	t.Helper()
	info, err := gpu.NewNVML(lib, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = info.Close() })
	reg, _ := newSimRegistry(t, append([]func(*Config){func(c *Config) { c.GPU = info }}, change...)...)
	return reg
}

// gpuModel writes a model folder with the given serving.properties.
func gpuModel(t *testing.T, reg *testRegistry, name, props string) string {
	t.Helper()
	dir := filepath.Join(reg.cfg.Server.ModelStore, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "serving.properties"), []byte(props), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func registerSync(t *testing.T, reg *testRegistry, name string) (api.ModelRecord, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return reg.Register(ctx, api.RegisterRequest{URL: name, ModelName: name, Synchronous: true})
}

func TestGPUGroupPerDevice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lib := gputest.New(30000, 30000, 30000)
		reg := gpuRegistry(t, lib)
		gpuModel(t, reg, "two", "load_on_devices=0;1\ngpu.minWorkers=1\ngpu.maxWorkers=2\n")
		rec, err := registerSync(t, reg, "two")
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.WorkerGroups) != 2 {
			t.Fatalf("groups = %+v, want one per device 0 and 1", rec.WorkerGroups)
		}
		for i, g := range rec.WorkerGroups {
			if g.Device != (api.Device{DeviceType: "gpu", DeviceID: i}) || g.MinWorkers != 1 || g.MaxWorkers != 2 || len(g.Workers) != 1 {
				t.Errorf("group %d = %+v", i, g)
			}
		}
		// The fake says how much GPU memory each worker process holds.
		for i, g := range rec.WorkerGroups {
			lib.SetProcess(i, g.Workers[0].PID, uint64(800+i))
		}
		rec, _ = reg.Describe("two")
		for i, g := range rec.WorkerGroups {
			w := g.Workers[0]
			if w.GPUMemoryMiB == nil || *w.GPUMemoryMiB != int64(800+i) || w.RSSMiB <= 0 || w.Status != workerReady {
				t.Errorf("group %d worker = %+v, want gpuMemoryMiB %d and an RSS", i, w, 800+i)
			}
		}
	})
}

func TestGPUWorkerEnvironment(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := gpuRegistry(t, gputest.New(30000, 30000))
		gpuModel(t, reg, "one", "load_on_devices=1\ngpu.minWorkers=1\n")
		if _, err := registerSync(t, reg, "one"); err != nil {
			t.Fatal(err)
		}
		j := batching.NewJob("r1", message.Input{Content: []message.Item{{Key: "data", Value: []byte("x")}}}, time.Now(), time.Time{})
		if err := reg.Submit("one", j); err != nil {
			t.Fatal(err)
		}
		resp, err := j.Wait(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The worker sees only gpu 1, pinned by its UUID, as its device 0.
		wp := reg.workerProc(t, pidOf(t, resp))
		if wp.env["CUDA_VISIBLE_DEVICES"] != gputest.UUID(1) || wp.flag("--device-id") != "0" {
			t.Errorf("worker env CUDA_VISIBLE_DEVICES=%q, --device-id %q; want %s and 0",
				wp.env["CUDA_VISIBLE_DEVICES"], wp.flag("--device-id"), gputest.UUID(1))
		}
	})
}

func TestGPUNoDeviceFits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := gpuRegistry(t, gputest.New(1200, 900))
		gpuModel(t, reg, "big", "gpu.required_memory_mb=8000\n")
		_, err := registerSync(t, reg, "big")
		if !errors.Is(err, api.ErrInsufficientMemory) {
			t.Fatalf("register = %v, want ErrInsufficientMemory (507)", err)
		}
		for _, want := range []string{"8000 MiB", "gpu 0 has 1200 MiB free"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not name %q", err, want)
			}
		}
		if _, err := reg.Describe("big"); !errors.Is(err, api.ErrModelNotFound) {
			t.Errorf("a refused model stays registered: %v", err)
		}
	})
}

// TestGPUPlacementPicksRoom scales a model from zero: its first worker goes
// to the allowed device where it fits.
func TestGPUPlacementPicksRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := gpuRegistry(t, gputest.New(1000, 30000, 20000))
		gpuModel(t, reg, "lazy", "gpu.minWorkers=0\ngpu.maxWorkers=1\ngpu.required_memory_mb=2000\nload_on_devices=0;2\n")
		if _, err := registerSync(t, reg, "lazy"); err != nil {
			t.Fatal(err)
		}
		j := batching.NewJob("r1", message.Input{Content: []message.Item{{Key: "data", Value: []byte("x")}}}, time.Now(), time.Time{})
		if err := reg.Submit("lazy", j); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		resp, err := j.Wait(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if got := reg.workerProc(t, pidOf(t, resp)).env["CUDA_VISIBLE_DEVICES"]; got != gputest.UUID(2) {
			t.Errorf("worker on %q, want gpu 2 (%s): device 0 lacks room and device 1 is not allowed", got, gputest.UUID(2))
		}
	})
}

func TestWorkerEnv(t *testing.T) {
	if got := workerEnv(); !slices.Equal(got, []string{"PYTHONUNBUFFERED=1"}) {
		t.Errorf("worker env = %v", got)
	}
}
