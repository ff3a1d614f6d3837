package gpu

import (
	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// migHandle is one MIG device of a GPU in MIG mode.
type migHandle struct {
	index int
	h     nvml.Device
}

// migHandles returns the MIG devices of a GPU in MIG mode, by MIG index.
// Indexes without a MIG device (NOT_FOUND) are skipped.
func migHandles(h nvml.Device) ([]migHandle, error) {
	n, ret := h.GetMaxMigDeviceCount()
	if ret != nvml.SUCCESS {
		return nil, callError("GetMaxMigDeviceCount", ret)
	}
	var out []migHandle
	for j := range n {
		mh, ret := h.GetMigDeviceHandleByIndex(j)
		switch ret {
		case nvml.SUCCESS:
			out = append(out, migHandle{index: j, h: mh})
		case nvml.ERROR_NOT_FOUND:
		default:
			return nil, callError("GetMigDeviceHandleByIndex", ret)
		}
	}
	return out, nil
}

// slices reads the MIG devices of a GPU in MIG mode. A MIG device that NVML
// fails on is listed with Err set.
func (g *nvmlInfo) slices(h nvml.Device) ([]Slice, error) {
	handles, err := migHandles(h)
	if err != nil {
		return nil, err
	}
	out := make([]Slice, 0, len(handles))
	for _, mh := range handles {
		s, err := g.slice(mh)
		if err != nil {
			s.Err = err.Error()
		}
		out = append(out, s)
	}
	return out, nil
}

// slice reads one MIG device's identity and memory.
func (g *nvmlInfo) slice(mh migHandle) (Slice, error) {
	s := Slice{Index: mh.index}
	var ret nvml.Return
	if s.UUID, ret = mh.h.GetUUID(); ret != nvml.SUCCESS {
		return s, callError("GetUUID", ret)
	}
	s.Name, ret = mh.h.GetName()
	if err := optional("GetName", ret); err != nil {
		return s, err
	}
	mem, op, ret := g.memory(mh.h)
	if ret != nvml.SUCCESS {
		return s, callError(op, ret)
	}
	s.Memory = mem
	return s, nil
}
