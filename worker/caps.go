package worker

import (
	"fmt"
	"math"
	"runtime"
	"sync"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/properties"
)

// Caps bound the worker processes the registry may run, so that no request
// and no model folder can make it fork without end.
type Caps struct {
	PerModel int // max_workers_per_model: the sum of one model's maximum workers over its groups
	Total    int // max_workers_total: that sum over every registered model
}

// Host is what the default caps are derived from.
type Host struct {
	Cores     int    // logical CPUs
	MemoryMiB uint64 // total memory; 0 when unknown
	GPUs      int    // GPUs NVML reports
}

// Bounds of the derived caps. workerMiB is what one worker is counted at:
// an idle Python worker with numpy holds 60-100 MiB, and a worker with a
// model more, so 256 MiB is the least a host should have per worker.
const (
	workerMiB       = 256
	workersPerCore  = 16
	workersPerGPU   = 16
	minTotalWorkers = 4
	maxTotalWorkers = 4096
	minModelWorkers = 8
)

// DefaultCaps derives the caps of a host: in total, 16 workers per core and
// per GPU, but no more than one per 256 MiB of memory, from 4 to 4096; per
// model, the most useful on such a host (4 per core, 4 per GPU and 4 CPU
// workers, at least 8), but no more than the total.
func DefaultCaps(h Host) Caps {
	cores := max(h.Cores, 1)
	total := workersPerCore*cores + workersPerGPU*max(h.GPUs, 0)
	if h.MemoryMiB > 0 {
		total = int(min(uint64(total), h.MemoryMiB/workerMiB))
	}
	total = min(max(total, minTotalWorkers), maxTotalWorkers)
	perModel := max(minModelWorkers, 4*cores, 4*max(h.GPUs, 0)+4)
	return Caps{PerModel: min(perModel, total), Total: total}
}

// resolveCaps applies max_workers_per_model and max_workers_total over the
// defaults of h; a per-model cap never exceeds the total one.
func resolveCaps(srv *properties.Server, h Host) Caps {
	c := DefaultCaps(h)
	if srv.MaxWorkersTotal > 0 {
		c.Total = srv.MaxWorkersTotal
	}
	if srv.MaxWorkersPerModel > 0 {
		c.PerModel = srv.MaxWorkersPerModel
	}
	c.PerModel = min(c.PerModel, c.Total)
	return c
}

// readHost reads the host's cores and memory (through hostMemory); gpus is
// how many GPUs the server may use. Memory it cannot read counts as unknown.
func readHost(gpus int, hostMemory func() (totalMiB, availableMiB uint64, err error)) Host {
	total, _, err := hostMemory()
	if err != nil {
		total = 0
	}
	return Host{Cores: runtime.NumCPU(), MemoryMiB: total, GPUs: gpus}
}

// budget holds the caps and, for every registered model, the most workers
// it may run (the sum of its groups' maximums). A model's maximum is
// reserved before it is registered or scaled, so the sum never exceeds
// the total cap.
type budget struct {
	caps Caps

	mu   sync.Mutex
	held map[*Model]int
	sum  int
}

func newBudget(c Caps) *budget { return &budget{caps: c, held: map[*Model]int{}} }

// reserve sets what m may run to n workers. It refuses with a 400 error
// naming the cap when n exceeds the per-model cap, or when the other models
// (except the one m replaces, if any) and n together exceed the total.
func (b *budget) reserve(m *Model, n int, replaces *Model) error {
	if err := b.fits(m, n); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	others := b.sum - b.held[m] - b.held[replaces]
	if n > b.caps.Total-others {
		return fmt.Errorf("%w: model %s would have up to %d workers and the other models up to %d, more than max_workers_total (%d) together; lower its maximum workers or raise the setting",
			api.ErrBadRequest, m.name, n, others, b.caps.Total)
	}
	b.sum += n - b.held[m]
	b.held[m] = n
	return nil
}

// fits refuses n workers for m when they exceed the per-model cap.
func (b *budget) fits(m *Model, n int) error {
	if n > b.caps.PerModel {
		return fmt.Errorf("%w: model %s would have up to %d workers, more than max_workers_per_model (%d); lower its maximum workers or raise the setting",
			api.ErrBadRequest, m.name, n, b.caps.PerModel)
	}
	return nil
}

// release forgets what m may run.
func (b *budget) release(m *Model) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sum -= b.held[m]
	delete(b.held, m)
}

// sumMax adds the groups' maximums, stopping at math.MaxInt instead of
// overflowing.
func sumMax(groups []*group) int {
	n := 0
	for _, g := range groups {
		if g.max > math.MaxInt-n {
			return math.MaxInt
		}
		n += g.max
	}
	return n
}
