package api_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchyard/switchyard/api"
)

// ExampleWorkerRecord_MarshalJSON shows the three forms of gpuMemoryMiB: a
// figure, null when NVML cannot tell, and no field on the CPU.
func ExampleWorkerRecord_MarshalJSON() {
	mib := int64(852)
	for _, w := range []api.WorkerRecord{
		{ID: 1, Status: "READY", VisibleDevices: "GPU-a", GPUMemoryMiB: &mib},
		{ID: 2, Status: "READY", VisibleDevices: "MIG-b", GPUMemoryUnknown: true},
		{ID: 3, Status: "READY"},
	} {
		w.StartTime = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
		b, _ := json.Marshal(w)
		fmt.Println(string(b))
	}
	// Output:
	// {"id":1,"pid":0,"socket":"","startTime":"2025-01-02T03:04:05Z","status":"READY","temporary":false,"visibleDevices":"GPU-a","gpuMemoryMiB":852,"rssMiB":0}
	// {"id":2,"pid":0,"socket":"","startTime":"2025-01-02T03:04:05Z","status":"READY","temporary":false,"visibleDevices":"MIG-b","rssMiB":0,"gpuMemoryMiB":null}
	// {"id":3,"pid":0,"socket":"","startTime":"2025-01-02T03:04:05Z","status":"READY","temporary":false,"rssMiB":0}
}
