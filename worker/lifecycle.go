package worker

import (
	"strings"

	"github.com/switchyard/switchyard/api"
)

// A model's lifecycle: where a registered model is in its life, the events
// that move it, and what each transition makes the model do. The step
// function is in lifecycle_step.go, the driver in model_lifecycle.go, and
// the diagram in docs/architecture.md (Lifecycle of a model).

// modelState is where a model is in its life: one of the phases below,
// and, once the registry shuts down, draining as well (stDraining).
type modelState uint8

// The phases of a model's life.
const (
	stPending         modelState = iota // registered: its first load has not ended (requirements, then its minimum)
	stBlocked                           // registered at startup, pinned to GPUs NVML cannot use: FAILED once launched
	stLoading                           // loading again for a scale: revived from FAILED, or scaled while unloaded or unloading
	stLoadingOnDemand                   // loading for the requests that wait: no room (507) or no request leaves it unloaded
	stReady                             // loaded; without a minimum it may hold no worker, and a request starts one
	stUnloading                         // evicted: its workers leave; a request that came meanwhile loads it again after
	stUnloadingReload                   // evicted, then scaled: it loads again once its workers have left
	stUnloaded                          // registered without workers: its next request or scale loads it
	stFailed                            // FAILED: retry_threshold failures in a row, every GPU down, or no memory for a load not on demand; a scale revives it
	stBlockedFailed                     // FAILED for good (pinned to GPUs NVML cannot use): no scale revives it
	stRemoved                           // unregistered, replaced, dropped or shut down

	numPhases = iota
)

// stDraining marks a model whose registry shuts down: its queue takes no
// new job and its workers leave once the queue is empty. A draining model
// steps as its phase does and stays draining; only removal ends it.
const stDraining modelState = 0x80

var phaseNames = [numPhases]string{
	"pending", "blocked", "loading", "loading-on-demand", "ready", "unloading",
	"unloading-reload", "unloaded", "failed", "blocked-failed", "removed",
}

// String names the state: "ready", "ready+draining".
func (s modelState) String() string {
	name := "state?"
	if p := s.phase(); int(p) < numPhases {
		name = phaseNames[p]
	}
	if s.draining() {
		name += "+draining"
	}
	return name
}

// allModelStates lists every state a model can be in: each phase, and
// each phase but removed while draining.
func allModelStates() []modelState {
	var out []modelState
	for p := range modelState(numPhases) {
		out = append(out, p)
	}
	for p := range modelState(numPhases) {
		if p != stRemoved {
			out = append(out, p|stDraining)
		}
	}
	return out
}

// refuses reports whether the state refuses event e: nothing would change,
// and the driver answers so (a request to a FAILED model, a scale of a
// removed one).
func (s modelState) refuses(e modelEvent) bool {
	_, _, ok := s.step(e)
	return !ok
}

// phase is the state without the draining mark.
func (s modelState) phase() modelState { return s &^ stDraining }

// draining reports whether the registry shuts down.
func (s modelState) draining() bool { return s&stDraining != 0 }

// in reports whether the state's phase is one of phases.
func (s modelState) in(phases ...modelState) bool {
	for _, p := range phases {
		if s.phase() == p {
			return true
		}
	}
	return false
}

// loading reports whether the model loads: its first load, a reload, or
// a load on demand.
func (s modelState) loading() bool {
	return s.in(stPending, stBlocked, stLoading, stLoadingOnDemand)
}

// firstLoad reports whether the model's first load has not ended.
func (s modelState) firstLoad() bool { return s.in(stPending, stBlocked) }

// failed reports whether the model is FAILED.
func (s modelState) failed() bool { return s.in(stFailed, stBlockedFailed) }

// unloading reports whether the model's workers leave after an eviction.
func (s modelState) unloading() bool { return s.in(stUnloading, stUnloadingReload) }

// gone reports whether a worker that comes up now is not wanted: the model
// is FAILED, removed, unloading or unloaded.
func (s modelState) gone() bool {
	return s.failed() || s.unloading() || s.in(stUnloaded, stRemoved)
}

// onDemand reports whether the model is not loaded because it loads on
// demand: unloaded, unloading, or loading for a request.
func (s modelState) onDemand() bool {
	return s.unloading() || s.in(stUnloaded, stLoadingOnDemand)
}

// leaving reports whether what the model's workers hold is on its way
// back: it unloads, has FAILED or was removed.
func (s modelState) leaving() bool { return s.unloading() || s.failed() || s.in(stRemoved) }

