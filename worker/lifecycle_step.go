package worker

// The transition function of a model's lifecycle, one step function per
// phase, as etcd's raft steps a leader and a follower. Each returns the
// next state and the actions, or ok false: the phase refuses the event.
// A refusal is either an event that never comes in that phase (a worker
// event of a model that has no worker) or an answer its driver passes on
// (a request to a FAILED model, an eviction of a model that is not
// ready). lifecycle_test.go lists every transition.
//
// The launch events come once, right after registration. They are
// allowed in the phases other than pending only because a scale may come
// before the launch (while requirements install) and move the model on.

// phaseSteps is the step function of each phase.
var phaseSteps = [numPhases]func(modelState, modelEvent) (modelState, modelActs, bool){
	stPending:         stepLoading,
	stBlocked:         stepBlocked,
	stLoading:         stepLoading,
	stLoadingOnDemand: stepLoadingOnDemand,
	stReady:           stepReady,
	stUnloading:       stepUnloading,
	stUnloadingReload: stepUnloading,
	stUnloaded:        stepUnloaded,
	stFailed:          stepFailed,
	stBlockedFailed:   stepRefuse,
	stRemoved:         stepRemoved,
}

// step is the model's transition function: what e does to a model in s.
// Removal ends every state; a draining state steps as its phase does.
func (s modelState) step(e modelEvent) (modelState, modelActs, bool) {
	switch {
	case e == evRemove:
		return stRemoved, 0, true
	case s.draining():
		return s.stepDraining(e)
	case e == evDrain && s == stRemoved:
		return s, 0, true
	case e == evDrain:
		return s | stDraining, 0, true
	case int(s) >= numPhases:
		return s, 0, false
	}
	return phaseSteps[s](s, e)
}

// stepDraining steps a draining state: as its phase, staying draining.
func (s modelState) stepDraining(e modelEvent) (modelState, modelActs, bool) {
	if e == evDrain {
		return s, 0, true
	}
	next, acts, ok := s.phase().step(e)
	if ok && next != stRemoved {
		next |= stDraining
	}
	return next, acts, ok
}

// Actions that several phases share.
const (
	failNow    = actFail | actStartScaler | actRecordError // a launch whose requirements failed
	beginLoad  = actForgetFailures | actBeginLoad | actFill
	failedLoad = actCountFailure | actFail
)

// stepLaunch is what the launch events do in phase s, which has workers
// to fill (or not, when gone).
func stepLaunch(s modelState, e modelEvent) (modelState, modelActs, bool) {
	switch e {
	case evLaunch:
		if s.gone() {
			return s, actStartScaler, true
		}
		return s, actFill | actStartScaler, true
	case evLaunchUnloaded:
		return stUnloaded, actStartScaler, true
	case evLaunchFailed:
		return stFailed, failNow, true
	}
	return s, 0, false
}

// isLaunch reports whether e is one of the launch events.
func isLaunch(e modelEvent) bool { return e <= evLaunchFailed }

// stepLoading steps a model that loads (pending, or loading again): a
// worker that comes up forgets the failures, the minimum makes it ready,
// and a failure counts; no memory, or every GPU down, fails it at once.
func stepLoading(s modelState, e modelEvent) (modelState, modelActs, bool) {
	switch e {
	case evWorkerUp:
		return s, actForgetFailures, true
	case evMinimumLive:
		return stReady, 0, true
	case evWorkerFailed:
		return s, actCountFailure, true
	case evAllDevicesDown, evNoMemory, evNoMemoryAlone:
		return stFailed, failedLoad, true
	case evRetriesExhausted:
		return stFailed, actFail, true
	case evWorkersGone, evIdledOut, evRequest:
		return s, 0, true
	case evScale:
		return s, actFit, true
	case evScaleSync:
		return s, actFill, true
	}
	if isLaunch(e) {
		return stepLaunch(s, e)
	}
	return s, 0, false
}

