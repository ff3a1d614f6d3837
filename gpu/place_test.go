package gpu_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/gpu"
)

// devices returns A100-40GB-sized devices 0..n-1 with the given free
// memory; device i has the UUID "GPU-i".
func devices(freeMiB ...uint64) []gpu.Device {
	devs := make([]gpu.Device, len(freeMiB))
	for i, free := range freeMiB {
		devs[i] = gpu.Device{Index: i, UUID: uuid(i), Memory: &gpu.Memory{TotalMiB: 40960, FreeMiB: free, UsedMiB: 40960 - free}}
	}
	return devs
}

func uuid(i int) string { return fmt.Sprintf("GPU-%d", i) }

// down marks device i of devs down.
func down(devs []gpu.Device, i int, why string) []gpu.Device {
	devs[i].Err, devs[i].Memory = why, nil
	return devs
}

// mig puts device i of devs in MIG mode with slices of the given free
// memory, 10240 MiB each; slice j has the UUID "MIG-i-j".
func mig(devs []gpu.Device, i int, freeMiB ...uint64) []gpu.Device {
	devs[i].MIG, devs[i].Memory = true, nil
	for j, free := range freeMiB {
		devs[i].Slices = append(devs[i].Slices, gpu.Slice{Index: j, UUID: fmt.Sprintf("MIG-%d-%d", i, j),
			Memory: gpu.Memory{TotalMiB: 10240, FreeMiB: free, UsedMiB: 10240 - free}})
	}
	return devs
}

