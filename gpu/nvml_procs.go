package gpu

import (
	"math"
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// listings returns device i's process listings: one for the GPU, or one per
// MIG device when the GPU is in MIG mode (the GPU's own listing needs
// privileges there, and it would not say which slice a process is on).
func (g *nvmlInfo) listings(i int) []Listing {
	h, ret := g.lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return []Listing{{DeviceIndex: i, Err: callError("DeviceGetHandleByIndex", ret).Error()}}
	}
	uuid, ret := h.GetUUID()
	if ret != nvml.SUCCESS {
		return []Listing{{DeviceIndex: i, Err: callError("GetUUID", ret).Error()}}
	}
	mig, err := migEnabled(h)
	if err != nil {
		return []Listing{{DeviceIndex: i, UUID: uuid, Err: err.Error()}}
	}
	if !mig {
		return []Listing{listing(i, uuid, h)}
	}
	return migListings(i, uuid, h)
}

// migListings lists the processes of each MIG device of a GPU.
func migListings(i int, uuid string, h nvml.Device) []Listing {
	handles, err := migHandles(h)
	if err != nil {
		return []Listing{{DeviceIndex: i, UUID: uuid, Err: err.Error()}}
	}
	out := make([]Listing, 0, len(handles))
	for _, mh := range handles {
		migUUID, ret := mh.h.GetUUID()
		if ret != nvml.SUCCESS {
			out = append(out, Listing{DeviceIndex: i, Err: callError("GetUUID", ret).Error()})
			continue
		}
		out = append(out, listing(i, migUUID, mh.h))
	}
	return out
}

// listing lists the compute and graphics processes of one GPU or MIG
// device. A process in both lists is counted once, with the larger figure;
// entries of one list with the same PID are added up. A compute listing
// that fails, NOT_SUPPORTED included, makes the listing fail: what the
// processes hold is then unknown, not nothing. Graphics listings are
// optional (compute GPUs may not support them).
func listing(i int, uuid string, h nvml.Device) Listing {
	l := Listing{DeviceIndex: i, UUID: uuid, Processes: []ProcessMemory{}}
	compute, ret := h.GetComputeRunningProcesses()
	if ret != nvml.SUCCESS {
		l.Err = callError("GetComputeRunningProcesses", ret).Error()
		return l
	}
	graphics, ret := h.GetGraphicsRunningProcesses()
	if ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_SUPPORTED {
		l.Err = callError("GetGraphicsRunningProcesses", ret).Error()
		return l
	}
	used := sumByPID(compute)
	for pid, g := range sumByPID(graphics) {
		if c, ok := used[pid]; !ok || g.Unknown || !c.Unknown && g.UsedMiB > c.UsedMiB {
			used[pid] = g
		}
	}
	l.Processes = sortedProcesses(used)
	return l
}

// sumByPID adds up the memory of each PID in one NVML process list. A PID
// with an entry NVML could not measure is Unknown.
func sumByPID(list []nvml.ProcessInfo) map[int]ProcessMemory {
	used := make(map[int]ProcessMemory, len(list))
	for _, p := range list {
		pm := used[int(p.Pid)]
		pm.PID = int(p.Pid)
		if p.UsedGpuMemory == math.MaxUint64 { // NVML_VALUE_NOT_AVAILABLE
			pm.Unknown = true
		} else {
			pm.UsedMiB += toMiB(p.UsedGpuMemory)
		}
		used[pm.PID] = pm
	}
	for pid, pm := range used {
		if pm.Unknown {
			used[pid] = ProcessMemory{PID: pid, Unknown: true}
		}
	}
	return used
}

// sortedProcesses returns the figures ordered by PID.
func sortedProcesses(used map[int]ProcessMemory) []ProcessMemory {
	out := make([]ProcessMemory, 0, len(used))
	for _, pm := range used {
		out = append(out, pm)
	}
	slices.SortFunc(out, func(a, b ProcessMemory) int { return a.PID - b.PID })
	return out
}
