package gpu

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// Unit is where one GPU worker runs: a whole GPU, or one MIG device of a
// GPU in MIG mode.
type Unit struct {
	Device   int    // the GPU's NVML index
	UUID     string // GPU-<uuid> or MIG-<uuid>: the worker's CUDA_VISIBLE_DEVICES
	MIG      bool   // the unit is a MIG device
	TotalMiB uint64
	FreeMiB  uint64
}

// Units returns where workers can run on devs, in index order: each GPU
// that is up and not in MIG mode, and each MIG device that is up of a GPU in
// MIG mode that is up.
func Units(devs []Device) []Unit {
	var out []Unit
	for _, d := range sortedByIndex(devs) {
		out = append(out, deviceUnits(d)...)
	}
	return out
}

// deviceUnits returns the units of one device.
func deviceUnits(d Device) []Unit {
	if !d.Up() {
		return nil
	}
	if !d.MIG {
		if d.Memory == nil {
			return nil
		}
		return []Unit{{Device: d.Index, UUID: d.UUID, TotalMiB: d.Memory.TotalMiB, FreeMiB: d.Memory.FreeMiB}}
	}
	var out []Unit
	for _, s := range d.Slices {
		if s.Err == "" {
			out = append(out, Unit{Device: d.Index, UUID: s.UUID, MIG: true, TotalMiB: s.Memory.TotalMiB, FreeMiB: s.Memory.FreeMiB})
		}
	}
	return out
}

// Request describes a GPU worker about to start, for Place.
type Request struct {
	// Allowed lists the device indexes the model may use (load_on_devices);
	// nil means every device.
	Allowed []int
	// RequiredMiB is the memory the worker needs.
	RequiredMiB int64
	// ReservedMiB is memory that must stay free on the unit besides the
	// worker's own.
	ReservedMiB int64
	// Placed counts this model's workers per unit UUID, the ones running
	// and the ones starting.
	Placed map[string]int
}

// Place chooses the unit for a new GPU worker. Among the units of the
// allowed devices where FreeMiB - ReservedMiB >= RequiredMiB, it prefers the
// one with the fewest of this model's workers (spread before doubling up),
// then the one with the most free memory, then the lowest device index and
// UUID. Negative memory figures count as 0. With RequiredMiB at 0 the
// reserve is still checked (as DJL does). Devices that are down, and a GPU
// whose memory NVML would not tell, offer no unit.
//
// When no unit fits, the error wraps ErrInsufficientMemory and its message
// gives the model's needs and each allowed device's free and total memory
// (or why it is down); when every allowed device is down it wraps
// ErrDeviceDown as well. An allowed index that is not among devs gives
// ErrUnknownDevice, and an empty set of candidates gives ErrNoDevice.
func Place(devs []Device, req Request) (Unit, error) {
	cands, err := candidates(devs, req.Allowed)
	if err != nil {
		return Unit{}, err
	}
	required, reserved := max(req.RequiredMiB, 0), max(req.ReservedMiB, 0)
	units := Units(cands)
	best := -1
	for i, u := range units {
		if fits(u.FreeMiB, required, reserved) && (best < 0 || better(u, units[best], req.Placed)) {
			best = i
		}
	}
	if best < 0 {
		return Unit{}, gpuMemoryError(cands, required, reserved)
	}
	return units[best], nil
}

// PlaceAll places n workers one after another, each taking RequiredMiB from
// the unit it lands on, and returns their units; it fails with Place's
// error when one of them does not fit. It answers whether a request that
// starts n workers at once can succeed.
func PlaceAll(devs []Device, req Request, n int) ([]Unit, error) {
	devs = cloneDevices(devs)
	placed := map[string]int{}
	for k, v := range req.Placed {
		placed[k] = v
	}
	req.Placed = placed
	out := make([]Unit, 0, n)
	for range n {
		u, err := Place(devs, req)
		if err != nil {
			return nil, err
		}
		placed[u.UUID]++
		take(devs, u.UUID, uint64(max(req.RequiredMiB, 0)))
		out = append(out, u)
	}
	return out, nil
}

// Give returns a copy of devs in which the GPU or MIG device called uuid
// has mib MiB more free memory, at most its total: the room a plan counts
// on once a worker that holds mib there has gone. devs is not changed.
func Give(devs []Device, uuid string, mib uint64) []Device {
	devs = cloneDevices(devs)
	for i := range devs {
		d := &devs[i]
		if d.UUID == uuid && d.Memory != nil {
			d.Memory.FreeMiB = min(d.Memory.FreeMiB+mib, d.Memory.TotalMiB)
		}
		for j := range d.Slices {
			if s := &d.Slices[j]; s.UUID == uuid {
				s.Memory.FreeMiB = min(s.Memory.FreeMiB+mib, s.Memory.TotalMiB)
			}
		}
	}
	return devs
}

// Take returns a copy of devs in which the GPU or MIG device called uuid
// has mib MiB less free memory, at least none: the room a plan counts as
// promised to a worker. devs is not changed.
func Take(devs []Device, uuid string, mib uint64) []Device {
	devs = cloneDevices(devs)
	take(devs, uuid, mib)
	return devs
}

// cloneDevices copies devs deeply enough for take to change them.
func cloneDevices(devs []Device) []Device {
	out := slices.Clone(devs)
	for i := range out {
		if out[i].Memory != nil {
			m := *out[i].Memory
			out[i].Memory = &m
		}
		out[i].Slices = slices.Clone(out[i].Slices)
	}
	return out
}

// take lowers the free memory of the unit called uuid by mib.
func take(devs []Device, uuid string, mib uint64) {
	for i := range devs {
		d := &devs[i]
		if d.UUID == uuid && d.Memory != nil {
			d.Memory.FreeMiB -= min(mib, d.Memory.FreeMiB)
		}
		for j := range d.Slices {
			if s := &d.Slices[j]; s.UUID == uuid {
				s.Memory.FreeMiB -= min(mib, s.Memory.FreeMiB)
			}
		}
	}
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
	slices.SortStableFunc(out, func(a, b Device) int { return a.Index - b.Index })
	return out
}

// fits reports whether free - reserved >= required without overflow.
func fits(freeMiB uint64, required, reserved int64) bool {
	free := int64(min(freeMiB, math.MaxInt64))
	return free >= reserved && free-reserved >= required
}

// better reports whether a is a better home than b for the next worker.
func better(a, b Unit, placed map[string]int) bool {
	if pa, pb := placed[a.UUID], placed[b.UUID]; pa != pb {
		return pa < pb
	}
	if a.FreeMiB != b.FreeMiB {
		return a.FreeMiB > b.FreeMiB
	}
	if a.Device != b.Device {
		return a.Device < b.Device
	}
	return a.UUID < b.UUID
}

// gpuMemoryError explains why no unit of cands fits.
func gpuMemoryError(cands []Device, required, reserved int64) error {
	var parts []string
	allDown := true
	for _, d := range cands {
		parts = append(parts, deviceRoom(d)...)
		allDown = allDown && !d.Up()
	}
	msg := fmt.Sprintf("model needs %d MiB + %d MiB reserved; %s", required, reserved, strings.Join(parts, ", "))
	if allDown {
		return fmt.Errorf("%w: %w: %s", ErrInsufficientMemory, ErrDeviceDown, msg)
	}
	return fmt.Errorf("%w: %s", ErrInsufficientMemory, msg)
}

// deviceRoom describes the room on one device for an error message.
func deviceRoom(d Device) []string {
	switch {
	case !d.Up():
		return []string{fmt.Sprintf("gpu %d is down (%s)", d.Index, d.Err)}
	case !d.MIG && d.Memory == nil:
		return []string{fmt.Sprintf("gpu %d does not report its memory", d.Index)}
	case !d.MIG:
		return []string{fmt.Sprintf("gpu %d has %d MiB free of %d", d.Index, d.Memory.FreeMiB, d.Memory.TotalMiB)}
	case len(d.Slices) == 0:
		return []string{fmt.Sprintf("gpu %d is in MIG mode without MIG devices", d.Index)}
	}
	var out []string
	for _, s := range d.Slices {
		if s.Err != "" {
			out = append(out, fmt.Sprintf("gpu %d MIG device %d is down (%s)", d.Index, s.Index, s.Err))
		} else {
			out = append(out, fmt.Sprintf("gpu %d %s has %d MiB free of %d", d.Index, s.UUID, s.Memory.FreeMiB, s.Memory.TotalMiB))
		}
	}
	return out
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
