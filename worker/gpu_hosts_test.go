package worker

// Acceptance tests of issue 16 (GPUs as real hosts have them) on go-nvml's
// mock DGX A100, on fake workers in virtual time.

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/gpu/gputest"
	"github.com/switchyard/switchyard/properties"
)

// eightGPUs returns a fake DGX with eight GPUs of 30000 MiB free each.
func eightGPUs() *gputest.Server {
	return gputest.New(30000, 30000, 30000, 30000, 30000, 30000, 30000, 30000)
}

// workerProc is what a worker process is started with: its command line's
// --device-id and its CUDA_VISIBLE_DEVICES, from the spec of a fake worker.
type workerProc struct {
	args []string
	env  map[string]string
}

// workerProc returns what the fake worker pid was started with.
func (r *testRegistry) workerProc(t *testing.T, pid int) workerProc {
	t.Helper()
	for _, s := range r.world.startsOf("") {
		if s.pid == pid {
			return workerProc{
				args: []string{"--device-id", strconv.Itoa(s.spec.DeviceID)},
				env:  map[string]string{"CUDA_VISIBLE_DEVICES": s.spec.VisibleDevices},
			}
		}
	}
	t.Fatalf("no worker %d", pid)
	return workerProc{}
}

// flag returns the value after name in args.
func (wp workerProc) flag(name string) string {
	for i, a := range wp.args {
		if a == name && i+1 < len(wp.args) {
			return wp.args[i+1]
		}
	}
	return ""
}

// groupOf returns the describe record's group on GPU id.
func groupOf(t *testing.T, rec api.ModelRecord, id int) api.WorkerGroup {
	t.Helper()
	for _, g := range rec.WorkerGroups {
		if g.Device == (api.Device{DeviceType: "gpu", DeviceID: id}) {
			return g
		}
	}
	t.Fatalf("no group on gpu %d in %+v", id, rec.WorkerGroups)
	return api.WorkerGroup{}
}

// gatherGauges returns the samples of one metric family by label set
// ("device=gpu3,...", labels in the order Prometheus sorts them).
func gatherGauges(t *testing.T, reg *prometheus.Registry, name string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+l.GetValue())
			}
			out[strings.Join(labels, ",")] = m.GetGauge().GetValue()
		}
	}
	return out
}

// TestGPUHostLostDevice: of eight devices, device 5 lost its memory queries
// and device 3's handle is refused; the registry starts, places on device
// 0, and reports 5 and 3 down.
func TestGPUHostLostDevice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lib := eightGPUs()
		lib.FailDevice(5, nvml.ERROR_GPU_IS_LOST) // GetMemoryInfo (and _v2) answer it
		lib.FailHandle(3, nvml.ERROR_NO_PERMISSION)
		metrics := prometheus.NewRegistry()
		reg := gpuRegistry(t, lib, func(c *Config) { c.Registerer = metrics })

		gpuModel(t, reg, "pinned", "load_on_devices=0;3;5\ngpu.minWorkers=1\ngpu.maxWorkers=1\n")
		rec, err := registerSync(t, reg, "pinned")
		if err != nil {
			t.Fatalf("register: %v", err)
		}
		if rec.Status != api.StatusHealthy {
			t.Errorf("status %s, want Healthy: devices 3 and 5 are down, device 0 serves", rec.Status)
		}
		g0 := groupOf(t, rec, 0)
		if len(g0.Workers) != 1 || g0.Workers[0].Status != workerReady || g0.DeviceError != "" {
			t.Errorf("group on gpu 0 = %+v, want one READY worker", g0)
		}
		if wp := reg.workerProc(t, g0.Workers[0].PID); wp.env["CUDA_VISIBLE_DEVICES"] != gputest.UUID(0) {
			t.Errorf("worker on gpu 0 has CUDA_VISIBLE_DEVICES=%q, want %s", wp.env["CUDA_VISIBLE_DEVICES"], gputest.UUID(0))
		}
		for id, want := range map[int]string{3: "ERROR_NO_PERMISSION", 5: "ERROR_GPU_IS_LOST"} {
			g := groupOf(t, rec, id)
			if !strings.Contains(g.DeviceError, want) || countReady(g.Workers) != 0 {
				t.Errorf("group on gpu %d = %+v, want it down with %s", id, g, want)
			}
		}

		// A model on every device is placed on device 0: the lowest index of
		// those that are up, all having the same room.
		gpuModel(t, reg, "any", "gpu.minWorkers=0\ngpu.maxWorkers=1\n")
		if _, err := registerSync(t, reg, "any"); err != nil {
			t.Fatalf("register any: %v", err)
		}
		tr := reg
		resp, err := tr.call(t, "any", newJob("x"))
		if err != nil {
			t.Fatalf("call: %v", err)
		}
		if pid := pidOf(t, resp); reg.workerProc(t, pid).env["CUDA_VISIBLE_DEVICES"] != gputest.UUID(0) {
			t.Errorf("temporary worker not placed on gpu 0")
		}

		up := gatherGauges(t, metrics, "switchyard_gpu_up")
		for i := range 8 {
			want := 1.0
			if i == 3 || i == 5 {
				want = 0
			}
			if got, ok := up["device=gpu"+strconv.Itoa(i)]; !ok || got != want {
				t.Errorf("switchyard_gpu_up{device=gpu%d} = %v (present %v), want %v", i, got, ok, want)
			}
		}
	})
}

