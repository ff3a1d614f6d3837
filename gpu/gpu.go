package gpu

import (
	"errors"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"go.uber.org/zap"
)

// Sentinel errors of this package. Errors returned by its functions wrap one
// of them with %w and add the details.
var (
	// ErrInsufficientMemory means no allowed device has room for the model
	// (HTTP 507).
	ErrInsufficientMemory = errors.New("gpu: not enough memory")
	// ErrDeviceDown means a device (or every allowed one) cannot be used:
	// NVML failed on it, so its memory cannot be read. Placement errors
	// wrap it together with ErrInsufficientMemory.
	ErrDeviceDown = errors.New("gpu: device down")
	// ErrNoDevice means a GPU worker was asked for but no GPU is allowed or
	// present.
	ErrNoDevice = errors.New("gpu: no device available")
	// ErrUnknownDevice means a device index names no discovered GPU.
	ErrUnknownDevice = errors.New("gpu: no such device")
	// ErrBadDeviceID means a load_on_devices entry is not a device id.
	ErrBadDeviceID = errors.New("gpu: bad device id")
	// ErrNVML means an NVML call failed; the message names the call and the
	// NVML return code.
	ErrNVML = errors.New("gpu: nvml call failed")
	// ErrClosed means the Info was used after Close.
	ErrClosed = errors.New("gpu: info closed")
	// ErrMeminfo means /proc/meminfo could not be read or parsed.
	ErrMeminfo = errors.New("gpu: bad meminfo")
)

// Device is one GPU as NVML reports it at the time of the call. Memory figures
// are in MiB (2^20 bytes), rounded down.
type Device struct {
	Index    int    `json:"index"`
	UUID     string `json:"uuid"`
	Name     string `json:"name"`
	PCIBusID string `json:"pciBusId"`
	// Memory is the whole GPU's memory; nil when NVML would not tell (a GPU
	// in MIG mode, to a process without privileges).
	Memory *Memory `json:"memory"`
	// UtilizationPercent is nil when the GPU does not report it (MIG mode).
	UtilizationPercent *uint32 `json:"utilizationPercent"`
	// MIG is true when the GPU is in MIG mode: workers then run on its
	// Slices, never on the GPU itself.
	MIG    bool    `json:"mig"`
	Slices []Slice `json:"slices,omitempty"`
	// Err says why the device is down: the NVML call that failed and its
	// return code. Empty when the device is up.
	Err string `json:"error,omitempty"`
}

// Up reports whether the device can be used.
func (d Device) Up() bool { return d.Err == "" }

// Memory is a device's memory in MiB. Reserved is memory the driver keeps
// for itself (GetMemoryInfo_v2); Used does not include it where the driver
// reports it apart.
type Memory struct {
	TotalMiB    uint64 `json:"totalMiB"`
	UsedMiB     uint64 `json:"usedMiB"`
	FreeMiB     uint64 `json:"freeMiB"`
	ReservedMiB uint64 `json:"reservedMiB"`
}

// Slice is one MIG device of a GPU in MIG mode: the unit a worker runs on.
type Slice struct {
	Index  int    `json:"index"` // MIG device index under its GPU
	UUID   string `json:"uuid"`  // MIG-<uuid>, what CUDA_VISIBLE_DEVICES takes
	Name   string `json:"name"`
	Memory Memory `json:"memory"`
	Err    string `json:"error,omitempty"` // why the slice is down; empty when up
}

// ProcessMemory is the GPU memory one process holds on one GPU or MIG
// slice.
type ProcessMemory struct {
	PID     int    `json:"pid"`
	UsedMiB uint64 `json:"usedMiB"`
	// Unknown is true when NVML could not tell the figure
	// (NVML_VALUE_NOT_AVAILABLE); UsedMiB is then 0.
	Unknown bool `json:"unknown,omitempty"`
}

// Listing is the process list of one GPU, or of one MIG slice of a GPU in
// MIG mode.
type Listing struct {
	DeviceIndex int             `json:"deviceIndex"` // the GPU's NVML index
	UUID        string          `json:"uuid"`        // the GPU's or the slice's UUID
	Processes   []ProcessMemory `json:"processes"`   // ordered by PID
	// Err says why the listing failed; every process's memory on this GPU
	// or slice is then unknown. Empty on success.
	Err string `json:"error,omitempty"`
}

// Info reports the host's GPUs. Implementations are safe for concurrent use.
type Info interface {
	// Devices returns every GPU, ordered by NVML index, with fresh figures
	// on every call. A device that NVML fails on is listed with Err set;
	// the error is for failures that concern every device.
	Devices() ([]Device, error)
	// Processes returns one listing per GPU, or per MIG slice of a GPU in
	// MIG mode, ordered by device index and then MIG index. A listing that
	// fails carries its own Err.
	Processes() ([]Listing, error)
	// Err returns why NVML cannot be used although its library is installed
	// (the driver is not loaded, or NVML answers ERROR_UNKNOWN, as after a
	// daemon reload in a container): an error wrapping ErrNVML. It is nil on
	// a working NVML and on a host without the NVIDIA library.
	Err() error
	// Close releases NVML. Later calls to Devices and Processes return
	// ErrClosed; a second Close does nothing.
	Close() error
}

// New returns an Info backed by the host's NVML library when
// libnvidia-ml.so.1 loads and initialises. Otherwise it returns an Info
// without devices: when the library is missing, it logs one Info-level line
// and the host is CPU-only; when the library is there but fails (a driver
// that is not loaded, NVML_ERROR_UNKNOWN), it logs one Warn-level line and
// the Info's Err says why. It never fails. A nil log discards log lines.
func New(log *zap.Logger) Info {
	return newWith(nvml.New(), log)
}

// newWith is New over a given library, so tests can make Init fail.
func newWith(lib nvml.Interface, log *zap.Logger) Info {
	log = orNop(log)
	info, err := NewNVML(lib, log)
	switch {
	case err == nil:
		return info
	case errors.Is(err, nvml.ERROR_LIBRARY_NOT_FOUND):
		log.Info("gpu: NVML not available, running CPU-only", zap.Error(err))
		return CPUOnly()
	}
	log.Warn("gpu: NVML is installed but failed; no GPU can be used", zap.Error(err))
	return Broken(err)
}

// CPUOnly returns the Info of a host without NVML: no devices, no processes,
// nothing to close. New falls back to it; a server can also use it to keep
// off the GPUs.
func CPUOnly() Info { return cpuOnly{} }

// Broken returns the Info of a host whose NVML library is installed but
// fails with err: no devices, and Err returns err.
func Broken(err error) Info { return cpuOnly{err: err} }

// cpuOnly is the Info of a host without a usable NVML.
type cpuOnly struct{ err error }

func (cpuOnly) Devices() ([]Device, error)    { return nil, nil }
func (cpuOnly) Processes() ([]Listing, error) { return nil, nil }
func (c cpuOnly) Err() error                  { return c.err }
func (cpuOnly) Close() error                  { return nil }

func orNop(log *zap.Logger) *zap.Logger {
	if log == nil {
		return zap.NewNop()
	}
	return log
}
