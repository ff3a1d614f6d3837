// Package gputest provides a fake NVML library with chosen GPU figures, for
// tests that go through the gpu package's real NVML code path on hosts
// without a GPU.
//
// [New] builds on go-nvml's DGX A100 mock server (dgxa100) and replaces its
// device count, memory, utilisation and process functions with ones that
// read figures the test sets: free memory per device, utilisation, and the
// GPU memory each PID holds.
package gputest
