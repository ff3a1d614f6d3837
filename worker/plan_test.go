package worker

import (
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/gpu"
)

// planGroup is a group of a plan test: its device (-1 for the CPU), counts
// and workers.
func planGroup(device, min, max int, workers ...workerView) groupView {
	g := &group{device: api.Device{DeviceType: "cpu", DeviceID: -1}, min: min, max: max}
	if device >= 0 {
		g.device = api.Device{DeviceType: "gpu", DeviceID: device}
	}
	return groupView{g: g, gpu: device >= 0, device: device, min: min, max: max, workers: workers}
}

// pw is a permanent worker of a plan test, tw a temporary one.
func pw(id int, state string) workerView { return workerView{w: &run{id: id}, state: state} }
func tw(id int, state string) workerView {
	return workerView{w: &run{id: id}, state: state, temporary: true}
}

// onGPU places a worker view on a GPU or MIG device.
func onGPU(w workerView, unit string) workerView { w.unit = unit; return w }

// gpuFree returns devices with the given free memory, in MiB.
func gpuFree(free ...uint64) []gpu.Device {
	out := make([]gpu.Device, len(free))
	for i, f := range free {
		out[i] = gpu.Device{Index: i, UUID: "GPU-" + string(rune('a'+i)), Memory: &gpu.Memory{TotalMiB: 40000, FreeMiB: f}}
	}
	return out
}

func TestPlan(t *testing.T) {
	ready := func(queued int, groups ...groupView) scaleView {
		return scaleView{active: true, ready: true, queued: queued, batchSize: 1, fill: true, grow: true, groups: groups}
	}
	with := func(v scaleView, change func(*scaleView)) scaleView { change(&v); return v }
	tests := []struct {
		name    string
		view    scaleView
		want    []string
		wantWhy bool
	}{
		{"nothing to do", ready(0, planGroup(-1, 1, 2, pw(1, workerReady))), nil, false},
		{"inactive: failed, removed or an idle drain", with(ready(9, planGroup(-1, 2, 2)), func(v *scaleView) { v.active = false }), nil, false},
		{"fill the minimum", ready(0, planGroup(-1, 2, 3)), []string{"start permanent on cpu", "start permanent on cpu"}, false},
		{"missing workers are not filled without fill", with(ready(0, planGroup(-1, 2, 3)), func(v *scaleView) { v.fill = false }), nil, false},
		{"filling comes before a temporary worker", ready(9, planGroup(-1, 2, 3, pw(1, workerBusy))), []string{"start permanent on cpu"}, false},
		{"promote the busiest temporary worker",
			ready(0, planGroup(-1, 2, 3, pw(1, workerReady), tw(2, workerStarting), tw(3, workerBusy))),
			[]string{"retag 3 permanent"}, false},
		{"demote what does not serve first",
			ready(0, planGroup(-1, 0, 3, pw(1, workerBusy), pw(2, workerBackoff))),
			[]string{"retag 2 temporary", "retag 1 temporary"}, false},
		{"stop beyond the maximum: temporary first, idle before busy",
			ready(0, planGroup(-1, 1, 1, tw(1, workerBusy), pw(2, workerReady), tw(3, workerReady))),
			[]string{"stop 3", "stop 1"}, false},
		{"stop a permanent one when the temporary ones are not enough",
			ready(0, planGroup(-1, 0, 0, pw(1, workerReady))),
			[]string{"retag 1 temporary", "stop 1"}, false},
		{"workers already stopping do not count",
			ready(0, planGroup(-1, 1, 1, pw(1, workerReady), workerView{w: &run{id: 2}, state: workerBusy, stopping: true})),
			nil, false},
		{"a long queue gets a temporary worker", ready(3, planGroup(-1, 1, 3, pw(1, workerBusy))), []string{"start temporary on cpu"}, false},
		{"a short queue does not", ready(2, planGroup(-1, 1, 3, pw(1, workerBusy))), nil, false},
		{"no worker alive: one request is enough", ready(1, planGroup(-1, 0, 1)), []string{"start temporary on cpu"}, false},
		{"nothing queued, no worker alive", ready(0, planGroup(-1, 0, 1)), nil, false},
		{"one worker starts at a time", ready(9, planGroup(-1, 1, 3, pw(1, workerBusy), tw(2, workerStarting))), nil, false},
		{"not before the model has loaded", with(ready(9, planGroup(-1, 0, 3)), func(v *scaleView) { v.ready = false }), nil, false},
		{"not without grow", with(ready(9, planGroup(-1, 0, 3)), func(v *scaleView) { v.grow = false }), nil, false},
		{"not beyond the maximum", ready(9, planGroup(-1, 1, 1, pw(1, workerBusy))), nil, false},
		{"the GPU with room",
			with(ready(9, planGroup(0, 1, 2, onGPU(pw(1, workerBusy), "GPU-a")), planGroup(1, 0, 2)), func(v *scaleView) {
				v.devices, v.needs = gpuFree(1000, 30000), memoryNeeds{gpuRequired: 2000, gpuReserved: 500}
			}),
			[]string{"start temporary on gpu1"}, false},
		{"the GPU with fewer of the model's workers",
			with(ready(9, planGroup(0, 1, 2, onGPU(pw(1, workerBusy), "GPU-a")), planGroup(1, 0, 2)), func(v *scaleView) {
				v.devices = gpuFree(30000, 20000)
			}),
			[]string{"start temporary on gpu1"}, false},
		{"no GPU fits: no CPU worker instead",
			with(ready(9, planGroup(0, 0, 2), planGroup(-1, 0, 2)), func(v *scaleView) {
				v.devices, v.needs = gpuFree(1000), memoryNeeds{gpuRequired: 2000}
			}),
			nil, true},
		{"GPU figures that could not be read",
			with(ready(9, planGroup(0, 0, 2)), func(v *scaleView) { v.devErr = errors.New("nvml: ERROR_UNKNOWN") }),
			nil, true},
		{"the CPU when no GPU group has room",
			with(ready(9, planGroup(0, 1, 1, onGPU(pw(1, workerBusy), "GPU-a")), planGroup(-1, 0, 2)), func(v *scaleView) {
				v.devices = gpuFree(30000)
			}),
			[]string{"start temporary on cpu"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acts, why := plan(tt.view)
			var got []string
			for _, a := range acts {
				got = append(got, a.String())
			}
			if !slices.Equal(got, tt.want) || (why != nil) != tt.wantWhy {
				t.Errorf("plan = %q (why %v), want %q (a reason: %v)", got, why, tt.want, tt.wantWhy)
			}
		})
	}
}

