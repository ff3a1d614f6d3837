// Command nvmlcheck prints what switchyard's gpu package sees on this host:
// each GPU with its memory and utilisation, the GPU memory of each process,
// and the host memory. It is a check of the real NVML path to run by hand on
// a GPU host; on a host without the NVIDIA driver it reports no GPU.
//
// Usage:
//
//	nvmlcheck [-json]
//
// The exit status is 0 on success, 1 when NVML or /proc/meminfo could not be
// read, and 2 for a bad flag.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"text/tabwriter"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/switchyard/switchyard/gpu"
)

func main() {
	os.Exit(run(os.Args[1:], env{
		stdout: os.Stdout, stderr: os.Stderr, open: gpu.New, hostMemory: gpu.HostMemory,
	}))
}

// env is what run needs from the outside world, injected so tests can fake it.
type env struct {
	stdout, stderr io.Writer
	open           func(*zap.Logger) gpu.Info
	hostMemory     func() (totalMiB, availableMiB uint64, err error)
}

// report is everything nvmlcheck prints.
type report struct {
	Devices   []gpu.Device        `json:"devices"`
	Processes []gpu.ProcessMemory `json:"processes"`
	Host      hostMemory          `json:"host"`
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
	rep, err := gather(e)
	if err == nil {
		err = write(e.stdout, rep, *asJSON)
	}
	if err != nil {
		fmt.Fprintln(e.stderr, "nvmlcheck:", err)
		return 1
	}
	return 0
}

// gather opens the gpu Info, reads everything from it and closes it.
func gather(e env) (rep report, err error) {
	info := e.open(newLogger(e.stderr))
	defer func() { err = errors.Join(err, info.Close()) }()
	if rep.Devices, err = info.Devices(); err != nil {
		return rep, err
	}
	if rep.Processes, err = info.Processes(); err != nil {
		return rep, err
	}
	rep.Host.TotalMiB, rep.Host.AvailableMiB, err = e.hostMemory()
	rep.Devices = orEmpty(rep.Devices)
	rep.Processes = orEmpty(rep.Processes)
	return rep, err
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

// printTable prints the report as aligned columns.
func printTable(w io.Writer, rep report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(rep.Devices) == 0 {
		fmt.Fprintln(tw, "no NVIDIA GPU found: CPU only")
	} else {
		fmt.Fprintln(tw, "GPU\tNAME\tUUID\tTOTAL MiB\tUSED MiB\tFREE MiB\tUTIL %")
	}
	for _, d := range rep.Devices {
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%d\t%d\n",
			d.Index, d.Name, d.UUID, d.TotalMiB, d.UsedMiB, d.FreeMiB, d.UtilizationPercent)
	}
	if len(rep.Processes) > 0 {
		fmt.Fprintln(tw, "\nGPU\tPID\tUSED MiB")
	}
	for _, p := range rep.Processes {
		fmt.Fprintf(tw, "%d\t%d\t%d\n", p.DeviceIndex, p.PID, p.UsedMiB)
	}
	fmt.Fprintf(tw, "\nhost memory: %d MiB total, %d MiB available\n", rep.Host.TotalMiB, rep.Host.AvailableMiB)
	return tw.Flush()
}
