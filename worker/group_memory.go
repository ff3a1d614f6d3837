package worker

import (
	"context"
	"fmt"
	"sync"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/gpu"
)

// deviceLocks makes GPU workers on one device start one at a time, so that
// each start sees the memory the ones before it took.
type deviceLocks struct {
	mu    sync.Mutex
	locks map[int]chan struct{}
}

func (d *deviceLocks) get(id int) chan struct{} {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.locks == nil {
		d.locks = map[int]chan struct{}{}
	}
	if d.locks[id] == nil {
		d.locks[id] = make(chan struct{}, 1)
	}
	return d.locks[id]
}

// lockDevice waits for the device's start lock; CPU workers need none.
func (r *Registry) lockDevice(ctx context.Context, dev api.Device) (func(), error) {
	if dev.DeviceType != "gpu" {
		return func() {}, nil
	}
	l := r.devices.get(dev.DeviceID)
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// checkMemory checks the host, and the group's GPU, before a worker starts.
func (r *Registry) checkMemory(g *group) error {
	cfg := g.m.cfg
	if cfg.RequiredMemoryMB > 0 {
		_, avail, err := gpu.HostMemory()
		if err != nil {
			return fmt.Errorf("worker: read host memory: %w", err)
		}
		if err := gpu.CheckHost(avail, cfg.RequiredMemoryMB, cfg.ReservedMemoryMB); err != nil {
			return memoryError(err)
		}
	}
	if !g.isGPU() || cfg.GPURequiredMemoryMB <= 0 {
		return nil
	}
	devs, err := r.cfg.GPU.Devices()
	if err != nil {
		return fmt.Errorf("worker: read gpu memory: %w", err)
	}
	_, err = gpu.Place(devs, gpu.Request{
		Allowed:     []int{g.device.DeviceID},
		RequiredMiB: cfg.GPURequiredMemoryMB,
		ReservedMiB: cfg.GPUReservedMemoryMB,
	})
	return memoryError(err)
}

// memoryError makes a gpu package memory error an api one (507).
func memoryError(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", api.ErrInsufficientMemory, err)
}

// placeTemporary chooses the group for a new temporary GPU worker: the device
// with room and the fewest of the model's workers, then the most free memory.
// Groups that are full or on the CPU are passed over; nil means none fits.
func (r *Registry) placeTemporary(m *Model, candidates []*group) (*group, error) {
	var gpuGroups []*group
	placed := map[int]int{}
	for _, g := range candidates {
		if g.isGPU() {
			gpuGroups = append(gpuGroups, g)
			placed[g.device.DeviceID] = g.active()
		}
	}
	if len(gpuGroups) == 0 {
		if len(candidates) > 0 {
			return candidates[0], nil
		}
		return nil, nil
	}
	devs, err := r.cfg.GPU.Devices()
	if err != nil {
		return nil, err
	}
	allowed := make([]int, len(gpuGroups))
	for i, g := range gpuGroups {
		allowed[i] = g.device.DeviceID
	}
	id, err := gpu.Place(devs, gpu.Request{Allowed: allowed, RequiredMiB: m.cfg.GPURequiredMemoryMB,
		ReservedMiB: m.cfg.GPUReservedMemoryMB, Placed: placed})
	if err != nil {
		return nil, memoryError(err)
	}
	for _, g := range gpuGroups {
		if g.device.DeviceID == id {
			return g, nil
		}
	}
	return nil, nil
}
