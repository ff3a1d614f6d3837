package gputest_test

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/switchyard/switchyard/gpu/gputest"
)

func ExampleNew() {
	var lib nvml.Interface = gputest.New(30000, 1200)
	lib.Init()
	defer lib.Shutdown()
	n, _ := lib.DeviceGetCount()
	for i := range n {
		d, _ := lib.DeviceGetHandleByIndex(i)
		mem, _ := d.GetMemoryInfo()
		fmt.Printf("gpu %d: %d MiB free of %d\n", i, mem.Free>>20, mem.Total>>20)
	}
	// Output:
	// gpu 0: 30000 MiB free of 40960
	// gpu 1: 1200 MiB free of 40960
}
