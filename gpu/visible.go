package gpu

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Names of the variables that restrict which GPUs a process uses.
const (
	CUDAVisibleDevices   = "CUDA_VISIBLE_DEVICES"
	NVIDIAVisibleDevices = "NVIDIA_VISIBLE_DEVICES"
)

// Visibility is the set of devices a process may use according to
// CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES. The zero value allows
// every device.
type Visibility struct {
	cuda, nvidia *visList // nil: the variable allows every device
	text         string   // the variables as set, for messages
}

// visList is one variable's list of devices.
type visList struct {
	entries []visEntry
	strict  bool // CUDA: an entry that names no device hides it and every later one
	nvidia  bool // NVIDIA's: applies only where the container runtime has not
}

// visEntry is one device of a list: an NVML index (with a MIG index for
// NVIDIA's "i:j" form) or a UUID (or the start of one, as CUDA allows).
type visEntry struct {
	index, mig int // -1 when not given
	uuid       string
}

// NewVisibility reads the two variables through lookup (os.LookupEnv, or a
// map's lookup). CUDA_VISIBLE_DEVICES takes NVML indexes (CUDA's ordinals
// in PCI bus order), GPU-<uuid> and MIG-<uuid> entries, the UUIDs possibly
// shortened; as in CUDA, it hides every device when empty, and the list
// ends at its first entry that names no device. NVIDIA_VISIBLE_DEVICES
// takes "all", "none", "void", indexes, "<gpu>:<mig>" and UUIDs. A container
// runtime that applied it shows only the listed devices, renumbered from 0;
// it is therefore used only while NVML sees more devices than it lists. Where both are set, a device must be allowed by both.
func NewVisibility(lookup func(string) (string, bool)) Visibility {
	var v Visibility
	var set []string
	if s, ok := lookup(CUDAVisibleDevices); ok {
		v.cuda = parseCUDA(s)
		set = append(set, CUDAVisibleDevices+"="+s)
	}
	if s, ok := lookup(NVIDIAVisibleDevices); ok {
		v.nvidia = parseNVIDIA(s)
		set = append(set, NVIDIAVisibleDevices+"="+s)
	}
	v.text = strings.Join(set, " ")
	return v
}

// String returns the variables that restrict the devices, as set, or ""
// when none is.
func (v Visibility) String() string { return v.text }

func parseCUDA(s string) *visList {
	l := &visList{strict: true}
	for _, tok := range strings.Split(s, ",") {
		e, ok := parseEntry(strings.TrimSpace(tok), false)
		if !ok {
			break
		}
		l.entries = append(l.entries, e)
	}
	return l
}

func parseNVIDIA(s string) *visList {
	switch strings.TrimSpace(strings.ToLower(s)) {
	case "", "all", "void":
		return nil
	case "none":
		return &visList{}
	}
	l := &visList{nvidia: true}
	for _, tok := range strings.Split(s, ",") {
		if e, ok := parseEntry(strings.TrimSpace(tok), true); ok {
			l.entries = append(l.entries, e)
		}
	}
	return l
}

// parseEntry parses one entry; migIndex allows NVIDIA's "<gpu>:<mig>".
func parseEntry(tok string, migIndex bool) (visEntry, bool) {
	e := visEntry{index: -1, mig: -1}
	if strings.HasPrefix(tok, "GPU-") || strings.HasPrefix(tok, "MIG-") {
		e.uuid = tok
		return e, len(tok) > len("GPU-")
	}
	gpu, mig, hasMIG := strings.Cut(tok, ":")
	if hasMIG && !migIndex {
		return e, false
	}
	var err error
	if e.index, err = strconv.Atoi(gpu); err != nil || e.index < 0 {
		return e, false
	}
	if hasMIG {
		if e.mig, err = strconv.Atoi(mig); err != nil || e.mig < 0 {
			return e, false
		}
	}
	return e, true
}

