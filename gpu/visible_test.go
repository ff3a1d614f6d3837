package gpu_test

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/switchyard/switchyard/gpu"
)

// lookup returns a variable lookup over env.
func lookup(env map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}
}

// host returns eight GPUs with UUIDs GPU-aaaa0, ... ; device 6 is in MIG
// mode with slices MIG-bbbb0 and MIG-bbbb1, and device 7 is down.
func host() []gpu.Device {
	devs := make([]gpu.Device, 8)
	for i := range devs {
		devs[i] = gpu.Device{Index: i, UUID: fmt.Sprintf("GPU-aaaa%d", i), Memory: &gpu.Memory{TotalMiB: 100, FreeMiB: 100}}
	}
	devs[6].MIG, devs[6].Memory = true, nil
	devs[6].Slices = []gpu.Slice{{Index: 0, UUID: "MIG-bbbb0"}, {Index: 1, UUID: "MIG-bbbb1"}}
	devs[7].Err = "GetMemoryInfo: ERROR_GPU_IS_LOST"
	return devs
}

func TestVisibility(t *testing.T) {
	tests := []struct {
		name       string
		env        map[string]string
		n          int   // devices NVML sees (a prefix of host()); 0 means all 8
		want       []int // visible indexes
		wantSlices []string
	}{
		{name: "nothing set", want: []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{name: "cuda indexes", env: map[string]string{"CUDA_VISIBLE_DEVICES": "2,3"}, want: []int{2, 3}},
		{name: "cuda order and blanks do not matter", env: map[string]string{"CUDA_VISIBLE_DEVICES": " 3 ,2"}, want: []int{2, 3}},
		{name: "cuda empty hides all", env: map[string]string{"CUDA_VISIBLE_DEVICES": ""}, want: nil},
		{name: "cuda -1 hides all", env: map[string]string{"CUDA_VISIBLE_DEVICES": "-1"}, want: nil},
		{name: "cuda list ends at an invalid entry", env: map[string]string{"CUDA_VISIBLE_DEVICES": "1,9,2"}, want: []int{1}},
		{name: "cuda list ends at an unknown uuid", env: map[string]string{"CUDA_VISIBLE_DEVICES": "1,GPU-ffff,2"}, want: []int{1}},
		{name: "cuda uuids", env: map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-aaaa4,GPU-aaaa1"}, want: []int{1, 4}},
		{name: "cuda shortened uuid", env: map[string]string{"CUDA_VISIBLE_DEVICES": "GPU-aaaa5"}, want: []int{5}},
		{name: "cuda mig uuid keeps its slice", env: map[string]string{"CUDA_VISIBLE_DEVICES": "MIG-bbbb1"}, want: []int{6}, wantSlices: []string{"MIG-bbbb1"}},
		{name: "cuda both slices", env: map[string]string{"CUDA_VISIBLE_DEVICES": "MIG-bbbb1,MIG-bbbb0"}, want: []int{6}, wantSlices: []string{"MIG-bbbb0", "MIG-bbbb1"}},
		{name: "cuda legacy mig form", env: map[string]string{"CUDA_VISIBLE_DEVICES": "MIG-GPU-aaaa6/1/0"}, want: []int{6}, wantSlices: []string{"MIG-bbbb0", "MIG-bbbb1"}},
		{name: "down devices stay listed", env: map[string]string{"CUDA_VISIBLE_DEVICES": "7"}, want: []int{7}},
		{name: "nvidia all", env: map[string]string{"NVIDIA_VISIBLE_DEVICES": "all"}, want: []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{name: "nvidia void", env: map[string]string{"NVIDIA_VISIBLE_DEVICES": "void"}, want: []int{0, 1, 2, 3, 4, 5, 6, 7}},
		{name: "nvidia none", env: map[string]string{"NVIDIA_VISIBLE_DEVICES": "none"}, want: nil},
		{name: "nvidia indexes not applied by the runtime", env: map[string]string{"NVIDIA_VISIBLE_DEVICES": "2,3"}, want: []int{2, 3}},
		{name: "nvidia indexes applied by the runtime", env: map[string]string{"NVIDIA_VISIBLE_DEVICES": "2,3"}, n: 2, want: []int{0, 1}},
		{name: "nvidia uuids", env: map[string]string{"NVIDIA_VISIBLE_DEVICES": "GPU-aaaa0,GPU-aaaa3"}, want: []int{0, 3}},
		{name: "nvidia mig index", env: map[string]string{"NVIDIA_VISIBLE_DEVICES": "6:1"}, want: []int{6}, wantSlices: []string{"MIG-bbbb1"}},
		{name: "both must allow", env: map[string]string{"NVIDIA_VISIBLE_DEVICES": "1,2,3", "CUDA_VISIBLE_DEVICES": "3,4"}, want: []int{3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			devs := host()
			if tt.n > 0 {
				devs = devs[:tt.n]
			}
			v := gpu.NewVisibility(lookup(tt.env))
			got := v.Filter(devs)
			var idx []int
			var slices []string
			for _, d := range got {
				idx = append(idx, d.Index)
				if d.Index == 6 {
					for _, s := range d.Slices {
						slices = append(slices, s.UUID)
					}
				}
			}
			if !reflect.DeepEqual(idx, tt.want) {
				t.Errorf("visible %v, want %v", idx, tt.want)
			}
			if tt.wantSlices != nil && !reflect.DeepEqual(slices, tt.wantSlices) {
				t.Errorf("slices of gpu 6 %v, want %v", slices, tt.wantSlices)
			}
			if !reflect.DeepEqual(v.Indexes(devs), tt.want) {
				t.Errorf("Indexes = %v, want %v", v.Indexes(devs), tt.want)
			}
		})
	}
}

func TestVisibilityDescribe(t *testing.T) {
	if got := gpu.NewVisibility(lookup(nil)).Describe(host()); got != "no visibility variable is set" {
		t.Errorf("Describe = %q", got)
	}
	v := gpu.NewVisibility(lookup(map[string]string{"CUDA_VISIBLE_DEVICES": "9"}))
	if got := v.Describe(host()); got != "CUDA_VISIBLE_DEVICES=9 leaves no GPU" {
		t.Errorf("Describe = %q", got)
	}
}

func FuzzVisibility(f *testing.F) {
	for _, s := range []string{"0,1", "GPU-aaaa1", "MIG-bbbb0", "6:1", "none", "", "-1", "1,,2", "MIG-GPU-x/1/2"} {
		f.Add(s, s)
	}
	f.Fuzz(func(t *testing.T, cuda, nvidia string) {
		devs := host()
		v := gpu.NewVisibility(lookup(map[string]string{"CUDA_VISIBLE_DEVICES": cuda, "NVIDIA_VISIBLE_DEVICES": nvidia}))
		prev := -1
		for _, d := range v.Filter(devs) {
			if d.Index <= prev || d.Index >= len(devs) {
				t.Fatalf("device %d out of order or unknown", d.Index)
			}
			prev = d.Index
			for _, s := range d.Slices {
				if d.Index != 6 {
					t.Fatalf("slice %s on gpu %d", s.UUID, d.Index)
				}
			}
		}
	})
}
