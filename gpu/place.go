package gpu

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Request describes a GPU worker about to start, for Place.
type Request struct {
	// Allowed lists the device indexes the model may use (load_on_devices);
	// nil means every device.
	Allowed []int
	// RequiredMiB is the memory the worker needs (gpu.required_memory_mb).
	RequiredMiB int64
	// ReservedMiB is memory that must stay free on the device besides the
	// worker's own (gpu.reserved_memory_mb).
	ReservedMiB int64
	// Placed counts this model's workers per device index, the ones running
	// and the ones starting.
	Placed map[int]int
}

// Place chooses the device for a new GPU worker. Among the allowed devices
// where FreeMiB - ReservedMiB >= RequiredMiB, it prefers the one with the
// fewest of this model's workers (spread before doubling up), then the one
// with the most free memory, then the lowest index. Negative memory figures
// count as 0. With RequiredMiB at 0 the reserve is still checked (as DJL
// does); with both at 0 every allowed device fits.
//
// When no allowed device fits, the error wraps ErrInsufficientMemory and its
// message gives the model's needs and each allowed device's free and total
// memory. An allowed index that is not among devs gives ErrUnknownDevice, and
// an empty set of candidates gives ErrNoDevice.
func Place(devs []Device, req Request) (int, error) {
	cands, err := candidates(devs, req.Allowed)
	if err != nil {
		return -1, err
	}
	required, reserved := max(req.RequiredMiB, 0), max(req.ReservedMiB, 0)
	best := -1
	for i, d := range cands {
		if fits(d.FreeMiB, required, reserved) && (best < 0 || better(d, cands[best], req.Placed)) {
			best = i
		}
	}
	if best < 0 {
		return -1, gpuMemoryError(cands, required, reserved)
	}
	return cands[best].Index, nil
}

// CheckHost checks a model's memory needs against the host's available
// memory: availableMiB - reservedMiB must be at least requiredMiB (negative
// figures count as 0). The error wraps ErrInsufficientMemory and carries the
// numbers.
func CheckHost(availableMiB uint64, requiredMiB, reservedMiB int64) error {
	required, reserved := max(requiredMiB, 0), max(reservedMiB, 0)
	if fits(availableMiB, required, reserved) {
		return nil
	}
	return fmt.Errorf("%w: model needs %d MiB + %d MiB reserved; cpu has %d MiB available",
		ErrInsufficientMemory, required, reserved, availableMiB)
}

// candidates returns the allowed devices ordered by index, without repeats.
func candidates(devs []Device, allowed []int) ([]Device, error) {
	out := devs
	if allowed != nil {
		out = make([]Device, 0, len(allowed))
		for _, idx := range allowed {
			i := slices.IndexFunc(devs, func(d Device) bool { return d.Index == idx })
			if i < 0 {
				return nil, fmt.Errorf("%w: gpu %d (this host has %s)", ErrUnknownDevice, idx, listIndexes(devs))
			}
			out = append(out, devs[i])
		}
	}
	out = slices.CompactFunc(sortedByIndex(out), func(a, b Device) bool { return a.Index == b.Index })
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no GPU is allowed or present", ErrNoDevice)
	}
	return out, nil
}

func sortedByIndex(devs []Device) []Device {
	out := slices.Clone(devs)
	slices.SortFunc(out, func(a, b Device) int { return a.Index - b.Index })
	return out
}

// fits reports whether free - reserved >= required without overflow.
func fits(freeMiB uint64, required, reserved int64) bool {
	free := int64(min(freeMiB, math.MaxInt64))
	return free >= reserved && free-reserved >= required
}

// better reports whether a is a better home than b for the next worker.
func better(a, b Device, placed map[int]int) bool {
	if pa, pb := placed[a.Index], placed[b.Index]; pa != pb {
		return pa < pb
	}
	if a.FreeMiB != b.FreeMiB {
		return a.FreeMiB > b.FreeMiB
	}
	return a.Index < b.Index
}

func gpuMemoryError(cands []Device, required, reserved int64) error {
	parts := make([]string, len(cands))
	for i, d := range cands {
		parts[i] = fmt.Sprintf("gpu %d has %d MiB free of %d", d.Index, d.FreeMiB, d.TotalMiB)
	}
	return fmt.Errorf("%w: model needs %d MiB + %d MiB reserved; %s",
		ErrInsufficientMemory, required, reserved, strings.Join(parts, ", "))
}

// listIndexes names the devices for error messages: "gpu 0, gpu 1" or
// "no GPU".
func listIndexes(devs []Device) string {
	if len(devs) == 0 {
		return "no GPU"
	}
	parts := make([]string, len(devs))
	for i, d := range sortedByIndex(devs) {
		parts[i] = fmt.Sprintf("gpu %d", d.Index)
	}
	return strings.Join(parts, ", ")
}
