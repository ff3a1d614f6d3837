package gpu_test

import (
	"errors"
	"math"
	"testing"

	"github.com/switchyard/switchyard/gpu"
)

// devices returns A100-40GB-sized devices 0..n-1 with the given free memory.
func devices(freeMiB ...uint64) []gpu.Device {
	devs := make([]gpu.Device, len(freeMiB))
	for i, free := range freeMiB {
		devs[i] = gpu.Device{Index: i, TotalMiB: 40960, FreeMiB: free, UsedMiB: 40960 - free}
	}
	return devs
}

func TestPlace(t *testing.T) {
	tests := []struct {
		name    string
		devs    []gpu.Device
		req     gpu.Request
		want    int
		wantErr error
		wantMsg string
	}{
		{name: "only device with room", devs: devices(2300, 9000, 1200),
			req: gpu.Request{RequiredMiB: 8000, ReservedMiB: 500}, want: 1},
		{name: "room is exactly enough", devs: devices(8499, 8500),
			req: gpu.Request{RequiredMiB: 8000, ReservedMiB: 500}, want: 1},
		{name: "most free memory wins", devs: devices(10000, 30000, 20000),
			req: gpu.Request{RequiredMiB: 8000}, want: 1},
		{name: "lowest index breaks ties", devs: devices(30000, 30000, 30000), want: 0},
		{name: "spread before doubling up", devs: devices(30000, 20000),
			req: gpu.Request{RequiredMiB: 8000, Placed: map[int]int{0: 1}}, want: 1},
		{name: "double up on the freest once spread", devs: devices(30000, 20000, 25000),
			req: gpu.Request{Placed: map[int]int{0: 1, 1: 1, 2: 1}}, want: 0},
		{name: "spread skips a device without room", devs: devices(30000, 1000, 20000),
			req: gpu.Request{RequiredMiB: 8000, Placed: map[int]int{0: 1}}, want: 2},
		{name: "double up when the empty device has no room", devs: devices(30000, 1000),
			req: gpu.Request{RequiredMiB: 8000, Placed: map[int]int{0: 1}}, want: 0},
		{name: "allowed devices only", devs: devices(30000, 10000, 20000),
			req: gpu.Request{Allowed: []int{2, 1}}, want: 2},
		{name: "devices out of order", devs: []gpu.Device{{Index: 3, FreeMiB: 100}, {Index: 1, FreeMiB: 100}}, want: 1},
		{name: "no check with zero figures", devs: devices(0, 0), want: 0},
		{name: "negative figures count as zero", devs: devices(0),
			req: gpu.Request{RequiredMiB: -5, ReservedMiB: -5}, want: 0},
		{name: "huge figures do not overflow", devs: []gpu.Device{{Index: 0, FreeMiB: math.MaxUint64}},
			req: gpu.Request{RequiredMiB: math.MaxInt64, ReservedMiB: 1}, wantErr: gpu.ErrInsufficientMemory},
		{name: "reserved alone is checked", devs: devices(400, 600),
			req: gpu.Request{ReservedMiB: 500}, want: 1},
		{name: "none fits", devs: devices(2300, 1200),
			req:     gpu.Request{RequiredMiB: 8000, ReservedMiB: 500},
			wantErr: gpu.ErrInsufficientMemory,
			wantMsg: "gpu: not enough memory: model needs 8000 MiB + 500 MiB reserved; gpu 0 has 2300 MiB free of 40960, gpu 1 has 1200 MiB free of 40960"},
		{name: "message names only allowed devices", devs: devices(40000, 1200, 300),
			req:     gpu.Request{Allowed: []int{2, 1}, RequiredMiB: 2000},
			wantErr: gpu.ErrInsufficientMemory,
			wantMsg: "gpu: not enough memory: model needs 2000 MiB + 0 MiB reserved; gpu 1 has 1200 MiB free of 40960, gpu 2 has 300 MiB free of 40960"},
		{name: "free memory below reserved", devs: devices(400),
			req:     gpu.Request{ReservedMiB: 500},
			wantErr: gpu.ErrInsufficientMemory,
			wantMsg: "gpu: not enough memory: model needs 0 MiB + 500 MiB reserved; gpu 0 has 400 MiB free of 40960"},
		{name: "unknown allowed device", devs: devices(1000, 1000),
			req:     gpu.Request{Allowed: []int{0, 5}},
			wantErr: gpu.ErrUnknownDevice, wantMsg: "gpu: no such device: gpu 5 (this host has gpu 0, gpu 1)"},
		{name: "no devices", wantErr: gpu.ErrNoDevice},
		{name: "empty allowed list", devs: devices(1000), req: gpu.Request{Allowed: []int{}}, wantErr: gpu.ErrNoDevice},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := gpu.Place(tt.devs, tt.req)
			if tt.wantErr != nil {
				checkPlaceErr(t, got, err, tt.wantErr, tt.wantMsg)
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("Place = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

func checkPlaceErr(t *testing.T, got int, err, wantErr error, wantMsg string) {
	t.Helper()
	if got != -1 || !errors.Is(err, wantErr) {
		t.Fatalf("Place = %d, %v; want -1 and %v", got, err, wantErr)
	}
	if wantMsg != "" && err.Error() != wantMsg {
		t.Errorf("message\n %q\nwant\n %q", err, wantMsg)
	}
}

// TestPlaceSpreadsWorkers places workers one after another, as the worker
// package does, and checks they fill every device before any doubles up.
func TestPlaceSpreadsWorkers(t *testing.T) {
	devs := devices(30000, 30000, 30000)
	placed := map[int]int{}
	var order []int
	for range 6 {
		idx, err := gpu.Place(devs, gpu.Request{RequiredMiB: 5000, Placed: placed})
		if err != nil {
			t.Fatalf("Place: %v", err)
		}
		placed[idx]++
		devs[idx].FreeMiB -= 5000
		order = append(order, idx)
	}
	want := []int{0, 1, 2, 0, 1, 2}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("placement order %v, want %v", order, want)
		}
	}
}

func TestCheckHost(t *testing.T) {
	tests := []struct {
		name               string
		available          uint64
		required, reserved int64
		wantMsg            string
	}{
		{name: "fits", available: 10000, required: 8000, reserved: 500},
		{name: "exactly fits", available: 8500, required: 8000, reserved: 500},
		{name: "no figures", available: 0},
		{name: "negative figures", available: 0, required: -1, reserved: -1},
		{name: "too little", available: 2300, required: 8000, reserved: 500,
			wantMsg: "gpu: not enough memory: model needs 8000 MiB + 500 MiB reserved; cpu has 2300 MiB available"},
		{name: "reserved alone", available: 100, reserved: 500,
			wantMsg: "gpu: not enough memory: model needs 0 MiB + 500 MiB reserved; cpu has 100 MiB available"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := gpu.CheckHost(tt.available, tt.required, tt.reserved)
			if tt.wantMsg == "" {
				if err != nil {
					t.Errorf("CheckHost: %v", err)
				}
				return
			}
			if !errors.Is(err, gpu.ErrInsufficientMemory) || err.Error() != tt.wantMsg {
				t.Errorf("CheckHost = %v, want %q wrapping ErrInsufficientMemory", err, tt.wantMsg)
			}
		})
	}
}
