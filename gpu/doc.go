// Package gpu finds the host's NVIDIA GPUs through NVML and answers the
// memory questions the worker package asks before it starts a worker.
//
// Discovery goes through a small [Info] interface over an injected
// nvml.Interface from github.com/NVIDIA/go-nvml. [New] loads the real
// libnvidia-ml.so.1 at run time; where the library is missing it returns a
// CPU-only Info that reports no devices and no processes, so a server built
// with cgo still runs on a host without a GPU; where the library is there
// but fails, the Info has no devices either and its Err says why.
// [NewNVML] takes any nvml.Interface, which lets tests use go-nvml's mock
// servers (see the gputest subpackage).
//
// One device's failure is not every device's: [Info.Devices] lists a device
// NVML fails on with its Err set (it is down), and [Info.Processes] lists
// processes per device, each listing with its own error. A GPU in MIG mode
// is read through its MIG devices ([Slice]), whose memory and processes an
// unprivileged process may query. Memory comes from GetMemoryInfo_v2 where
// the driver has it. A process's memory that NVML cannot tell is Unknown,
// not 0.
//
// Placement is a set of pure functions over the figures Info returns:
// [Units] lists where workers can run (whole GPUs, MIG devices), [Place]
// picks one for a new GPU worker, [PlaceAll] checks that several fit, and
// [CheckHost] checks a model's memory needs against the host memory that
// [HostMemory] reads from /proc/meminfo and the cgroup's limit. A request
// that does not fit fails with an error wrapping [ErrInsufficientMemory]
// (HTTP 507) whose message carries the numbers. [Visibility] applies
// CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES; [ResolveLoadOnDevices]
// turns a load_on_devices value into device indexes.
package gpu
