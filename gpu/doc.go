// Package gpu finds the host's NVIDIA GPUs through NVML and answers the
// memory questions the worker package asks before it starts a worker.
//
// Discovery goes through a small [Info] interface over an injected
// nvml.Interface from github.com/NVIDIA/go-nvml. [New] loads the real
// libnvidia-ml.so.1 at run time; where the library or the driver is missing it
// returns a CPU-only Info that reports no devices and no processes, so a
// server built with cgo still runs on a host without a GPU. [NewNVML] takes
// any nvml.Interface, which lets tests use go-nvml's mock servers (see the
// gputest subpackage).
//
// Placement is a set of pure functions over the figures Info returns:
// [ResolveLoadOnDevices] turns a load_on_devices value into device indexes,
// [Place] picks the device for a new GPU worker, and [CheckHost] checks a
// model's memory needs against the host memory that [HostMemory] reads from
// /proc/meminfo. A request that does not fit fails with an error wrapping
// [ErrInsufficientMemory] (HTTP 507) whose message carries the numbers.
package gpu
