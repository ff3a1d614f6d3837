package gpu_test

import (
	"errors"
	"fmt"
	"strings"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/gpu"
	"github.com/switchyard/switchyard/gpu/gputest"
)

// ExampleNew opens the host's GPUs; on a host without the NVIDIA driver the
// Info reports none.
func ExampleNew() {
	info := gpu.New(zap.NewNop())
	defer info.Close()
	devs, err := info.Devices()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range devs {
		switch {
		case !d.Up():
			fmt.Printf("gpu %d is down: %s\n", d.Index, d.Err)
		case d.Memory != nil:
			fmt.Printf("gpu %d: %s, %d MiB free\n", d.Index, d.Name, d.Memory.FreeMiB)
		}
	}
}

// ExampleNewNVML runs the NVML code path on a fake library with two GPUs.
func ExampleNewNVML() {
	lib := gputest.New(30000, 1200)
	lib.SetProcess(0, 4242, 852)
	info, err := gpu.NewNVML(lib, zap.NewNop())
	if err != nil {
		fmt.Println(err)
		return
	}
	defer info.Close()
	devs, _ := info.Devices()
	listings, _ := info.Processes()
	for _, d := range devs {
		fmt.Printf("gpu %d: %d of %d MiB free\n", d.Index, d.Memory.FreeMiB, d.Memory.TotalMiB)
	}
	p := listings[0].Processes[0]
	fmt.Printf("pid %d holds %d MiB on gpu %d\n", p.PID, p.UsedMiB, listings[0].DeviceIndex)
	// Output:
	// gpu 0: 30000 of 40960 MiB free
	// gpu 1: 1200 of 40960 MiB free
	// pid 4242 holds 852 MiB on gpu 0
}

func ExamplePlace() {
	devs := []gpu.Device{
		{Index: 0, UUID: "GPU-a", Memory: &gpu.Memory{TotalMiB: 40960, FreeMiB: 30000}},
		{Index: 1, UUID: "GPU-b", Memory: &gpu.Memory{TotalMiB: 40960, FreeMiB: 20000}},
	}
	// gpu 0 already runs one of this model's workers: the next goes to gpu 1.
	u, _ := gpu.Place(devs, gpu.Request{RequiredMiB: 8000, ReservedMiB: 500, Placed: map[string]int{"GPU-a": 1}})
	fmt.Println("placed on gpu", u.Device, u.UUID)

	_, err := gpu.Place(devs, gpu.Request{RequiredMiB: 32000})
	fmt.Println(errors.Is(err, gpu.ErrInsufficientMemory))
	fmt.Println(err)
	// Output:
	// placed on gpu 1 GPU-b
	// true
	// gpu: not enough memory: model needs 32000 MiB + 0 MiB reserved; gpu 0 has 30000 MiB free of 40960, gpu 1 has 20000 MiB free of 40960
}

func ExampleCheckHost() {
	fmt.Println(gpu.CheckHost(16000, 8000, 500))
	fmt.Println(gpu.CheckHost(6000, 8000, 500))
	// Output:
	// <nil>
	// gpu: not enough memory: model needs 8000 MiB + 500 MiB reserved; cpu has 6000 MiB available
}

func ExampleResolveLoadOnDevices() {
	devs := []gpu.Device{{Index: 0}, {Index: 1}, {Index: 2}}
	sel, _ := gpu.ResolveLoadOnDevices("*", devs)
	fmt.Println(sel.GPUs)
	sel, _ = gpu.ResolveLoadOnDevices("2;0", devs)
	fmt.Println(sel.GPUs)
	_, err := gpu.ResolveLoadOnDevices("0;4", devs)
	fmt.Println(err)
	// Output:
	// [0 1 2]
	// [0 2]
	// gpu: no such device: load_on_devices names gpu 4, but this host has gpu 0, gpu 1, gpu 2
}

func ExampleParseMeminfo() {
	total, available, err := gpu.ParseMeminfo(strings.NewReader(
		"MemTotal:       16384000 kB\nMemFree:         1024000 kB\nMemAvailable:    8192000 kB\n"))
	fmt.Println(total, available, err)
	// Output: 16000 8000 <nil>
}

// ExampleHostMemory checks a model's needs against this host's memory.
func ExampleHostMemory() {
	_, available, err := gpu.HostMemory()
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := gpu.CheckHost(available, 8000, 500); err != nil {
		fmt.Println(err)
	}
}

// ExampleVisibility keeps the devices CUDA_VISIBLE_DEVICES names.
func ExampleVisibility() {
	env := map[string]string{"CUDA_VISIBLE_DEVICES": "2,3"}
	v := gpu.NewVisibility(func(k string) (string, bool) { s, ok := env[k]; return s, ok })
	devs := []gpu.Device{{Index: 0}, {Index: 1}, {Index: 2}, {Index: 3}}
	fmt.Println(v.Indexes(devs))
	fmt.Println(v.Describe(devs))
	// Output:
	// [2 3]
	// CUDA_VISIBLE_DEVICES=2,3 leaves gpu 2, gpu 3
}

func ExampleCPUOnly() {
	info := gpu.CPUOnly()
	devs, err := info.Devices()
	fmt.Println(len(devs), err)
	// Output: 0 <nil>
}