// TestPlanLeavesItsViewAlone: a plan changes nothing of the view it is
// given, so that a driver may plan twice on one view.
func TestPlanLeavesItsViewAlone(t *testing.T) {
	v := scaleView{active: true, ready: true, fill: true, grow: true, batchSize: 1,
		groups: []groupView{planGroup(-1, 0, 0, pw(1, workerReady), tw(2, workerBusy))}}
	first, _ := plan(v)
	second, _ := plan(v)
	if len(first) != 3 || !slices.Equal(first, second) {
		t.Errorf("plans %v then %v", first, second)
	}
}

func TestUnitsPlaced(t *testing.T) {
	devs := append(gpuFree(30000), gpu.Device{Index: 1, UUID: "GPU-mig", MIG: true})
	groups := []groupView{
		planGroup(0, 0, 4, onGPU(pw(1, workerReady), "GPU-a"), pw(2, workerStarting), workerView{w: &run{id: 3}, stopping: true, unit: "GPU-a"}),
		planGroup(1, 0, 4, onGPU(pw(4, workerReady), "MIG-1"), pw(5, workerStarting)),
		planGroup(-1, 0, 4, pw(6, workerReady)),
	}
	got := unitsPlaced(devs, groups)
	if want := map[string]int{"GPU-a": 2, "MIG-1": 1}; !maps.Equal(got, want) {
		t.Errorf("unitsPlaced = %v, want %v: the GPU's two active workers, the MIG device's one; one choosing a MIG device counts nowhere yet", got, want)
	}
}