// stepLoadingOnDemand steps a load that requests asked for: no memory
// counts as a failure while another worker serves, and otherwise answers
// the requests with the 507 and leaves the model unloaded, as does a load
// that no request waits for any more.
func stepLoadingOnDemand(s modelState, e modelEvent) (modelState, modelActs, bool) {
	switch e {
	case evNoMemory:
		return s, actCountFailure, true
	case evNoMemoryAlone:
		return stUnloaded, actRecordError | actStopWorkers | actRefuseLoad, true
	case evAbandon:
		return stUnloaded, actStopWorkers, true
	}
	return stepLoading(s, e)
}

// stepBlocked steps a model that can never start: launching fails it for
// good; requests wait until then.
func stepBlocked(s modelState, e modelEvent) (modelState, modelActs, bool) {
	switch e {
	case evLaunchFailed:
		return stBlockedFailed, failNow, true
	case evRequest:
		return s, 0, true
	}
	return s, 0, false
}

// stepReady steps a loaded model: a worker that comes up ends a load under
// way, failures count, and an eviction unloads it.
func stepReady(s modelState, e modelEvent) (modelState, modelActs, bool) {
	switch e {
	case evWorkerUp:
		return s, actForgetFailures | actEndLoad, true
	case evMinimumLive, evAllDevicesDown, evWorkersGone, evRequest:
		return s, 0, true
	case evWorkerFailed, evNoMemory, evNoMemoryAlone:
		return s, actCountFailure, true
	case evRetriesExhausted:
		return stFailed, actFail, true
	case evIdledOut:
		return s, actNoteIdle, true
	case evScale:
		return s, actFit, true
	case evScaleSync:
		return s, actFill, true
	case evEvict:
		return stUnloading, actStopWorkers | actNoteEvicted, true
	}
	if isLaunch(e) {
		return stepLaunch(s, e)
	}
	return s, 0, false
}

// stepUnloading steps an evicted model whose workers leave: once the last
// has left it is unloaded, and loads again if a scale or a request asked.
func stepUnloading(s modelState, e modelEvent) (modelState, modelActs, bool) {
	switch e {
	case evWorkersGone, evIdledOut:
		if s == stUnloadingReload {
			return stLoading, actLogUnloaded | beginLoad, true
		}
		return stUnloaded, actLogUnloaded | actLoadIfAsked, true
	case evScale, evScaleSync:
		return stUnloadingReload, 0, true
	}
	return stepGone(s, e)
}

// stepUnloaded steps a model without workers: a request loads it on
// demand, a scale loads it for good.
func stepUnloaded(s modelState, e modelEvent) (modelState, modelActs, bool) {
	switch e {
	case evRequest:
		return stLoadingOnDemand, beginLoad, true
	case evScale, evScaleSync:
		return stLoading, beginLoad, true
	}
	return stepGone(s, e)
}

// stepFailed steps a FAILED model: a scale revives it; requests are
// refused.
func stepFailed(s modelState, e modelEvent) (modelState, modelActs, bool) {
	switch e {
	case evRequest:
		return s, 0, false
	case evRetriesExhausted:
		return s, 0, true // the count that came with the failure
	case evScale:
		return stLoading, actForgetFailures | actClearError | actFit, true
	case evScaleSync:
		return stLoading, actForgetFailures | actClearError | actFill, true
	}
	return stepGone(s, e)
}

// stepGone steps a model that wants no worker (unloading, unloaded,
// FAILED): what its workers report changes nothing, requests wait.
func stepGone(s modelState, e modelEvent) (modelState, modelActs, bool) {
	switch e {
	case evWorkerUp, evMinimumLive, evAllDevicesDown, evWorkerFailed, evNoMemory,
		evNoMemoryAlone, evWorkersGone, evIdledOut, evRequest:
		return s, 0, true
	}
	if isLaunch(e) {
		return stepLaunch(s, e)
	}
	return s, 0, false
}

// stepRemoved steps a removed model: its workers leave; nothing else
// applies.
func stepRemoved(s modelState, e modelEvent) (modelState, modelActs, bool) {
	if e == evRequest || isLaunch(e) {
		return s, 0, false
	}
	return stepGone(s, e)
}

// stepRefuse refuses every event: a model FAILED for good only drains or
// goes.
func stepRefuse(s modelState, _ modelEvent) (modelState, modelActs, bool) {
	return s, 0, false
}