func countReady(ws []api.WorkerRecord) int {
	return count(ws, workerReady, nil) + count(ws, workerBusy, nil)
}

// TestGPUHostMIG: device 0 is in MIG mode with two 10 GiB slices and its
// own memory and process queries answer NO_PERMISSION. Start-up works, a
// 20000 MB model gets 507, a 5000 MB worker runs on a slice.
func TestGPUHostMIG(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lib := gputest.New(40960)
		lib.SetMIG(0, 10240, 10240)
		reg := gpuRegistry(t, lib)

		gpuModel(t, reg, "big", "gpu.required_memory_mb=20000\n")
		if _, err := registerSync(t, reg, "big"); !errors.Is(err, api.ErrInsufficientMemory) {
			t.Fatalf("register big = %v, want 507", err)
		}
		gpuModel(t, reg, "small", "gpu.required_memory_mb=5000\ngpu.minWorkers=1\ngpu.maxWorkers=1\n")
		rec, err := registerSync(t, reg, "small")
		if err != nil {
			t.Fatalf("register small: %v", err)
		}
		w := groupOf(t, rec, 0).Workers
		if len(w) != 1 {
			t.Fatalf("workers %+v, want one", w)
		}
		wp := reg.workerProc(t, w[0].PID)
		if cvd := wp.env["CUDA_VISIBLE_DEVICES"]; cvd != gputest.MIGUUID(0, 0) && cvd != gputest.MIGUUID(0, 1) {
			t.Errorf("CUDA_VISIBLE_DEVICES=%q, want a MIG device of gpu 0", cvd)
		}
		if got := wp.flag("--device-id"); got != "0" {
			t.Errorf("--device-id %q, want 0", got)
		}
	})
}

// TestGPUHostStartRace: free memory drops by 10000 MiB for each worker that
// has loaded, from 30000; of gpu.minWorkers=3 at 10000 MB each, two start
// and the third is refused with 507.
func TestGPUHostStartRace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lib := gputest.New(30000)
		var loaded atomic.Int32
		reg := gpuRegistry(t, lib)
		reg.world.set("race", func(s *fakeScript) {
			s.onLoad = func() { loaded.Add(1); lib.AddFree(0, -10000) }
		})
		dir := gpuModel(t, reg, "race", "gpu.minWorkers=3\ngpu.maxWorkers=3\ngpu.required_memory_mb=10000\n")
		if err := reg.LoadStartup([]properties.ModelRef{{Name: "race", Path: dir}}); err != nil {
			t.Fatal(err)
		}
		m, err := reg.lookup("race")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
		defer cancel()
		err = m.waitSettled(ctx)
		if !errors.Is(err, api.ErrModelFailed) {
			t.Fatalf("load = %v, want FAILED", err)
		}
		rec, _ := reg.Describe("race")
		if !strings.Contains(rec.LastError, "not enough memory") {
			t.Errorf("lastError %q, want the 507 of the third worker", rec.LastError)
		}
		if n := loaded.Load(); n != 2 {
			t.Errorf("%d workers loaded, want 2", n)
		}
	})
}

