package gputest

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// maxMIGDevices is how many MIG devices an A100 can hold.
const maxMIGDevices = 7

// SetMIG puts device i in MIG mode with one MIG device (slice) per figure
// in sliceTotalMiB, each empty at first. Slice j has the UUID MIGUUID(i, j)
// and sits at MIG index j. As to a container that runs without privileges,
// the GPU itself then answers NO_PERMISSION to memory and process queries,
// and NOT_SUPPORTED to utilisation; its slices answer both.
func (s *Server) SetMIG(i int, sliceTotalMiB ...uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[i].slices = []*sliceState{}
	for j, total := range sliceTotalMiB {
		sl := &sliceState{total: total, free: total, procs: map[int]uint64{}}
		sl.handle = s.newSlice(i, j, sl)
		s.state[i].slices = append(s.state[i].slices, sl)
	}
}

// SetSliceFree sets the free memory of MIG device j of device i, in MiB.
func (s *Server) SetSliceFree(i, j int, freeMiB uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl := s.state[i].slices[j]
	sl.free = freeMiB
	sl.total = max(sl.total, freeMiB)
}

// SetSliceProcess makes pid a compute process on MIG device j of device i
// that holds usedMiB (Unknown for NVML_VALUE_NOT_AVAILABLE).
func (s *Server) SetSliceProcess(i, j, pid int, usedMiB uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.state[i].slices[j].procs[pid] = usedMiB
}

// newSlice returns the handle of MIG device j of device i.
func (s *Server) newSlice(i, j int, sl *sliceState) *mock.Device {
	uuid := MIGUUID(i, j)
	return &mock.Device{
		GetUUIDFunc:             func() (string, nvml.Return) { return uuid, nvml.SUCCESS },
		GetNameFunc:             func() (string, nvml.Return) { return "Mock NVIDIA A100-SXM4-40GB MIG 2g.10gb", nvml.SUCCESS },
		IsMigDeviceHandleFunc:   func() (bool, nvml.Return) { return true, nvml.SUCCESS },
		GetMemoryInfoFunc:       func() (nvml.Memory, nvml.Return) { return s.sliceMemory(sl), nvml.SUCCESS },
		GetMemoryInfo_v2Func:    func() (nvml.Memory_v2, nvml.Return) { return nvml.Memory_v2{}, nvml.ERROR_NOT_SUPPORTED },
		GetUtilizationRatesFunc: func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED },
		GetComputeRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) {
			s.mu.Lock()
			defer s.mu.Unlock()
			return processList(sl.procs), nvml.SUCCESS
		},
		GetGraphicsRunningProcessesFunc: func() ([]nvml.ProcessInfo, nvml.Return) { return nil, nvml.SUCCESS },
	}
}

func (s *Server) sliceMemory(sl *sliceState) nvml.Memory {
	s.mu.Lock()
	defer s.mu.Unlock()
	return nvml.Memory{Total: sl.total << 20, Free: sl.free << 20, Used: (sl.total - sl.free) << 20}
}

// migMode answers GetMigMode: enabled while the device has slices.
func (s *Server) migMode(i int) (int, int, nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state[i].slices != nil {
		return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS
	}
	return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_DISABLE, nvml.SUCCESS
}

// migCount answers GetMaxMigDeviceCount: 0 unless MIG is on.
func (s *Server) migCount(i int) (int, nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state[i].slices == nil {
		return 0, nvml.SUCCESS
	}
	return maxMIGDevices, nvml.SUCCESS
}

// migHandle answers GetMigDeviceHandleByIndex: NOT_FOUND for an index
// without a slice.
func (s *Server) migHandle(i, j int) (nvml.Device, nvml.Return) {
	s.mu.Lock()
	defer s.mu.Unlock()
	sl := s.state[i].slices
	switch {
	case sl == nil:
		return nil, nvml.ERROR_NOT_SUPPORTED
	case j < 0 || j >= maxMIGDevices:
		return nil, nvml.ERROR_INVALID_ARGUMENT
	case j >= len(sl):
		return nil, nvml.ERROR_NOT_FOUND
	}
	return sl[j].handle, nvml.SUCCESS
}