// word is DJL's word for the state: PENDING, FAILED, or READY (which
// /ping and describe refine to Healthy or Unhealthy).
func (s modelState) word() string {
	switch {
	case s.loading() || s.unloading() || s.in(stUnloaded):
		return api.StatusPending
	case s.failed():
		return api.StatusFailed
	}
	return api.StatusReady
}

// modelEvent is what happens to a model: the registry launches it, its
// workers come up, fail and leave, requests and management calls come.
type modelEvent uint8

// The events of a model's life.
const (
	evLaunch           modelEvent = iota // launched: its requirements are installed; its minimum starts
	evLaunchUnloaded                     // launched to load on demand (load_on_demand): no worker starts
	evLaunchFailed                       // its requirements did not install, or it is pinned to GPUs NVML cannot use
	evWorkerUp                           // a worker loaded
	evMinimumLive                        // every group has its minimum of live workers, or a fill found no minimum
	evAllDevicesDown                     // a worker found its GPU down, and every group's GPU is down
	evWorkerFailed                       // a worker failed to start or died
	evNoMemory                           // a worker found no memory while another worker of the model serves
	evNoMemoryAlone                      // a worker found no memory while no worker of the model serves
	evRetriesExhausted                   // the failures in a row reached retry_threshold
	evWorkersGone                        // the model's last worker slot left
	evIdledOut                           // the model's last worker slot left for want of work
	evRequest                            // a request was queued, or waits as the last worker of an unloading model left
	evScale                              // a scale request
	evScaleSync                          // a synchronous scale request: the missing workers start now
	evEvict                              // the residency unloads the model, idle and not pinned, to make room
	evAbandon                            // no request waits any more for its load on demand
	evDrain                              // the registry shuts down
	evRemove                             // unregistered, replaced, dropped or shut down

	numEvents = iota
)

var eventNames = [numEvents]string{
	"launch", "launch-unloaded", "launch-failed", "worker-up", "minimum-live",
	"all-devices-down", "worker-failed", "no-memory", "no-memory-alone",
	"retries-exhausted", "workers-gone", "idled-out", "request", "scale",
	"scale-sync", "evict", "abandon", "drain", "remove",
}

// String names the event.
func (e modelEvent) String() string {
	if int(e) < numEvents {
		return eventNames[e]
	}
	return "event?"
}

// modelActs is the set of actions one transition makes the model carry
// out. The driver (Model.apply) carries them out in the order below.
type modelActs uint32

// The actions of a model's transitions.
const (
	actRecordError    modelActs = 1 << iota // the cause's error becomes the model's last error
	actCountFailure                         // one more failure in a row, with the worker's stderr; follow-up evRetriesExhausted at retry_threshold
	actForgetFailures                       // the failures in a row start again from none
	actClearError                           // forget the last error
	actLogUnloaded                          // log that the evicted model is unloaded
	actBeginLoad                            // forget when the last load ended; wake the scaler
	actStopWorkers                          // ask every worker to stop
	actNoteEvicted                          // record, count and log the eviction
	actFail                                 // FAILED: log, stop every worker, answer the queue with the failure
	actRefuseLoad                           // answer the queue with the cause's 507; log it
	actFit                                  // fit the workers to the groups' counts
	actFill                                 // fit them and start the permanent workers missing; follow-up evMinimumLive when there is no minimum
	actEndLoad                              // end the load under way: count, time and log it; its minimum residence begins
	actNoteIdle                             // record that the last worker went for want of work
	actStartScaler                          // start the model's scaler
	actLoadIfAsked                          // follow-up evRequest when a request waits

	numActs = iota
)

var actNames = [numActs]string{
	"record-error", "count-failure", "forget-failures", "clear-error", "log-unloaded",
	"begin-load", "stop-workers", "note-evicted", "fail", "refuse-load", "fit", "fill",
	"end-load", "note-idle", "start-scaler", "load-if-asked",
}

// has reports whether every action of b is in a.
func (a modelActs) has(b modelActs) bool { return a&b == b }

// String lists the actions in the order they are carried out: "fill
// start-scaler"; "-" for none.
func (a modelActs) String() string {
	var names []string
	for i := range numActs {
		if a.has(1 << i) {
			names = append(names, actNames[i])
		}
	}
	if len(names) == 0 {
		return "-"
	}
	return strings.Join(names, " ")
}
