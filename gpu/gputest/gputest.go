package gputest

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
)

// TotalMiB is the memory of each fake GPU unless a larger free figure is
// asked for: 40 GiB, as on the A100-SXM4-40GB the mock imitates.
const TotalMiB = 40960

// MaxDevices is the most GPUs a Server can have, as many as a DGX A100.
const MaxDevices = 8

// Server is a fake NVML library. It implements nvml.Interface through the
// embedded dgxa100 server; only the first len(freeMiB) entries of its
// Devices array are set, each a *dgxa100.Device whose functions a test may
// override further. The setters are safe to call while the library is in use.
type Server struct {
	*dgxa100.Server

	mu    sync.Mutex
	state []deviceState // one per device, guarded by mu
}

// deviceState holds the figures a test chose for one device, in MiB.
type deviceState struct {
	total, free uint64
	util        uint32
	procs       map[int]uint64 // PID to MiB
}

// New returns a fake NVML library with one GPU per figure in freeMiB, each
// with that much free memory out of TotalMiB (or out of the figure itself
// when it is larger). With no figures the library initialises and reports no
// GPU. Device i has the UUID UUID(i). New panics for more than MaxDevices
// figures.
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

// SetFree sets device i's free memory in MiB; used memory is the rest of its
// total.
func (s *Server) SetFree(i int, freeMiB uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[i].free = freeMiB
	s.state[i].total = max(s.state[i].total, freeMiB)
}

// SetUtilization sets device i's GPU utilisation in percent.
func (s *Server) SetUtilization(i int, percent uint32) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[i].util = percent
}

// SetProcess makes pid a compute process on device i that holds usedMiB.
// It does not change the device's free memory.
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
	d.UUID = UUID(i)
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) { return s.memory(i), nvml.SUCCESS }
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return nvml.Utilization{Gpu: s.state[i].util}, nvml.SUCCESS
	}
	d.GetComputeRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return s.processes(i), nvml.SUCCESS }
	d.GetGraphicsRunningProcessesFunc = func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS }
	return d
}

// memory returns device i's memory in bytes.
func (s *Server) memory(i int) nvml.Memory {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.state[i]
	return nvml.Memory{Total: st.total << 20, Free: st.free << 20, Used: (st.total - st.free) << 20}
}

// processes returns device i's processes ordered by PID, memory in bytes.
func (s *Server) processes(i int) []nvml.ProcessInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	procs := s.state[i].procs
	out := make([]nvml.ProcessInfo, 0, len(procs))
	for _, pid := range slices.Sorted(maps.Keys(procs)) {
		out = append(out, nvml.ProcessInfo{Pid: uint32(pid), UsedGpuMemory: procs[pid] << 20})
	}
	return out
}
