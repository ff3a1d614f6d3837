// Command nvmlcheck prints what switchyard's gpu package sees on this host:
// each GPU with its PCI bus id, MIG mode and MIG devices, memory (reserved
// memory included) and utilisation, or why it is down; which devices
// CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES leave to the server; the
// GPU memory of each process, and whether NVML's PIDs exist in this PID
// namespace; and the host memory (cgroup limit applied). It is a check of
// the real NVML path to run by hand on a GPU host; on a host without the
// NVIDIA driver it reports no GPU.
//
// Usage:
//
//	nvmlcheck [-json]
//
// The exit status is 0 when everything could be read (or the host has no
// NVIDIA library); 1 when the library is installed but NVML fails (the
// driver is not loaded, NVML answers ERROR_UNKNOWN), when a device is down,
// or when the host memory could not be read; and 2 for a bad flag. The
// report is printed in every case but the first.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/switchyard/switchyard/gpu"
)

func main() {
	os.Exit(run(os.Args[1:], env{
		stdout: os.Stdout, stderr: os.Stderr, open: gpu.New, hostMemory: gpu.HostMemory,
		lookupEnv: os.LookupEnv, pidExists: gpu.PIDExists,
	}))
}

// env is what run needs from the outside world, injected so tests can fake it.
type env struct {
	stdout, stderr io.Writer
	open           func(*zap.Logger) gpu.Info
	hostMemory     func() (totalMiB, availableMiB uint64, err error)
	lookupEnv      func(string) (string, bool)
	pidExists      func(int) bool
}

// errDevicesDown is the error of a report with devices that are down.
var errDevicesDown = errors.New("a device is down")

// report is everything nvmlcheck prints.
type report struct {
	Devices    []gpu.Device `json:"devices"`
	Processes  []listing    `json:"processes"`
	Visibility visibility   `json:"visibility"`
	Host       hostMemory   `json:"host"`
}

// listing is a gpu.Listing whose processes say whether their PID exists
// here.
type listing struct {
	DeviceIndex int       `json:"deviceIndex"`
	UUID        string    `json:"uuid"`
	Processes   []process `json:"processes"`
	Err         string    `json:"error,omitempty"`
}

type process struct {
	gpu.ProcessMemory
	InProc bool `json:"inProc"` // /proc/<pid> exists in this PID namespace
}

// visibility is what the visibility variables say.
type visibility struct {
	CUDAVisibleDevices   *string `json:"cudaVisibleDevices"`
	NVIDIAVisibleDevices *string `json:"nvidiaVisibleDevices"`
	Visible              []int   `json:"visible"` // the devices they leave
}

// hostMemory is the host's memory in MiB.
type hostMemory struct {
	TotalMiB     uint64 `json:"totalMiB"`
	AvailableMiB uint64 `json:"availableMiB"`
}

// run parses the flags, gathers the report and prints it; it returns the exit
// status.
func run(args []string, e env) int {
	fs := flag.NewFlagSet("nvmlcheck", flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	rep, complete, err := gather(e)
	if complete {
		err = errors.Join(err, write(e.stdout, rep, *asJSON))
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "nvmlcheck:", err)
		return 1
	}
	return 0
}

// gather opens the gpu Info, reads everything from it and closes it.
// complete is false when there is nothing to print (NVML is broken).
func gather(e env) (rep report, complete bool, err error) {
	info := e.open(newLogger(e.stderr))
	defer func() { err = errors.Join(err, info.Close()) }()
	if err := info.Err(); err != nil {
		return rep, false, err
	}
	if rep.Devices, err = info.Devices(); err != nil {
		return rep, false, err
	}
	listings, err := info.Processes()
	if err != nil {
		return rep, false, err
	}
	rep.Processes = withInProc(listings, e.pidExists)
	rep.Visibility = visibilityOf(rep.Devices, e.lookupEnv)
	var errs []error
	if n := downCount(rep.Devices); n > 0 {
		errs = append(errs, fmt.Errorf("%w: %d of %d devices", errDevicesDown, n, len(rep.Devices)))
	}
	var hostErr error
	rep.Host.TotalMiB, rep.Host.AvailableMiB, hostErr = e.hostMemory()
	rep.Devices = orEmpty(rep.Devices)
	return rep, true, errors.Join(append(errs, hostErr)...)
}

// withInProc adds to each process whether its PID exists here.
func withInProc(ls []gpu.Listing, exists func(int) bool) []listing {
	out := []listing{}
	for _, l := range ls {
		nl := listing{DeviceIndex: l.DeviceIndex, UUID: l.UUID, Err: l.Err, Processes: []process{}}
		for _, p := range l.Processes {
			nl.Processes = append(nl.Processes, process{ProcessMemory: p, InProc: exists(p.PID)})
		}
		out = append(out, nl)
	}
	return out
}

// visibilityOf reads the visibility variables and the devices they leave.
func visibilityOf(devs []gpu.Device, lookup func(string) (string, bool)) visibility {
	var v visibility
	if s, ok := lookup(gpu.CUDAVisibleDevices); ok {
		v.CUDAVisibleDevices = &s
	}
	if s, ok := lookup(gpu.NVIDIAVisibleDevices); ok {
		v.NVIDIAVisibleDevices = &s
	}
	v.Visible = orEmpty(gpu.NewVisibility(lookup).Indexes(devs))
	return v
}

func downCount(devs []gpu.Device) int {
	n := 0
	for _, d := range devs {
		if !d.Up() {
			n++
		}
	}
	return n
}

// orEmpty makes JSON print [] instead of null for an empty list.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// newLogger logs Info and above to w in zap's console format.
func newLogger(w io.Writer) *zap.Logger {
	enc := zapcore.NewConsoleEncoder(zap.NewDevelopmentEncoderConfig())
	return zap.New(zapcore.NewCore(enc, zapcore.AddSync(w), zap.InfoLevel))
}

// write prints the report as JSON or as a table.
func write(w io.Writer, rep report, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return printTable(w, rep)
}