// TestGPUHostUnknownMemory: device 0's process listing fails and device 1
// reports its worker's memory as NVML_VALUE_NOT_AVAILABLE; both workers
// show null in describe and have no metric sample, while device 2's worker
// shows its figure.
func TestGPUHostUnknownMemory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lib := gputest.New(30000, 30000, 30000)
		metrics := prometheus.NewRegistry()
		reg := gpuRegistry(t, lib, func(c *Config) { c.Registerer = metrics })
		gpuModel(t, reg, "m", "gpu.minWorkers=1\ngpu.maxWorkers=1\n")
		rec, err := registerSync(t, reg, "m")
		if err != nil {
			t.Fatal(err)
		}
		lib.FailProcesses(0, nvml.ERROR_NO_PERMISSION)
		lib.SetProcess(1, groupOf(t, rec, 1).Workers[0].PID, gputest.Unknown)
		lib.SetProcess(2, groupOf(t, rec, 2).Workers[0].PID, 700)

		rec, _ = reg.Describe("m")
		for id := range 2 {
			if w := groupOf(t, rec, id).Workers[0]; w.GPUMemoryMiB != nil {
				t.Errorf("gpu %d worker gpuMemoryMiB = %d, want null (unknown)", id, *w.GPUMemoryMiB)
			}
		}
		if w := groupOf(t, rec, 2).Workers[0]; w.GPUMemoryMiB == nil || *w.GPUMemoryMiB != 700 {
			t.Errorf("gpu 2 worker = %+v, want gpuMemoryMiB 700", w)
		}
		samples := gatherGauges(t, metrics, "switchyard_worker_gpu_memory_bytes")
		if len(samples) != 1 || samples["device=gpu2,model=m,worker="+strconv.Itoa(groupOf(t, rec, 2).Workers[0].ID)] != 700*mib {
			t.Errorf("switchyard_worker_gpu_memory_bytes = %v, want one sample of 700 MiB on gpu2", samples)
		}
	})
}

// TestGPUHostVisibility: the server runs under CUDA_VISIBLE_DEVICES=2,3 on
// eight devices; groups are built on 2 and 3 only, and their workers get
// their device's UUID and --device-id 0.
func TestGPUHostVisibility(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		reg := gpuRegistry(t, eightGPUs(), func(c *Config) { c.Env = properties.Env{"CUDA_VISIBLE_DEVICES": "2,3"} })
		gpuModel(t, reg, "v", "gpu.minWorkers=1\ngpu.maxWorkers=1\n")
		rec, err := registerSync(t, reg, "v")
		if err != nil {
			t.Fatal(err)
		}
		if len(rec.WorkerGroups) != 2 {
			t.Fatalf("groups %+v, want gpu 2 and gpu 3", rec.WorkerGroups)
		}
		for _, id := range []int{2, 3} {
			w := groupOf(t, rec, id).Workers
			if len(w) != 1 {
				t.Fatalf("gpu %d workers %+v", id, w)
			}
			wp := reg.workerProc(t, w[0].PID)
			if wp.env["CUDA_VISIBLE_DEVICES"] != gputest.UUID(id) || wp.flag("--device-id") != "0" {
				t.Errorf("gpu %d worker: CUDA_VISIBLE_DEVICES=%q --device-id %q, want %s and 0",
					id, wp.env["CUDA_VISIBLE_DEVICES"], wp.flag("--device-id"), gputest.UUID(id))
			}
		}
		gpuModel(t, reg, "hidden", "load_on_devices=5\n")
		if _, err := registerSync(t, reg, "hidden"); !errors.Is(err, api.ErrBadRequest) {
			t.Errorf("register on hidden gpu 5 = %v, want 400", err)
		}
	})
}
