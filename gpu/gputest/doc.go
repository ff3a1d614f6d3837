// Package gputest provides a fake NVML library with chosen GPU figures, for
// tests that go through the gpu package's real NVML code path on hosts
// without a GPU.
//
// [New] builds on go-nvml's DGX A100 mock server (dgxa100) and replaces its
// device count, memory, utilisation and process functions with ones that
// read figures the test sets: free and reserved memory per device,
// utilisation, the GPU memory each PID holds (or that NVML cannot tell it),
// MIG mode with MIG devices ([Server.SetMIG]), and the failures of real
// hosts: a lost device ([Server.FailDevice]), a handle a container's cgroup
// refuses ([Server.FailHandle]), a process listing that fails
// ([Server.FailProcesses]).
package gputest
