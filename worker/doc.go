// Package worker is the model registry: it ties each registered model's
// configuration, bounded queue and worker groups together, and implements
// the front-end's Models interface.
//
// A model has one worker group per device it runs on (a GPU, or the CPU),
// and each group a number of worker slots between its minimum and maximum.
// One goroutine owns each slot: it starts a worker process through the
// registry's start function (package process by default), feeds it batches
// from the model's queue, restarts it with backoff when it dies, and stops
// it. A model's scaler adds temporary workers while the queue is long and
// brings every group back to its minimum. A GPU worker is pinned to one GPU
// or MIG device with CUDA_VISIBLE_DEVICES=<its UUID> and told
// --device-id 0; workers on one GPU start one at a time, each after a
// memory check (DJL's rules) on figures read once the previous one has
// loaded. NVML is never called with a model's lock held.
//
// docs/architecture.md describes the goroutines, the lock order and the way
// a request travels.
package worker
