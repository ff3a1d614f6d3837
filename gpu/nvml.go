package gpu

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"
)

// nvmlInfo is the Info of a host with a working NVML library.
type nvmlInfo struct {
	lib    nvml.Interface
	mu     sync.RWMutex // held for reading by queries, for writing by Close
	closed bool
}

// NewNVML initialises lib and returns an Info over it. Each successful Init is
// paired with exactly one Shutdown: by Close, or before NewNVML returns an
// error. It logs one Info-level line with the device count and the driver
// version. A nil log discards log lines.
func NewNVML(lib nvml.Interface, log *zap.Logger) (Info, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, nvmlError("Init", ret)
	}
	count, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, errors.Join(nvmlError("DeviceGetCount", ret), shutdown(lib))
	}
	driver, _ := lib.SystemGetDriverVersion()
	orNop(log).Info("gpu: NVML ready", zap.Int("devices", count), zap.String("driver", driver))
	return &nvmlInfo{lib: lib}, nil
}

// Devices implements Info.
func (g *nvmlInfo) Devices() ([]Device, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	handles, err := g.handles()
	if err != nil {
		return nil, err
	}
	devs := make([]Device, 0, len(handles))
	for i, h := range handles {
		d, err := describe(i, h)
		if err != nil {
			return nil, err
		}
		devs = append(devs, d)
	}
	return devs, nil
}

// Processes implements Info.
func (g *nvmlInfo) Processes() ([]ProcessMemory, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	handles, err := g.handles()
	if err != nil {
		return nil, err
	}
	var out []ProcessMemory
	for i, h := range handles {
		procs, err := deviceProcesses(i, h)
		if err != nil {
			return nil, err
		}
		out = append(out, procs...)
	}
	return out, nil
}

// Close implements Info: it shuts NVML down once.
func (g *nvmlInfo) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	return shutdown(g.lib)
}

// handles returns one handle per device, in NVML index order. The caller
// holds g.mu.
func (g *nvmlInfo) handles() ([]nvml.Device, error) {
	if g.closed {
		return nil, ErrClosed
	}
	count, ret := g.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, nvmlError("DeviceGetCount", ret)
	}
	handles := make([]nvml.Device, count)
	for i := range handles {
		if handles[i], ret = g.lib.DeviceGetHandleByIndex(i); ret != nvml.SUCCESS {
			return nil, nvmlError(fmt.Sprintf("gpu %d: DeviceGetHandleByIndex", i), ret)
		}
	}
	return handles, nil
}

// describe reads one device's identity, memory and utilisation.
func describe(index int, h nvml.Device) (Device, error) {
	d := Device{Index: index}
	var ret nvml.Return
	if d.UUID, ret = h.GetUUID(); ret != nvml.SUCCESS {
		return Device{}, deviceError(index, "GetUUID", ret)
	}
	if d.Name, ret = h.GetName(); ret != nvml.SUCCESS {
		return Device{}, deviceError(index, "GetName", ret)
	}
	mem, ret := h.GetMemoryInfo()
	if ret != nvml.SUCCESS {
		return Device{}, deviceError(index, "GetMemoryInfo", ret)
	}
	d.TotalMiB, d.UsedMiB, d.FreeMiB = toMiB(mem.Total), toMiB(mem.Used), toMiB(mem.Free)
	util, ret := h.GetUtilizationRates()
	if err := optional(index, "GetUtilizationRates", ret); err != nil {
		return Device{}, err
	}
	d.UtilizationPercent = util.Gpu
	return d, nil
}

// deviceProcesses lists the compute and graphics processes of one device. A
// process in both lists is counted once, with the larger figure; entries of
// one list with the same PID (one per MIG instance) are added up.
func deviceProcesses(index int, h nvml.Device) ([]ProcessMemory, error) {
	compute, ret := h.GetComputeRunningProcesses()
	if err := optional(index, "GetComputeRunningProcesses", ret); err != nil {
		return nil, err
	}
	graphics, ret := h.GetGraphicsRunningProcesses()
	if err := optional(index, "GetGraphicsRunningProcesses", ret); err != nil {
		return nil, err
	}
	used := sumByPID(compute)
	for pid, mib := range sumByPID(graphics) {
		used[pid] = max(used[pid], mib)
	}
	return sortedProcesses(index, used), nil
}

// sumByPID adds up the memory of each PID in one NVML process list.
func sumByPID(list []nvml.ProcessInfo) map[int]uint64 {
	used := make(map[int]uint64, len(list))
	for _, p := range list {
		used[int(p.Pid)] += processMiB(p.UsedGpuMemory)
	}
	return used
}

// sortedProcesses turns a PID-to-MiB map into records ordered by PID.
func sortedProcesses(index int, used map[int]uint64) []ProcessMemory {
	out := make([]ProcessMemory, 0, len(used))
	for pid, mib := range used {
		out = append(out, ProcessMemory{PID: pid, DeviceIndex: index, UsedMiB: mib})
	}
	slices.SortFunc(out, func(a, b ProcessMemory) int { return a.PID - b.PID })
	return out
}

// processMiB converts a process's memory in bytes to MiB. NVML reports
// NVML_VALUE_NOT_AVAILABLE (all bits set) when it cannot tell, for instance
// inside some containers; that counts as 0.
func processMiB(bytes uint64) uint64 {
	if bytes == math.MaxUint64 {
		return 0
	}
	return toMiB(bytes)
}

func toMiB(bytes uint64) uint64 { return bytes >> 20 }

// optional accepts NOT_SUPPORTED as "nothing to report" (the zero value) and
// turns every other failure into an error.
func optional(index int, op string, ret nvml.Return) error {
	if ret == nvml.SUCCESS || ret == nvml.ERROR_NOT_SUPPORTED {
		return nil
	}
	return deviceError(index, op, ret)
}

func shutdown(lib nvml.Interface) error {
	if ret := lib.Shutdown(); ret != nvml.SUCCESS {
		return nvmlError("Shutdown", ret)
	}
	return nil
}

func deviceError(index int, op string, ret nvml.Return) error {
	return nvmlError(fmt.Sprintf("gpu %d: %s", index, op), ret)
}

func nvmlError(op string, ret nvml.Return) error {
	return fmt.Errorf("%w: %s: %w", ErrNVML, op, ret)
}
