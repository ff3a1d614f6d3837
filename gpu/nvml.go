package gpu

import (
	"errors"
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"
)

// memoryV2Symbol is the NVML function that reports reserved memory apart;
// drivers before R510 lack it.
const memoryV2Symbol = "nvmlDeviceGetMemoryInfo_v2"

// nvmlInfo is the Info of a host with a working NVML library.
type nvmlInfo struct {
	lib    nvml.Interface
	v2     bool         // the library has GetMemoryInfo_v2
	mu     sync.RWMutex // held for reading by queries, for writing by Close
	closed bool
}

// NewNVML initialises lib and returns an Info over it. Each successful Init is
// paired with exactly one Shutdown: by Close, or before NewNVML returns an
// error. It logs one Info-level line with the device count and the driver
// version. A nil log discards log lines. Devices that fail are not an
// error here: Devices lists them with Err set.
func NewNVML(lib nvml.Interface, log *zap.Logger) (Info, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, nvmlError("Init", ret)
	}
	count, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return nil, errors.Join(nvmlError("DeviceGetCount", ret), shutdown(lib))
	}
	driver, _ := lib.SystemGetDriverVersion()
	v2 := lib.Extensions().LookupSymbol(memoryV2Symbol) == nil
	orNop(log).Info("gpu: NVML ready", zap.Int("devices", count), zap.String("driver", driver), zap.Bool("memoryInfoV2", v2))
	return &nvmlInfo{lib: lib, v2: v2}, nil
}

// Devices implements Info.
func (g *nvmlInfo) Devices() ([]Device, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	count, err := g.count()
	if err != nil {
		return nil, err
	}
	devs := make([]Device, count)
	for i := range devs {
		devs[i] = g.device(i)
	}
	return devs, nil
}

// Processes implements Info.
func (g *nvmlInfo) Processes() ([]Listing, error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	count, err := g.count()
	if err != nil {
		return nil, err
	}
	var out []Listing
	for i := range count {
		out = append(out, g.listings(i)...)
	}
	return out, nil
}

// Err implements Info: a working NVML has no error.
func (g *nvmlInfo) Err() error { return nil }

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

// count returns how many devices NVML sees. The caller holds g.mu.
func (g *nvmlInfo) count() (int, error) {
	if g.closed {
		return 0, ErrClosed
	}
	count, ret := g.lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		return 0, nvmlError("DeviceGetCount", ret)
	}
	return count, nil
}

// device reads device i; a device NVML fails on comes back with Err set.
func (g *nvmlInfo) device(i int) Device {
	h, ret := g.lib.DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		return Device{Index: i, Err: callError("DeviceGetHandleByIndex", ret).Error()}
	}
	d, err := g.describe(i, h)
	if err != nil {
		d.Err = err.Error()
	}
	return d
}

// describe reads one device's identity, mode, memory and utilisation. It
// returns what it read before an error, too.
func (g *nvmlInfo) describe(i int, h nvml.Device) (Device, error) {
	d := Device{Index: i}
	var ret nvml.Return
	if d.UUID, ret = h.GetUUID(); ret != nvml.SUCCESS {
		return d, callError("GetUUID", ret)
	}
	if d.Name, ret = h.GetName(); ret != nvml.SUCCESS {
		return d, callError("GetName", ret)
	}
	pci, ret := h.GetPciInfo()
	if err := optional("GetPciInfo", ret); err != nil {
		return d, err
	}
	d.PCIBusID = busID(pci)
	var err error
	if d.MIG, err = migEnabled(h); err != nil {
		return d, err
	}
	if d.Memory, err = g.deviceMemory(h, d.MIG); err != nil {
		return d, err
	}
	if d.UtilizationPercent, err = utilization(h); err != nil {
		return d, err
	}
	if d.MIG {
		d.Slices, err = g.slices(h)
	}
	return d, err
}

// deviceMemory reads a GPU's memory. A GPU in MIG mode may refuse (it needs
// privileges a container does not have): its memory is then nil.
func (g *nvmlInfo) deviceMemory(h nvml.Device, mig bool) (*Memory, error) {
	mem, op, ret := g.memory(h)
	switch {
	case ret == nvml.SUCCESS:
		return &mem, nil
	case mig && notReported(ret):
		return nil, nil
	}
	return nil, callError(op, ret)
}

// memory reads a device's (or a MIG device's) memory: GetMemoryInfo_v2 where
// the library has it, since it reports the driver's reserved memory apart,
// else (or when it fails) GetMemoryInfo. op names the call of the result.
func (g *nvmlInfo) memory(h nvml.Device) (Memory, string, nvml.Return) {
	if g.v2 {
		if m, ret := h.GetMemoryInfo_v2(); ret == nvml.SUCCESS {
			return Memory{TotalMiB: toMiB(m.Total), UsedMiB: toMiB(m.Used), FreeMiB: toMiB(m.Free), ReservedMiB: toMiB(m.Reserved)}, "GetMemoryInfo_v2", ret
		}
	}
	m, ret := h.GetMemoryInfo()
	return Memory{TotalMiB: toMiB(m.Total), UsedMiB: toMiB(m.Used), FreeMiB: toMiB(m.Free)}, "GetMemoryInfo", ret
}

// utilization reads a GPU's utilisation; nil when it is not reported.
func utilization(h nvml.Device) (*uint32, error) {
	u, ret := h.GetUtilizationRates()
	if err := optional("GetUtilizationRates", ret); err != nil || ret != nvml.SUCCESS {
		return nil, err
	}
	return &u.Gpu, nil
}

// migEnabled reports whether a GPU is in MIG mode. A GPU that does not
// support MIG says NOT_SUPPORTED, which means no.
func migEnabled(h nvml.Device) (bool, error) {
	current, _, ret := h.GetMigMode()
	if err := optional("GetMigMode", ret); err != nil {
		return false, err
	}
	return ret == nvml.SUCCESS && current == nvml.DEVICE_MIG_ENABLE, nil
}

// busID returns the PCI bus id NVML wrote, NUL-terminated, into p.
func busID(p nvml.PciInfo) string {
	b := make([]byte, 0, len(p.BusId))
	for _, c := range p.BusId {
		if c == 0 {
			break
		}
		b = append(b, c)
	}
	return string(b)
}

func toMiB(bytes uint64) uint64 { return bytes >> 20 }

// notReported reports whether ret means "NVML will not tell": not supported
// on this device, or not to this process.
func notReported(ret nvml.Return) bool {
	return ret == nvml.ERROR_NOT_SUPPORTED || ret == nvml.ERROR_NO_PERMISSION
}

// optional accepts NOT_SUPPORTED and NO_PERMISSION as "nothing to report"
// and turns every other failure into an error.
func optional(op string, ret nvml.Return) error {
	if ret == nvml.SUCCESS || notReported(ret) {
		return nil
	}
	return callError(op, ret)
}

func shutdown(lib nvml.Interface) error {
	if ret := lib.Shutdown(); ret != nvml.SUCCESS {
		return nvmlError("Shutdown", ret)
	}
	return nil
}

// callError is a failed NVML call on one device: the call and its return
// code, as a down device's Err shows them.
func callError(op string, ret nvml.Return) error {
	return fmt.Errorf("%s: %w", op, ret)
}

func nvmlError(op string, ret nvml.Return) error {
	return fmt.Errorf("%w: %s: %w", ErrNVML, op, ret)
}
