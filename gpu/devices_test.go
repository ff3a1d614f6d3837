package gpu_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/switchyard/switchyard/gpu"
)

func TestResolveLoadOnDevices(t *testing.T) {
	four := devices(1, 1, 1, 1)
	tests := []struct {
		name    string
		spec    string
		devs    []gpu.Device
		want    gpu.Selection
		wantErr error
		wantMsg string
	}{
		{name: "star is every gpu", spec: "*", devs: four, want: gpu.Selection{GPUs: []int{0, 1, 2, 3}}},
		{name: "empty is star", spec: "  ", devs: four, want: gpu.Selection{GPUs: []int{0, 1, 2, 3}}},
		{name: "only separators is star", spec: ";,", devs: four, want: gpu.Selection{GPUs: []int{0, 1, 2, 3}}},
		{name: "star without gpus is the cpu", spec: "*", want: gpu.Selection{CPU: true}},
		{name: "djl list", spec: "0;2", devs: four, want: gpu.Selection{GPUs: []int{0, 2}}},
		{name: "commas, blanks, repeats and order", spec: " 3 , 1;3; ", devs: four, want: gpu.Selection{GPUs: []int{1, 3}}},
		{name: "gpu prefix", spec: "gpu1;GPU2", devs: four, want: gpu.Selection{GPUs: []int{1, 2}}},
		{name: "cpu", spec: "cpu", devs: four, want: gpu.Selection{CPU: true}},
		{name: "minus one is the cpu", spec: "-1", want: gpu.Selection{CPU: true}},
		{name: "cpu and gpu", spec: "CPU;0", devs: four, want: gpu.Selection{GPUs: []int{0}, CPU: true}},
		{name: "unknown gpu", spec: "0;7", devs: four, wantErr: gpu.ErrUnknownDevice,
			wantMsg: "gpu: no such device: load_on_devices names gpu 7, but this host has gpu 0, gpu 1, gpu 2, gpu 3"},
		{name: "gpu on a cpu host", spec: "0", wantErr: gpu.ErrUnknownDevice,
			wantMsg: "gpu: no such device: load_on_devices names gpu 0, but this host has no GPU"},
		{name: "neuron core", spec: "nc0", devs: four, wantErr: gpu.ErrBadDeviceID,
			wantMsg: `gpu: bad device id: load_on_devices entry "nc0" is not a GPU index or "cpu" ("*" must stand alone)`},
		{name: "star in a list", spec: "0;*", devs: four, wantErr: gpu.ErrBadDeviceID},
		{name: "negative", spec: "-2", devs: four, wantErr: gpu.ErrBadDeviceID},
		{name: "plus sign", spec: "+1", devs: four, wantErr: gpu.ErrBadDeviceID},
		{name: "bad gpu suffix", spec: "gpux", devs: four, wantErr: gpu.ErrBadDeviceID},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gpu.ResolveLoadOnDevices(tt.spec, tt.devs)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || (tt.wantMsg != "" && err.Error() != tt.wantMsg) {
					t.Fatalf("error %v, want %v with message %q", err, tt.wantErr, tt.wantMsg)
				}
				return
			}
			if err != nil || !slices.Equal(got.GPUs, tt.want.GPUs) || got.CPU != tt.want.CPU {
				t.Errorf("ResolveLoadOnDevices = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func FuzzResolveLoadOnDevices(f *testing.F) {
	for _, s := range []string{"*", "0;1", "gpu2,cpu", "-1", "nc0", " 3 ; 3 ", "gpu+1"} {
		f.Add(s)
	}
	devs := devices(1, 1, 1)
	f.Fuzz(func(t *testing.T, spec string) {
		sel, err := gpu.ResolveLoadOnDevices(spec, devs)
		if err != nil {
			if !errors.Is(err, gpu.ErrBadDeviceID) && !errors.Is(err, gpu.ErrUnknownDevice) {
				t.Fatalf("error %v wraps neither sentinel", err)
			}
			return
		}
		if !slices.IsSorted(sel.GPUs) || len(slices.Compact(slices.Clone(sel.GPUs))) != len(sel.GPUs) {
			t.Fatalf("GPUs %v not ascending without repeats", sel.GPUs)
		}
		for _, idx := range sel.GPUs {
			if idx < 0 || idx >= len(devs) {
				t.Fatalf("GPU %d is not a device", idx)
			}
		}
		// The selection is accepted by Place.
		if len(sel.GPUs) > 0 {
			if _, err := gpu.Place(devs, gpu.Request{Allowed: sel.GPUs}); err != nil {
				t.Fatalf("Place rejects %v: %v", sel.GPUs, err)
			}
		}
	})
}
