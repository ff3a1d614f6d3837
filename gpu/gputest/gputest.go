package gputest

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

// TotalMiB is the memory of each fake GPU unless a larger free figure is
// asked for: 40 GiB, as on the A100-SXM4-40GB the mock imitates.
const TotalMiB = 40960

// MaxDevices is the most GPUs a Server can have, as many as a DGX A100.
const MaxDevices = 8

// Unknown, given to SetProcess as the memory figure, makes NVML report
// NVML_VALUE_NOT_AVAILABLE for the process, as it does when it cannot tell.
const Unknown = math.MaxUint64

// Server is a fake NVML library. It implements nvml.Interface through the
// embedded dgxa100 server; only the first len(freeMiB) entries of its
// Devices array are set, each a *dgxa100.Device whose functions a test may
// override further before the library is in use. The setters are safe to
// call while the library is in use.
type Server struct {
	*dgxa100.Server

	mu    sync.Mutex
	state []deviceState // one per device, guarded by mu
}

// deviceState holds the figures a test chose for one device, in MiB.
type deviceState struct {
	total, free, reserved uint64
	util                  uint32
	procs                 map[int]uint64 // PID to MiB
	listErr               nvml.Return    // what the process listings answer
	handleErr             nvml.Return    // what DeviceGetHandleByIndex answers
	fail                  nvml.Return    // what memory, utilisation and process queries answer
	slices                []*sliceState  // MIG devices; nil when MIG is off
}

// sliceState is one MIG device of a fake GPU in MIG mode.
type sliceState struct {
	handle      *mock.Device
	total, free uint64
	procs       map[int]uint64
}

// New returns a fake NVML library with one GPU per figure in freeMiB, each
// with that much free memory out of TotalMiB (or out of the figure itself
// when it is larger). With no figures the library initialises and reports no
// GPU. Device i has the UUID UUID(i) and the PCI bus id PCIBusID(i). New
// panics for more than MaxDevices figures.
func New(freeMiB ...uint64) *Server {
	if len(freeMiB) > MaxDevices {
		panic(fmt.Sprintf("gputest: %d devices asked for, at most %d", len(freeMiB), MaxDevices))
	}
	s := &Server{Server: dgxa100.New()}
	s.Devices = [MaxDevices]nvml.Device{}
	for i, free := range freeMiB {
		s.state = append(s.state, deviceState{total: max(TotalMiB, free), free: free, procs: map[int]uint64{}})
		s.Devices[i] = s.newDevice(i)
	}
	s.setServerFuncs()
	return s
}

// UUID returns the UUID of fake device i.
func UUID(i int) string {
	return fmt.Sprintf("GPU-00000000-0000-4000-8000-%012d", i)
}

// MIGUUID returns the UUID of MIG device j of fake device i.
func MIGUUID(i, j int) string {
	return fmt.Sprintf("MIG-00000000-0000-4000-%04d-%012d", j, i)
}

// PCIBusID returns the PCI bus id of fake device i.
func PCIBusID(i int) string {
	return fmt.Sprintf("00000000:%02X:00.0", 0x10+i)
}

// SetFree sets device i's free memory in MiB; used memory is the rest of its
// total.
func (s *Server) SetFree(i int, freeMiB uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[i].free = freeMiB
	s.state[i].total = max(s.state[i].total, freeMiB)
}

// AddFree adds deltaMiB (which may be negative) to device i's free memory,
// never going below 0.
func (s *Server) AddFree(i int, deltaMiB int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := &s.state[i]
	st.free = uint64(max(int64(st.free)+deltaMiB, 0))
	st.total = max(st.total, st.free)
}

// SetReserved sets the memory the driver keeps for itself on device i, in
// MiB, out of the device's used memory. GetMemoryInfo_v2 reports it apart;
// GetMemoryInfo, like real drivers, counts it as used.
func (s *Server) SetReserved(i int, reservedMiB uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[i].reserved = reservedMiB
}

// SetUtilization sets device i's GPU utilisation in percent.
func (s *Server) SetUtilization(i int, percent uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[i].util = percent
}

// SetProcess makes pid a compute process on device i that holds usedMiB
// (Unknown for NVML_VALUE_NOT_AVAILABLE). It does not change the device's
// free memory.
func (s *Server) SetProcess(i, pid int, usedMiB uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[i].procs[pid] = usedMiB
}

// RemoveProcess removes pid from device i's processes.
func (s *Server) RemoveProcess(i, pid int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.state[i].procs, pid)
}

// FailProcesses makes device i's process listings answer ret (SUCCESS
// restores them).
func (s *Server) FailProcesses(i int, ret nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[i].listErr = ret
}

// FailHandle makes DeviceGetHandleByIndex(i) answer ret, as it does for a
// device a container's cgroup does not let it open (SUCCESS restores it).
// DeviceGetCount still counts the device.
func (s *Server) FailHandle(i int, ret nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[i].handleErr = ret
}

// FailDevice makes device i's memory, utilisation and process queries
// answer ret, as ERROR_GPU_IS_LOST does for a GPU that fell off the bus
// (SUCCESS restores them).
func (s *Server) FailDevice(i int, ret nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[i].fail = ret
}

// Device returns fake device i, to override more of its functions.
func (s *Server) Device(i int) *dgxa100.Device {
	return s.Devices[i].(*dgxa100.Device)
}

