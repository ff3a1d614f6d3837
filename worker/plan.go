package worker

import (
	"fmt"
	"slices"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/gpu"
)

// Scaling is a pure plan with a thin driver, as batching is: plan looks at a
// scaleView (a model's queue, groups and workers, copied under the model's
// lock, and device figures read before the lock was taken) and returns the
// actions that bring the model where its counts and its queue say; the
// driver (Model.carryOutLocked) carries them out under the same lock hold,
// called from the scaler's round (Model.grow) and from the fit and fill
// actions of the model's lifecycle (model_lifecycle.go). The plan reads
// nothing and changes nothing.

// actionKind is what an action does.
type actionKind int

const (
	startWorker actionKind = iota // start a worker in group (temporary or permanent)
	stopWorker                    // stop worker after its current batch
	retagWorker                   // make worker temporary or permanent
)

// action is one step of a plan.
type action struct {
	kind      actionKind
	group     *group // startWorker
	worker    *run   // stopWorker, retagWorker
	temporary bool   // startWorker, retagWorker: the kind the worker gets
}

// String describes the action for logs: "start temporary on gpu0",
// "stop 3", "retag 2 permanent".
func (a action) String() string {
	kind := "permanent"
	if a.temporary {
		kind = "temporary"
	}
	switch a.kind {
	case startWorker:
		return fmt.Sprintf("start %s on %s", kind, deviceLabel(a.group.device.DeviceType, a.group.device.DeviceID))
	case stopWorker:
		return fmt.Sprintf("stop %d", a.worker.id)
	}
	return fmt.Sprintf("retag %d %s", a.worker.id, kind)
}

// scaleView is what a plan decides on.
type scaleView struct {
	active    bool // the model may run workers: not FAILED or removed, and not draining an empty queue
	ready     bool // the model has loaded: temporary workers come only then
	queued    int  // requests in the queue
	batchSize int
	fill      bool // start the permanent workers a group lacks
	grow      bool // add a temporary worker when the queue asks for one
	groups    []groupView
	devices   []gpu.Device // the GPUs' figures, read before the lock; nil when not needed
	devErr    error        // why they could not be read
	needs     memoryNeeds  // one worker's memory
}

// groupView is a group as a plan sees it.
type groupView struct {
	g        *group
	gpu      bool
	device   int // the GPU's NVML index
	min, max int
	workers  []workerView
}

// workerView is a worker as a plan sees it.
type workerView struct {
	w         *run
	state     string
	temporary bool
	stopping  bool
	unit      string // the GPU or MIG device it runs on, "" while it chooses or on the CPU
}

// serving reports whether the worker takes requests and is not stopping.
func (v workerView) serving() bool {
	return !v.stopping && (v.state == workerReady || v.state == workerBusy)
}

// busyness ranks a worker by how much it is doing: not serving (starting,
// in backoff), idle, busy.
func (v workerView) busyness() int {
	switch v.state {
	case workerBusy:
		return 2
	case workerReady:
		return 1
	}
	return 0
}

func (gv *groupView) count(keep func(workerView) bool) int {
	n := 0
	for _, w := range gv.workers {
		if keep(w) {
			n++
		}
	}
	return n
}

// live counts the workers that take requests.
func (gv *groupView) live() int { return gv.count(workerView.serving) }

// active counts the workers that are not stopping.
func (gv *groupView) active() int { return gv.count(func(w workerView) bool { return !w.stopping }) }

// permanent counts the permanent workers that are not stopping.
func (gv *groupView) permanent() int {
	return gv.count(func(w workerView) bool { return !w.stopping && !w.temporary })
}

// starting reports whether a worker of the group is starting.
func (gv *groupView) starting() bool {
	return gv.count(func(w workerView) bool { return !w.stopping && w.state == workerStarting }) > 0
}

// plan returns the actions that fit v's model to its counts and its queue:
// first every group's workers to its minimum and maximum (fitCounts), then,
// with fill, the permanent workers still missing, and otherwise, with grow,
// one temporary worker when batching.ScaleUp asks for one. why says what
// kept a wanted temporary worker from a place, if anything did.
func plan(v scaleView) (acts []action, why error) {
	if !v.active {
		return nil, nil
	}
	v.groups = slices.Clone(v.groups)
	missing := false
	for i := range v.groups {
		gv := &v.groups[i]
		gv.workers = slices.Clone(gv.workers)
		acts = append(acts, gv.fitCounts()...)
		n := gv.min - gv.permanent()
		missing = missing || n > 0
		for range max(n, 0) {
			if v.fill {
				acts = append(acts, action{kind: startWorker, group: gv.g})
			}
		}
	}
	if missing || !v.grow {
		return acts, nil
	}
	g, why := v.temporaryGroup()
	if g != nil {
		acts = append(acts, action{kind: startWorker, group: g, temporary: true})
	}
	return acts, why
}

