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
	Index              int    `json:"index"`
	UUID               string `json:"uuid"`
	Name               string `json:"name"`
	TotalMiB           uint64 `json:"totalMiB"`
	UsedMiB            uint64 `json:"usedMiB"`
	FreeMiB            uint64 `json:"freeMiB"`
	UtilizationPercent uint32 `json:"utilizationPercent"`
}

// ProcessMemory is the GPU memory one process holds on one device.
type ProcessMemory struct {
	PID         int    `json:"pid"`
	DeviceIndex int    `json:"deviceIndex"`
	UsedMiB     uint64 `json:"usedMiB"`
}

// Info reports the host's GPUs. Implementations are safe for concurrent use.
type Info interface {
	// Devices returns every GPU, ordered by NVML index, with fresh figures
	// on every call.
	Devices() ([]Device, error)
	// Processes returns the GPU memory held by each process on each device,
	// ordered by device index and then PID.
	Processes() ([]ProcessMemory, error)
	// Close releases NVML. Later calls to Devices and Processes return
	// ErrClosed; a second Close does nothing.
	Close() error
}

// New returns an Info backed by the host's NVML library when
// libnvidia-ml.so.1 loads and initialises. Otherwise it returns a CPU-only Info
// (no devices, no processes) and logs one Info-level line that says why.
// It never fails. A nil log discards log lines.
func New(log *zap.Logger) Info {
	return newWith(nvml.New(), log)
}

// newWith is New over a given library, so tests can make Init fail.
func newWith(lib nvml.Interface, log *zap.Logger) Info {
	log = orNop(log)
	info, err := NewNVML(lib, log)
	if err != nil {
		log.Info("gpu: NVML not available, running CPU-only", zap.Error(err))
		return CPUOnly()
	}
	return info
}

// CPUOnly returns the Info of a host without NVML: no devices, no processes,
// nothing to close. New falls back to it; a server can also use it to keep
// off the GPUs.
func CPUOnly() Info { return cpuOnly{} }

// cpuOnly is the Info of a host without NVML.
type cpuOnly struct{}

func (cpuOnly) Devices() ([]Device, error)          { return nil, nil }
func (cpuOnly) Processes() ([]ProcessMemory, error) { return nil, nil }
func (cpuOnly) Close() error                        { return nil }

func orNop(log *zap.Logger) *zap.Logger {
	if log == nil {
		return zap.NewNop()
	}
	return log
}
