package worker

import (
	"slices"
	"time"

	"github.com/switchyard/switchyard/api"
)

// Worker states shown in describe records and metrics.
const (
	workerStarting = "STARTING"
	workerReady    = "READY"
	workerBusy     = "BUSY"
	workerBackoff  = "BACKOFF"
	workerStopping = "STOPPING"
)

// group is a model's workers on one device. Its fields are guarded by the
// model's mutex.
type group struct {
	m        *Model
	device   api.Device
	min, max int
	workers  []*run
	down     string // why the last start found the group's GPU down; "" when it is up
}

// isGPU reports whether the group's workers run on a GPU.
func (g *group) isGPU() bool { return g.device.DeviceType == "gpu" }

func (g *group) minWorkers() int { return g.min }

// live counts workers that can take requests and are not on their way out.
func (g *group) live() int {
	n := 0
	for _, w := range g.workers {
		if w.serving() {
			n++
		}
	}
	return n
}

// active counts workers that are not stopping.
func (g *group) active() int {
	n := 0
	for _, w := range g.workers {
		if !w.stopping() {
			n++
		}
	}
	return n
}

// viewLocked is the group as a scaling plan sees it; the model's mutex is
// held.
func (g *group) viewLocked() groupView {
	gv := groupView{g: g, gpu: g.isGPU(), device: g.device.DeviceID, min: g.min, max: g.max}
	for _, w := range g.workers {
		gv.workers = append(gv.workers, w.view())
	}
	return gv
}

func (g *group) remove(w *run) {
	g.workers = slices.DeleteFunc(g.workers, func(x *run) bool { return x == w })
}

// record builds the group's part of a describe record. A GPU that is down
// shows why: as the figures have it, else as the last start found it.
func (g *group) record(f figures) api.WorkerGroup {
	g.m.mu.Lock()
	min, max, down := g.min, g.max, g.down
	workers := append([]*run(nil), g.workers...)
	g.m.mu.Unlock()
	rec := api.WorkerGroup{Device: g.device, MinWorkers: min, MaxWorkers: max, Workers: []api.WorkerRecord{}}
	if g.isGPU() {
		rec.DeviceError = f.deviceError(g.device.DeviceID)
		if rec.DeviceError == "" {
			rec.DeviceError = down
		}
	}
	for _, w := range workers {
		rec.Workers = append(rec.Workers, w.record(f))
	}
	return rec
}

// record describes one worker. Its /proc and NVML figures are read with no
// lock held.
func (w *run) record(f figures) api.WorkerRecord {
	w.mu.Lock()
	rec := api.WorkerRecord{ID: w.id, Status: w.state, Temporary: w.temporary, StartTime: recordTime(w.began)}
	proc, unit := w.proc, w.unit
	w.mu.Unlock()
	if proc == nil {
		return rec
	}
	pid := proc.PID()
	rec.PID, rec.Socket, rec.StartTime = pid, proc.Socket(), recordTime(proc.Started())
	rec.RSSMiB = f.rss(pid)
	if f.gpu && w.g.isGPU() {
		rec.VisibleDevices = unit
		if mib, ok := f.workerMemory(unit, f.tree.of(pid)); ok {
			rec.GPUMemoryMiB = &mib
		} else {
			rec.GPUMemoryUnknown = true
		}
	}
	return rec
}

// recordTime is a time as describe records show it: UTC, to the millisecond.
func recordTime(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }
