package gpu

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Selection is a load_on_devices value resolved against the discovered
// devices.
type Selection struct {
	// GPUs holds the chosen device indexes, ascending, without repeats.
	GPUs []int
	// CPU is true when the value names the CPU, or is "*" on a host
	// without GPUs.
	CPU bool
}

// ResolveLoadOnDevices turns a load_on_devices value into device indexes.
// The value is "*" (every discovered GPU, or the CPU when there is none) or
// a list of ids separated by ';' (DJL's separator) or ','. An id is a GPU
// index ("1" or "gpu1") or the CPU ("cpu" or "-1"). Blanks around ids are
// ignored, and a value without any id ("" or ";") means "*". An id that
// names no discovered GPU is an error wrapping ErrUnknownDevice; an id of
// another form is an error wrapping ErrBadDeviceID. Both name the id.
func ResolveLoadOnDevices(spec string, devs []Device) (Selection, error) {
	if strings.TrimSpace(spec) == "*" {
		return everything(devs), nil
	}
	var sel Selection
	for _, tok := range strings.FieldsFunc(spec, func(r rune) bool { return r == ';' || r == ',' }) {
		if err := sel.add(strings.TrimSpace(tok), devs); err != nil {
			return Selection{}, err
		}
	}
	if !sel.CPU && len(sel.GPUs) == 0 {
		return everything(devs), nil
	}
	slices.Sort(sel.GPUs)
	sel.GPUs = slices.Compact(sel.GPUs)
	return sel, nil
}

// everything is the Selection of "*".
func everything(devs []Device) Selection {
	if len(devs) == 0 {
		return Selection{CPU: true}
	}
	gpus := make([]int, len(devs))
	for i, d := range devs {
		gpus[i] = d.Index
	}
	slices.Sort(gpus)
	return Selection{GPUs: slices.Compact(gpus)}
}

// add adds one id of a list to the selection.
func (s *Selection) add(id string, devs []Device) error {
	num := id
	switch lower := strings.ToLower(id); {
	case lower == "":
		return nil
	case lower == "cpu" || lower == "-1":
		s.CPU = true
		return nil
	case strings.HasPrefix(lower, "gpu"):
		num = id[len("gpu"):]
	}
	idx, err := strconv.Atoi(num)
	if err != nil || idx < 0 || strings.HasPrefix(num, "+") {
		return fmt.Errorf("%w: load_on_devices entry %q is not a GPU index or \"cpu\" (\"*\" must stand alone)", ErrBadDeviceID, id)
	}
	if !slices.ContainsFunc(devs, func(d Device) bool { return d.Index == idx }) {
		return fmt.Errorf("%w: load_on_devices names gpu %d, but this host has %s", ErrUnknownDevice, idx, listIndexes(devs))
	}
	s.GPUs = append(s.GPUs, idx)
	return nil
}