func TestPlace(t *testing.T) {
	tests := []struct {
		name    string
		devs    []gpu.Device
		req     gpu.Request
		want    string // the unit's UUID
		wantErr error
		wantMsg string
	}{
		{name: "only device with room", devs: devices(2300, 9000, 1200),
			req: gpu.Request{RequiredMiB: 8000, ReservedMiB: 500}, want: uuid(1)},
		{name: "room is exactly enough", devs: devices(8499, 8500),
			req: gpu.Request{RequiredMiB: 8000, ReservedMiB: 500}, want: uuid(1)},
		{name: "most free memory wins", devs: devices(10000, 30000, 20000),
			req: gpu.Request{RequiredMiB: 8000}, want: uuid(1)},
		{name: "lowest index breaks ties", devs: devices(30000, 30000, 30000), want: uuid(0)},
		{name: "spread before doubling up", devs: devices(30000, 20000),
			req: gpu.Request{RequiredMiB: 8000, Placed: map[string]int{uuid(0): 1}}, want: uuid(1)},
		{name: "double up on the freest once spread", devs: devices(30000, 20000, 25000),
			req: gpu.Request{Placed: map[string]int{uuid(0): 1, uuid(1): 1, uuid(2): 1}}, want: uuid(0)},
		{name: "spread skips a device without room", devs: devices(30000, 1000, 20000),
			req: gpu.Request{RequiredMiB: 8000, Placed: map[string]int{uuid(0): 1}}, want: uuid(2)},
		{name: "double up when the empty device has no room", devs: devices(30000, 1000),
			req: gpu.Request{RequiredMiB: 8000, Placed: map[string]int{uuid(0): 1}}, want: uuid(0)},
		{name: "allowed devices only", devs: devices(30000, 10000, 20000),
			req: gpu.Request{Allowed: []int{2, 1}}, want: uuid(2)},
		{name: "devices out of order", devs: []gpu.Device{{Index: 3, UUID: uuid(3), Memory: &gpu.Memory{FreeMiB: 100}},
			{Index: 1, UUID: uuid(1), Memory: &gpu.Memory{FreeMiB: 100}}}, want: uuid(1)},
		{name: "no check with zero figures", devs: devices(0, 0), want: uuid(0)},
		{name: "negative figures count as zero", devs: devices(0),
			req: gpu.Request{RequiredMiB: -5, ReservedMiB: -5}, want: uuid(0)},
		{name: "huge figures do not overflow", devs: []gpu.Device{{Index: 0, Memory: &gpu.Memory{FreeMiB: math.MaxUint64}}},
			req: gpu.Request{RequiredMiB: math.MaxInt64, ReservedMiB: 1}, wantErr: gpu.ErrInsufficientMemory},
		{name: "reserved alone is checked", devs: devices(400, 600),
			req: gpu.Request{ReservedMiB: 500}, want: uuid(1)},
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
		{name: "down devices are passed over", devs: down(devices(30000, 20000), 0, "GetMemoryInfo: ERROR_GPU_IS_LOST"), want: uuid(1)},
		{name: "some down, none fits", devs: down(devices(30000, 2000), 0, "GetMemoryInfo: ERROR_GPU_IS_LOST"),
			req:     gpu.Request{RequiredMiB: 8000},
			wantErr: gpu.ErrInsufficientMemory,
			wantMsg: "gpu: not enough memory: model needs 8000 MiB + 0 MiB reserved; gpu 0 is down (GetMemoryInfo: ERROR_GPU_IS_LOST), gpu 1 has 2000 MiB free of 40960"},
		{name: "every allowed device down", devs: down(devices(30000, 30000), 1, "DeviceGetHandleByIndex: ERROR_NO_PERMISSION"),
			req:     gpu.Request{Allowed: []int{1}},
			wantErr: gpu.ErrDeviceDown,
			wantMsg: "gpu: not enough memory: gpu: device down: model needs 0 MiB + 0 MiB reserved; gpu 1 is down (DeviceGetHandleByIndex: ERROR_NO_PERMISSION)"},
		{name: "mig slice with room", devs: mig(devices(40000, 2000), 0, 3000, 9000),
			req: gpu.Request{Allowed: []int{0}, RequiredMiB: 5000}, want: "MIG-0-1"},
		{name: "mig spreads over slices", devs: mig(devices(40000), 0, 9000, 9500),
			req: gpu.Request{RequiredMiB: 5000, Placed: map[string]int{"MIG-0-1": 1}}, want: "MIG-0-0"},
		{name: "mig slices too small", devs: mig(devices(40000), 0, 10240, 10240),
			req:     gpu.Request{RequiredMiB: 20000},
			wantErr: gpu.ErrInsufficientMemory,
			wantMsg: "gpu: not enough memory: model needs 20000 MiB + 0 MiB reserved; gpu 0 MIG-0-0 has 10240 MiB free of 10240, gpu 0 MIG-0-1 has 10240 MiB free of 10240"},
		{name: "mig without slices", devs: mig(devices(40000), 0),
			wantErr: gpu.ErrInsufficientMemory,
			wantMsg: "gpu: not enough memory: model needs 0 MiB + 0 MiB reserved; gpu 0 is in MIG mode without MIG devices"},
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
			if err != nil || got.UUID != tt.want {
				t.Errorf("Place = %+v, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func checkPlaceErr(t *testing.T, got gpu.Unit, err, wantErr error, wantMsg string) {
	t.Helper()
	if got != (gpu.Unit{}) || !errors.Is(err, wantErr) {
		t.Fatalf("Place = %+v, %v; want no unit and %v", got, err, wantErr)
	}
	if wantMsg != "" && err.Error() != wantMsg {
		t.Errorf("message\n %q\nwant\n %q", err, wantMsg)
	}
}

// TestPlaceSpreadsWorkers places workers one after another, as the worker
// package does, and checks they fill every device before any doubles up.
func TestPlaceSpreadsWorkers(t *testing.T) {
	devs := devices(30000, 30000, 30000)
	placed := map[string]int{}
	var order []int
	for range 6 {
		u, err := gpu.Place(devs, gpu.Request{RequiredMiB: 5000, Placed: placed})
		if err != nil {
			t.Fatalf("Place: %v", err)
		}
		placed[u.UUID]++
		devs[u.Device].Memory.FreeMiB -= 5000
		order = append(order, u.Device)
	}
	want := []int{0, 1, 2, 0, 1, 2}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("placement order %v, want %v", order, want)
		}
	}
}

// TestPlaceAll counts every worker a request would start: one after another,
// each taking its memory from the unit it lands on.
func TestPlaceAll(t *testing.T) {
	tests := []struct {
		name    string
		devs    []gpu.Device
		req     gpu.Request
		n       int
		want    []string
		wantErr string
	}{
		{name: "three fit on one gpu", devs: devices(30500), req: gpu.Request{RequiredMiB: 10000, ReservedMiB: 500}, n: 3,
			want: []string{uuid(0), uuid(0), uuid(0)}},
		{name: "the third does not fit", devs: devices(30000), req: gpu.Request{RequiredMiB: 10000, ReservedMiB: 500}, n: 3,
			wantErr: "gpu 0 has 10000 MiB free of 40960"},
		{name: "spread over slices", devs: mig(devices(40000), 0, 10240, 10240), req: gpu.Request{RequiredMiB: 5000}, n: 4,
			want: []string{"MIG-0-0", "MIG-0-1", "MIG-0-0", "MIG-0-1"}},
		{name: "none", devs: devices(1), n: 0, want: []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := fmt.Sprint(tt.devs[0].Memory, tt.devs[0].Slices)
			units, err := gpu.PlaceAll(tt.devs, tt.req, tt.n)
			if after := fmt.Sprint(tt.devs[0].Memory, tt.devs[0].Slices); after != before {
				t.Errorf("PlaceAll changed its input: %s, was %s", after, before)
			}
			if tt.wantErr != "" {
				if !errors.Is(err, gpu.ErrInsufficientMemory) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("PlaceAll = %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			got := []string{}
			for _, u := range units {
				got = append(got, u.UUID)
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("PlaceAll = %v, %v; want %v", got, err, tt.want)
			}
		})
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

// TestGiveTake changes the free memory of one unit in a copy, within 0 and
// the unit's total, and leaves the input alone.
func TestGiveTake(t *testing.T) {
	devs := mig(devices(30000, 40000), 1, 2000, 10000)
	given := gpu.Give(devs, uuid(0), 20000)
	given = gpu.Give(given, "MIG-1-0", 3000)
	given = gpu.Give(given, "MIG-1-1", 3000)
	if f := given[0].Memory.FreeMiB; f != 40960 {
		t.Errorf("gpu 0 after Give: %d MiB free, want its total 40960", f)
	}
	if a, b := given[1].Slices[0].Memory.FreeMiB, given[1].Slices[1].Memory.FreeMiB; a != 5000 || b != 10240 {
		t.Errorf("slices after Give: %d and %d MiB free, want 5000 and 10240", a, b)
	}
	taken := gpu.Take(devs, uuid(0), 50000)
	if f := taken[0].Memory.FreeMiB; f != 0 {
		t.Errorf("gpu 0 after Take: %d MiB free, want 0", f)
	}
	if devs[0].Memory.FreeMiB != 30000 || devs[1].Slices[0].Memory.FreeMiB != 2000 {
		t.Errorf("Give or Take changed its input: %+v", devs)
	}
}