// Filter returns the devices of devs the variables allow. A device named
// only through some of its MIG devices keeps only those. Each variable is
// read against every device NVML sees (CUDA does not read NVIDIA's
// variable), and a device must be allowed by both.
func (v Visibility) Filter(devs []Device) []Device {
	a, b := v.cuda.filter(devs), v.nvidia.filter(devs)
	var out []Device
	for _, d := range a {
		i := slices.IndexFunc(b, func(x Device) bool { return x.Index == d.Index })
		if i < 0 {
			continue
		}
		d.Slices = slicesWhere(d, func(s Slice) bool {
			return slices.ContainsFunc(b[i].Slices, func(x Slice) bool { return x.Index == s.Index })
		})
		out = append(out, d)
	}
	return out
}

// Indexes returns the NVML indexes of the devices in devs the variables
// allow.
func (v Visibility) Indexes(devs []Device) []int {
	var out []int
	for _, d := range v.Filter(devs) {
		out = append(out, d.Index)
	}
	return out
}

// filter applies one variable's list; a nil list allows everything.
func (l *visList) filter(devs []Device) []Device {
	if l == nil {
		return devs
	}
	if l.nvidia && len(l.entries) > 0 && len(devs) <= len(l.entries) {
		return devs // the container runtime applied the list: NVML sees only its devices
	}
	kept := map[int]*Device{}
	for _, e := range l.entries {
		if !e.keep(devs, kept) && l.strict {
			break
		}
	}
	var out []Device
	for _, d := range devs {
		if k := kept[d.Index]; k != nil {
			out = append(out, *k)
		}
	}
	return out
}

// keep adds what the entry names to kept, and reports whether it named
// anything. A device kept whole stays whole; one kept for some of its MIG
// devices keeps those.
func (e visEntry) keep(devs []Device, kept map[int]*Device) bool {
	for _, d := range devs {
		whole, slices := e.match(d)
		if !whole && len(slices) == 0 {
			continue
		}
		k := kept[d.Index]
		switch {
		case whole:
			d2 := d
			kept[d.Index] = &d2
		case k == nil:
			d2 := d
			d2.Slices = slices
			kept[d.Index] = &d2
		case !containsAll(k.Slices, slices):
			k.Slices = mergeSlices(d.Slices, k.Slices, slices)
		}
		return true
	}
	return false
}

// match reports whether the entry names device d whole, or which of its
// MIG devices it names.
func (e visEntry) match(d Device) (whole bool, named []Slice) {
	switch {
	case e.uuid == "" && e.index != d.Index:
		return false, nil
	case e.uuid == "" && e.mig < 0:
		return true, nil
	case e.uuid == "":
		return false, slicesWhere(d, func(s Slice) bool { return s.Index == e.mig })
	case strings.HasPrefix(e.uuid, "GPU-"):
		return d.UUID != "" && strings.HasPrefix(d.UUID, e.uuid), nil
	case strings.HasPrefix(e.uuid, "MIG-GPU-"): // CUDA 11's MIG-GPU-<uuid>/<gi>/<ci>
		gpu, _, _ := strings.Cut(strings.TrimPrefix(e.uuid, "MIG-"), "/")
		return d.UUID != "" && d.UUID == gpu, nil
	}
	return false, slicesWhere(d, func(s Slice) bool { return s.UUID != "" && strings.HasPrefix(s.UUID, e.uuid) })
}

func slicesWhere(d Device, ok func(Slice) bool) []Slice {
	var out []Slice
	for _, s := range d.Slices {
		if ok(s) {
			out = append(out, s)
		}
	}
	return out
}

func containsAll(have, want []Slice) bool {
	for _, w := range want {
		if !slices.ContainsFunc(have, func(s Slice) bool { return s.Index == w.Index }) {
			return false
		}
	}
	return true
}

// mergeSlices returns the slices of all that are in a or b, in all's order.
func mergeSlices(all, a, b []Slice) []Slice {
	var out []Slice
	for _, s := range all {
		in := func(x Slice) bool { return x.Index == s.Index }
		if slices.ContainsFunc(a, in) || slices.ContainsFunc(b, in) {
			out = append(out, s)
		}
	}
	return out
}

// Describe says which devices the variables leave, for logs and errors:
// "CUDA_VISIBLE_DEVICES=2,3 leaves gpu 2, gpu 3".
func (v Visibility) Describe(devs []Device) string {
	if v.text == "" {
		return "no visibility variable is set"
	}
	return fmt.Sprintf("%s leaves %s", v.text, listIndexes(v.Filter(devs)))
}
