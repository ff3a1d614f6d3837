package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/switchyard/switchyard/gpu"
)

// printTable prints the report as aligned columns: the devices (a MIG
// device on a row of its own under its GPU, as <gpu>/<mig>), the
// visibility variables, the processes and the host memory.
func printTable(w io.Writer, rep report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if len(rep.Devices) == 0 {
		fmt.Fprintln(tw, "no NVIDIA GPU found: CPU only")
	} else {
		fmt.Fprintln(tw, "GPU\tNAME\tUUID\tPCI BUS ID\tMIG\tTOTAL MiB\tUSED MiB\tFREE MiB\tRESERVED MiB\tUTIL %\tVISIBLE\tSTATUS")
	}
	for _, d := range rep.Devices {
		printDevice(tw, d, slices.Contains(rep.Visibility.Visible, d.Index))
	}
	fmt.Fprintf(tw, "\n%s\n", visibilityLine(rep.Visibility))
	printProcesses(tw, rep.Processes)
	fmt.Fprintf(tw, "\nhost memory: %d MiB total, %d MiB available\n", rep.Host.TotalMiB, rep.Host.AvailableMiB)
	return tw.Flush()
}

// printDevice prints one GPU's row and its MIG devices' rows.
func printDevice(w io.Writer, d gpu.Device, visible bool) {
	util := "-"
	if d.UtilizationPercent != nil {
		util = strconv.Itoa(int(*d.UtilizationPercent))
	}
	fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Index, orDash(d.Name), orDash(d.UUID), orDash(d.PCIBusID),
		migMode(d), memoryColumns(d.Memory), util+"\t"+yesNo(visible), status(d.Err))
	for _, s := range d.Slices {
		m := s.Memory
		mem := memoryColumns(&m)
		if s.Err != "" {
			mem = memoryColumns(nil)
		}
		fmt.Fprintf(w, "%d/%d\t%s\t%s\t-\tslice\t%s\t-\t%s\t%s\n", d.Index, s.Index, orDash(s.Name), orDash(s.UUID),
			mem, yesNo(visible), status(s.Err))
	}
}

func migMode(d gpu.Device) string {
	if !d.MIG {
		return "off"
	}
	return fmt.Sprintf("on (%d)", len(d.Slices))
}

// memoryColumns prints total, used, free and reserved memory, or dashes
// when NVML would not tell.
func memoryColumns(m *gpu.Memory) string {
	if m == nil {
		return "-\t-\t-\t-"
	}
	return fmt.Sprintf("%d\t%d\t%d\t%d", m.TotalMiB, m.UsedMiB, m.FreeMiB, m.ReservedMiB)
}

func status(err string) string {
	if err == "" {
		return "up"
	}
	return "DOWN: " + err
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// visibilityLine says which variables restrict the devices and what they
// leave.
func visibilityLine(v visibility) string {
	var set []string
	if v.CUDAVisibleDevices != nil {
		set = append(set, fmt.Sprintf("%s=%q", gpu.CUDAVisibleDevices, *v.CUDAVisibleDevices))
	}
	if v.NVIDIAVisibleDevices != nil {
		set = append(set, fmt.Sprintf("%s=%q", gpu.NVIDIAVisibleDevices, *v.NVIDIAVisibleDevices))
	}
	if len(set) == 0 {
		return "visibility: CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES are not set"
	}
	ids := make([]string, len(v.Visible))
	for i, id := range v.Visible {
		ids[i] = strconv.Itoa(id)
	}
	return fmt.Sprintf("visibility: %s; the server may use GPUs [%s]", strings.Join(set, " "), strings.Join(ids, " "))
}

// printProcesses prints the processes, the listings that failed, and a
// warning when none of NVML's PIDs exists here.
func printProcesses(w io.Writer, ls []listing) {
	listed, seen := 0, 0
	for _, l := range ls {
		for _, p := range l.Processes {
			if listed == 0 {
				fmt.Fprintln(w, "\nGPU\tDEVICE UUID\tPID\tUSED MiB\tIN /proc")
			}
			listed++
			if p.InProc {
				seen++
			}
			used := strconv.FormatUint(p.UsedMiB, 10)
			if p.Unknown {
				used = "unknown"
			}
			fmt.Fprintf(w, "%d\t%s\t%d\t%s\t%s\n", l.DeviceIndex, l.UUID, p.PID, used, yesNo(p.InProc))
		}
	}
	for _, l := range ls {
		if l.Err != "" {
			fmt.Fprintf(w, "gpu %d %s: process list failed: %s\n", l.DeviceIndex, orDash(l.UUID), l.Err)
		}
	}
	if listed > 0 && seen == 0 {
		fmt.Fprintln(w, "none of NVML's PIDs exists in /proc: this PID namespace is not the host's, so per-worker GPU memory is unknown")
	}
}