// InitCount returns how many times Init was called.
func (s *Server) InitCount() int { return len(s.InitCalls()) }

// ShutdownCount returns how many times Shutdown was called.
func (s *Server) ShutdownCount() int { return len(s.ShutdownCalls()) }

// setServerFuncs limits the server's device lookups to the devices in use.
func (s *Server) setServerFuncs() {
	n := len(s.state)
	s.DeviceGetCountFunc = func() (int, nvml.Return) { return n, nvml.SUCCESS }
	s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i < 0 || i >= n {
			return nil, nvml.ERROR_INVALID_ARGUMENT
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		if ret := s.state[i].handleErr; ret != nvml.SUCCESS {
			return nil, ret
		}
		return s.Devices[i], nvml.SUCCESS
	}
	s.DeviceGetHandleByUUIDFunc = func(uuid string) (nvml.Device, nvml.Return) {
		for i := range n {
			if s.Device(i).UUID == uuid {
				return s.Devices[i], nvml.SUCCESS
			}
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	s.DeviceGetHandleByPciBusIdFunc = func(string) (nvml.Device, nvml.Return) {
		return nil, nvml.ERROR_NOT_SUPPORTED
	}
}

// newDevice returns mock device i with its figures read from s.state[i].
func (s *Server) newDevice(i int) *dgxa100.Device {
	d := dgxa100.NewDevice(i)
	d.UUID, d.PciBusID = UUID(i), PCIBusID(i)
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return s.memory(i) }
	d.GetMemoryInfo_v2Func = func() (nvml.Memory_v2, nvml.Return) { return s.memoryV2(i) }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) { return s.utilization(i) }
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return s.processes(i) }
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) { return pciInfo(d.PciBusID), nvml.SUCCESS }
	d.GetMigModeFunc = func() (int, int, nvml.Return) { return s.migMode(i) }
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) { return s.migCount(i) }
	d.GetMigDeviceHandleByIndexFunc = func(j int) (nvml.Device, nvml.Return) { return s.migHandle(i, j) }
	return d
}

// pciInfo returns a PciInfo whose BusId is busID, NUL-terminated as NVML
// writes it.
func pciInfo(busID string) nvml.PciInfo {
	var p nvml.PciInfo
	copy(p.BusId[:len(p.BusId)-1], busID)
	return p
}

// memory returns device i's memory in bytes, with reserved memory counted as
// used, as GetMemoryInfo does.
func (s *Server) memory(i int) (nvml.Memory, nvml.Return) {
	st, ret := s.memoryState(i)
	if ret != nvml.SUCCESS {
		return nvml.Memory{}, ret
	}
	return nvml.Memory{Total: st.total << 20, Free: st.free << 20, Used: (st.total - st.free) << 20}, nvml.SUCCESS
}

// memoryV2 returns device i's memory in bytes as GetMemoryInfo_v2 does.
func (s *Server) memoryV2(i int) (nvml.Memory_v2, nvml.Return) {
	st, ret := s.memoryState(i)
	if ret != nvml.SUCCESS {
		return nvml.Memory_v2{}, ret
	}
	used := st.total - st.free
	return nvml.Memory_v2{Total: st.total << 20, Reserved: min(st.reserved, used) << 20, Free: st.free << 20,
		Used: (used - min(st.reserved, used)) << 20}, nvml.SUCCESS
}

// memoryState returns device i's figures for a memory query, or what the
// query answers instead: the failure FailDevice set, or NO_PERMISSION for a
// GPU in MIG mode, as to an unprivileged container.
func (s *Server) memoryState(i int) (deviceState, nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state[i]
	switch {
	case st.fail != nvml.SUCCESS:
		return st, st.fail
	case st.slices != nil:
		return st, nvml.ERROR_NO_PERMISSION
	}
	return st, nvml.SUCCESS
}

func (s *Server) utilization(i int) (nvml.Utilization, nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.state[i].fail != nvml.SUCCESS:
		return nvml.Utilization{}, s.state[i].fail
	case s.state[i].slices != nil:
		return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED
	}
	return nvml.Utilization{Gpu: s.state[i].util}, nvml.SUCCESS
}

// processes returns device i's compute processes. A GPU in MIG mode answers
// NO_PERMISSION, as it does to an unprivileged container.
func (s *Server) processes(i int) ([]nvml.ProcessInfo, nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state[i]
	switch {
	case st.fail != nvml.SUCCESS:
		return nil, st.fail
	case st.listErr != nvml.SUCCESS:
		return nil, st.listErr
	case st.slices != nil:
		return nil, nvml.ERROR_NO_PERMISSION
	}
	return processList(st.procs), nvml.SUCCESS
}

// processList turns a PID-to-MiB map into NVML's list, ordered by PID,
// memory in bytes.
func processList(procs map[int]uint64) []nvml.ProcessInfo {
	out := make([]nvml.ProcessInfo, 0, len(procs))
	for _, pid := range slices.Sorted(maps.Keys(procs)) {
		used := uint64(math.MaxUint64)
		if procs[pid] != Unknown {
			used = procs[pid] << 20
		}
		out = append(out, nvml.ProcessInfo{Pid: uint32(pid), UsedGpuMemory: used})
	}
	return out
}
