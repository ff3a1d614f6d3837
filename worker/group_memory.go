package worker

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/gpu"
)

// deviceLocks makes workers on one device start one at a time, so that each
// memory check sees the memory the ones before it took.
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

// lockDevice waits for the start lock of the group's device: a GPU's, or
// for CPU workers that need host memory, the CPU's. Other CPU workers need
// none.
func (r *Registry) lockDevice(ctx context.Context, g *group) (func(), error) {
	if !g.isGPU() && g.m.needs.hostRequired <= 0 {
		return func() {}, nil
	}
	l := r.devices.get(g.device.DeviceID)
	select {
	case l <- struct{}{}:
		return func() { <-l }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// placeWorker checks the memory one worker of g needs, on figures read now,
// and returns the GPU or MIG device it runs on ("" on the CPU). It runs with
// the device's start lock held, so the figures include what the previous
// worker took once it loaded.
func (r *Registry) placeWorker(g *group) (string, error) {
	if err := r.checkHost(g.m, 1); err != nil {
		return "", err
	}
	if !g.isGPU() {
		return "", nil
	}
	devs, err := r.gpus.fresh()
	if err != nil {
		return "", fmt.Errorf("%w: gpu memory cannot be read: %w", api.ErrInsufficientMemory, err)
	}
	u, err := gpu.Place(devs, g.m.needs.gpuRequest([]int{g.device.DeviceID}, g.m.placedUnits(devs)))
	return u.UUID, memoryError(err)
}

// checkHost checks host memory for n workers of m: DJL's rule, applied to
// GPU workers as well (a model loads through host memory), and even when
// nothing is required: available - n × required must stay above reserved.
func (r *Registry) checkHost(m *Model, n int) error {
	_, avail, err := r.cfg.HostMemory()
	if err != nil {
		return fmt.Errorf("worker: read host memory: %w", err)
	}
	err = gpu.CheckHost(avail, int64(n)*m.needs.hostRequired, m.needs.hostReserved)
	if err != nil && n > 1 {
		err = fmt.Errorf("%d workers: %w", n, err)
	}
	return memoryError(err)
}

// precheck refuses (507) a request that would start more workers than
// there is memory for: extra[g] new workers in each group, counted all
// together against the host and, one after another, against each GPU. A
// group on a GPU that is down is passed over, unless every GPU group is.
// When they do not fit now but would once idle models were unloaded, it
// lets them start: their load evicts. It refuses a load that could never
// fit within memory_budget_mb or max_loaded_models too.
func (r *Registry) precheck(m *Model, extra map[*group]int) error {
	total := 0
	for _, n := range extra {
		total += n
	}
	if total == 0 {
		return nil
	}
	err := r.checkHost(m, total)
	if err == nil {
		err = r.precheckGPUs(m, extra)
	}
	if err != nil && (!isMemoryError(err) || isDeviceDown(err)) {
		return err
	}
	roomErr, evictable := r.res.couldFit(m)
	switch {
	case err == nil:
		return roomErr
	case roomErr == nil && evictable:
		return nil
	}
	return err
}

// scalePrecheck refuses (507) a scale whose new minimum needs more workers
// than there is memory for.
func (r *Registry) scalePrecheck(m *Model, req api.ScaleRequest) error {
	m.mu.Lock()
	extra := map[*group]int{}
	for _, g := range m.groups {
		lo, _ := scaledCounts(g.min, g.max, req)
		if n := lo - g.active(); n > 0 {
			extra[g] = n
		}
	}
	m.mu.Unlock()
	return r.precheck(m, extra)
}

// precheckGPUs is precheck's GPU part.
func (r *Registry) precheckGPUs(m *Model, extra map[*group]int) error {
	var devs []gpu.Device
	var downErr error
	checked := 0
	for _, g := range m.groups { // in order, so that the first error is always the same
		n := extra[g]
		if !g.isGPU() || n == 0 {
			continue
		}
		if devs == nil {
			var err error
			if devs, err = r.gpus.fresh(); err != nil {
				return fmt.Errorf("%w: gpu memory cannot be read: %w", api.ErrInsufficientMemory, err)
			}
		}
		_, err := gpu.PlaceAll(devs, m.needs.gpuRequest([]int{g.device.DeviceID}, nil), n)
		switch {
		case errors.Is(err, gpu.ErrDeviceDown):
			downErr = err
		case err != nil:
			return memoryError(err)
		default:
			checked++
		}
	}
	if checked == 0 && downErr != nil {
		return memoryError(downErr)
	}
	return nil
}

// memoryError makes a gpu package memory error an api one (507). A gpu
// refusal already says "not enough memory", so its message stays as it is.
func memoryError(err error) error {
	switch {
	case err == nil || errors.Is(err, api.ErrInsufficientMemory):
		return err
	case errors.Is(err, gpu.ErrInsufficientMemory):
		return apiMemoryError{err}
	}
	return fmt.Errorf("%w: %w", api.ErrInsufficientMemory, err)
}

// apiMemoryError is a gpu refusal that also matches
// api.ErrInsufficientMemory, with the gpu error's message alone.
type apiMemoryError struct{ err error }

func (e apiMemoryError) Error() string   { return e.err.Error() }
func (e apiMemoryError) Unwrap() []error { return []error{api.ErrInsufficientMemory, e.err} }

// gpuRequest is a placement request for one worker on the allowed GPUs.
func (n memoryNeeds) gpuRequest(allowed []int, placed map[string]int) gpu.Request {
	return gpu.Request{Allowed: allowed, RequiredMiB: n.gpuRequired, ReservedMiB: n.gpuReserved, Placed: placed}
}

// placedUnits counts the model's active GPU workers per GPU or MIG device
// (see unitsPlaced).
func (m *Model) placedUnits(devs []gpu.Device) map[string]int {
	m.mu.Lock()
	groups := make([]groupView, len(m.groups))
	for i, g := range m.groups {
		groups[i] = g.viewLocked()
	}
	m.mu.Unlock()
	return unitsPlaced(devs, groups)
}

// isDeviceDown reports whether err means the worker's GPU is down.
func isDeviceDown(err error) bool { return errors.Is(err, gpu.ErrDeviceDown) }