// fitCounts returns the actions that fit the group's workers to its counts:
// temporary workers become permanent while the group is below its minimum,
// permanent workers beyond the minimum become temporary, and workers beyond
// the maximum stop after their current batch, temporary ones first. It
// updates gv as the actions will.
func (gv *groupView) fitCounts() []action {
	var acts []action
	acts = append(acts, gv.retag(true, gv.min-gv.permanent())...)
	acts = append(acts, gv.retag(false, gv.permanent()-gv.min)...)
	return append(acts, gv.shrink()...)
}

// retag turns up to n workers that are temporary (when promote is set) or
// permanent (else) into the other kind. Promotion takes serving workers
// first; demotion takes the others (starting, in backoff) first.
func (gv *groupView) retag(promote bool, n int) []action {
	var acts []action
	for _, i := range gv.candidates(promote) {
		w := &gv.workers[i]
		if n <= 0 {
			break
		}
		if w.temporary == promote {
			w.temporary = !promote
			acts = append(acts, action{kind: retagWorker, worker: w.w, temporary: w.temporary})
			n--
		}
	}
	return acts
}

// shrink stops the workers beyond the group's maximum: temporary ones
// first, and of each kind those that do not serve first, then idle ones,
// then busy ones.
func (gv *groupView) shrink() []action {
	var acts []action
	extra := gv.active() - gv.max
	for _, temp := range []bool{true, false} {
		for _, i := range gv.candidates(false) {
			w := &gv.workers[i]
			if extra > 0 && w.temporary == temp {
				w.stopping = true
				acts = append(acts, action{kind: stopWorker, worker: w.w})
				extra--
			}
		}
	}
	return acts
}

// candidates returns the indexes of the workers that are not stopping,
// ordered by how much they are doing, busiest first when busyFirst is set.
func (gv *groupView) candidates(busyFirst bool) []int {
	var out []int
	for i, w := range gv.workers {
		if !w.stopping {
			out = append(out, i)
		}
	}
	slices.SortStableFunc(out, func(a, b int) int {
		ra, rb := gv.workers[a].busyness(), gv.workers[b].busyness()
		if busyFirst {
			return rb - ra
		}
		return ra - rb
	})
	return out
}

// temporaryGroup returns the group that gets a temporary worker now, if
// any: the model is ready, no worker is starting, batching.ScaleUp says the
// queue needs one, and a group has room below its maximum (and, on a GPU,
// memory: see placeTemporary).
func (v scaleView) temporaryGroup() (*group, error) {
	if !v.ready {
		return nil, nil
	}
	alive, limit := 0, 0
	var room []*groupView
	for i := range v.groups {
		gv := &v.groups[i]
		if gv.starting() {
			return nil, nil
		}
		alive += gv.live()
		limit += gv.max
		if gv.active() < gv.max {
			room = append(room, gv)
		}
	}
	if !batching.ScaleUp(v.queued, v.batchSize, alive, limit) {
		return nil, nil
	}
	return v.placeTemporary(room)
}

// placeTemporary chooses among the groups with room: the GPU or MIG device
// with room and the fewest of the model's workers, then the most free
// memory. Groups on the CPU are taken only when no GPU group has room.
func (v scaleView) placeTemporary(room []*groupView) (*group, error) {
	var allowed []int
	for _, gv := range room {
		if gv.gpu {
			allowed = append(allowed, gv.device)
		}
	}
	if len(allowed) == 0 {
		if len(room) > 0 {
			return room[0].g, nil
		}
		return nil, nil
	}
	if v.devErr != nil {
		return nil, v.devErr
	}
	u, err := gpu.Place(v.devices, v.needs.gpuRequest(allowed, unitsPlaced(v.devices, v.groups)))
	if err != nil {
		return nil, memoryError(err)
	}
	for _, gv := range room {
		if gv.gpu && gv.device == u.Device {
			return gv.g, nil
		}
	}
	return nil, nil
}

// unitsPlaced counts the active GPU workers per GPU or MIG device: where a
// worker runs, or for one still choosing, its GPU when the GPU is not in
// MIG mode.
func unitsPlaced(devs []gpu.Device, groups []groupView) map[string]int {
	uuids := map[int]string{}
	for _, d := range devs {
		if !d.MIG {
			uuids[d.Index] = d.UUID
		}
	}
	placed := map[string]int{}
	for _, gv := range groups {
		if !gv.gpu {
			continue
		}
		for _, w := range gv.workers {
			switch {
			case w.stopping:
			case w.unit != "":
				placed[w.unit]++
			case uuids[gv.device] != "":
				placed[uuids[gv.device]]++
			}
		}
	}
	return placed
}
