package worker

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
)

// The table of a model's lifecycle (lifecycle.go, lifecycle_step.go): for
// each phase, every event it allows, with the next state and the actions;
// it refuses every event not listed. A draining state allows what its
// phase allows and stays draining (removal aside); drain does nothing more
// to it. TestLifecycle walks every state and every event against it.

type lifeRow = row[modelState, modelEvent, modelActs]

// Actions some rows share.
const (
	launchFill   = actFill | actStartScaler
	launchFail   = actRecordError | actFail | actStartScaler
	failCounted  = actCountFailure | actFail
	loadAgain    = actForgetFailures | actBeginLoad | actFill
	reviveFit    = actForgetFailures | actClearError | actFit
	reviveFill   = actForgetFailures | actClearError | actFill
	refuseNoRoom = actRecordError | actStopWorkers | actRefuseLoad
	evicted      = actStopWorkers | actNoteEvicted
)

// workerNews are the events a model's workers report.
var workerNews = []modelEvent{evWorkerUp, evMinimumLive, evAllDevicesDown, evWorkerFailed, evNoMemory, evNoMemoryAlone, evWorkersGone, evIdledOut}

// stay lists events that s allows and that change nothing.
func stay(s modelState, events ...modelEvent) []lifeRow {
	out := make([]lifeRow, len(events))
	for i, e := range events {
		out[i] = lifeRow{e, s, 0}
	}
	return out
}

// rows joins lists of rows.
func rows(lists ...[]lifeRow) []lifeRow { return slices.Concat(lists...) }

// lateLaunch is what the launch events do in a phase that a scale before
// the launch led to: the scaler starts, and workers fill when the model
// wants them (fill).
func lateLaunch(s modelState, fill bool) []lifeRow {
	launch := lifeRow{evLaunch, s, actStartScaler}
	if fill {
		launch.acts = launchFill
	}
	return []lifeRow{launch, {evLaunchUnloaded, stUnloaded, actStartScaler}, {evLaunchFailed, stFailed, launchFail}}
}

// loadingRows are the rows of a model that loads: pending (its first
// load) or loading again.
func loadingRows(s modelState) []lifeRow {
	return rows(lateLaunch(s, true), []lifeRow{
		{evWorkerUp, s, actForgetFailures},
		{evMinimumLive, stReady, 0},
		{evAllDevicesDown, stFailed, failCounted},
		{evWorkerFailed, s, actCountFailure},
		{evNoMemory, stFailed, failCounted},
		{evNoMemoryAlone, stFailed, failCounted},
		{evRetriesExhausted, stFailed, actFail},
		{evScale, s, actFit},
		{evScaleSync, s, actFill},
	}, stay(s, evWorkersGone, evIdledOut, evRequest))
}

// unloadingRows are the rows of an evicted model whose workers leave.
func unloadingRows(s modelState) []lifeRow {
	return rows(lateLaunch(s, false), stay(s, evWorkerUp, evMinimumLive, evAllDevicesDown, evWorkerFailed,
		evNoMemory, evNoMemoryAlone, evRequest), []lifeRow{{evScale, stUnloadingReload, 0}, {evScaleSync, stUnloadingReload, 0}})
}

// phaseRows is the table: every transition each phase allows, drain and
// remove aside (see lifecycleRows).
func phaseRows(p modelState) []lifeRow {
	switch p {
	case stPending, stLoading:
		return loadingRows(p)
	case stLoadingOnDemand:
		return rows(slices.DeleteFunc(loadingRows(p), func(r lifeRow) bool { return r.on == evNoMemory || r.on == evNoMemoryAlone }),
			[]lifeRow{{evNoMemory, p, actCountFailure}, {evNoMemoryAlone, stUnloaded, refuseNoRoom}, {evAbandon, stUnloaded, actStopWorkers}})
	case stBlocked:
		return []lifeRow{{evLaunchFailed, stBlockedFailed, launchFail}, {evRequest, p, 0}}
	case stReady:
		return rows(lateLaunch(p, true), []lifeRow{
			{evWorkerUp, p, actForgetFailures | actEndLoad},
			{evWorkerFailed, p, actCountFailure},
			{evNoMemory, p, actCountFailure},
			{evNoMemoryAlone, p, actCountFailure},
			{evRetriesExhausted, stFailed, actFail},
			{evIdledOut, p, actNoteIdle},
			{evScale, p, actFit},
			{evScaleSync, p, actFill},
			{evEvict, stUnloading, evicted},
		}, stay(p, evMinimumLive, evAllDevicesDown, evWorkersGone, evRequest))
	case stUnloading:
		return rows(unloadingRows(p), []lifeRow{
			{evWorkersGone, stUnloaded, actLogUnloaded | actLoadIfAsked},
			{evIdledOut, stUnloaded, actLogUnloaded | actLoadIfAsked},
		})
	case stUnloadingReload:
		return rows(unloadingRows(p), []lifeRow{
			{evWorkersGone, stLoading, actLogUnloaded | loadAgain},
			{evIdledOut, stLoading, actLogUnloaded | loadAgain},
		})
	case stUnloaded:
		return rows(lateLaunch(p, false), stay(p, workerNews...), []lifeRow{
			{evRequest, stLoadingOnDemand, loadAgain},
			{evScale, stLoading, loadAgain},
			{evScaleSync, stLoading, loadAgain},
		})
	case stFailed:
		return rows(lateLaunch(p, false), stay(p, workerNews...), stay(p, evRetriesExhausted), []lifeRow{
			{evScale, stLoading, reviveFit},
			{evScaleSync, stLoading, reviveFill},
		})
	case stRemoved:
		return stay(p, workerNews...)
	}
	return nil // stBlockedFailed: FAILED for good
}

// lifecycleRows is the table of state s, drain and remove included: a
// draining state allows what its phase allows and stays draining.
func lifecycleRows(s modelState) []lifeRow {
	if s == stRemoved {
		return rows(phaseRows(s), stay(s, evDrain, evRemove))
	}
	out := rows(phaseRows(s.phase()), []lifeRow{{evDrain, s | stDraining, 0}, {evRemove, stRemoved, 0}})
	if s.draining() {
		for i := range out {
			if out[i].next != stRemoved {
				out[i].next |= stDraining
			}
		}
	}
	return out
}

// allModelEvents lists every event.
func allModelEvents() []modelEvent {
	out := make([]modelEvent, numEvents)
	for i := range out {
		out[i] = modelEvent(i)
	}
	return out
}

// lifecycleMismatches compares a transition function with the table.
func lifecycleMismatches(step func(modelState, modelEvent) (modelState, modelActs, bool)) []string {
	return tableMismatches(allModelStates(), allModelEvents(), step, lifecycleRows)
}

// TestLifecycle walks every state and every event: each does what the
// table says, and what the table does not list is refused.
func TestLifecycle(t *testing.T) {
	states, events := allModelStates(), allModelEvents()
	if len(states) != 2*numPhases-1 {
		t.Fatalf("%d states, want each of the %d phases and all but removed draining", len(states), numPhases)
	}
	allowed := 0
	for _, s := range states {
		allowed += len(lifecycleRows(s))
	}
	t.Logf("%d states x %d events: %d transitions allowed, %d refused", len(states), len(events), allowed, len(states)*len(events)-allowed)
	for _, bad := range lifecycleMismatches(modelState.step) {
		t.Error(bad)
	}
}

// mutant is the lifecycle with one transition changed: in from, event on
// leads to next with acts, or is refused when ok is false.
func mutant(from modelState, on modelEvent, next modelState, acts modelActs, ok bool) func(modelState, modelEvent) (modelState, modelActs, bool) {
	return func(s modelState, e modelEvent) (modelState, modelActs, bool) {
		if s == from && e == on {
			return next, acts, ok
		}
		return s.step(e)
	}
}

// TestLifecycleCatchesMutations changes one transition at a time, allowing
// one the table forbids or changing one it allows: the table test must
// fail every time.
func TestLifecycleCatchesMutations(t *testing.T) {
	mutants := []struct {
		name string
		step func(modelState, modelEvent) (modelState, modelActs, bool)
	}{
		{"failed straight to ready when a worker comes up", mutant(stFailed, evWorkerUp, stReady, 0, true)},
		{"failed straight to ready on the minimum", mutant(stFailed, evMinimumLive, stReady, actEndLoad, true)},
		{"a FAILED model takes requests", mutant(stFailed, evRequest, stFailed, 0, true)},
		{"a loading model is evicted", mutant(stLoading, evEvict, stUnloading, evicted, true)},
		{"a model FAILED for good is revived", mutant(stBlockedFailed, evScale, stLoading, reviveFit, true)},
		{"an unloading model forgets the scale", mutant(stUnloading, evScale, stUnloading, 0, true)},
		{"no memory for a first load retries", mutant(stPending, evNoMemory, stPending, actCountFailure, true)},
		{"a removed model loads on demand", mutant(stRemoved, evRequest, stLoadingOnDemand, loadAgain, true)},
		{"draining ends", mutant(stReady|stDraining, evWorkerUp, stReady, actForgetFailures|actEndLoad, true)},
		{"removal refused", mutant(stUnloaded, evRemove, stUnloaded, 0, false)},
		{"a failure is not counted", mutant(stReady, evWorkerFailed, stReady, 0, true)},
	}
	for _, m := range mutants {
		bad := lifecycleMismatches(m.step)
		if len(bad) == 0 {
			t.Errorf("mutant %q passes the table", m.name)
			continue
		}
		t.Logf("mutant %q fails the table: %s", m.name, strings.Join(bad, "; "))
	}
}

// followUps are the actions that may report a follow-up event, and that
// event.
var followUps = map[modelActs]modelEvent{
	actCountFailure: evRetriesExhausted,
	actFill:         evMinimumLive,
	actLoadIfAsked:  evRequest,
}

// TestLifecycleFollowUps checks that the state a transition leads to
// allows the follow-up each of its actions may report, and that a chain of
// follow-ups, every one of them reported, ends within fire's bound.
func TestLifecycleFollowUps(t *testing.T) {
	for _, s := range allModelStates() {
		for _, e := range allModelEvents() {
			if n := chainLength(s, e); n > maxFollowUps {
				t.Errorf("%v --%v-->: a chain of %d follow-ups", s, e, n)
			}
		}
	}
}

// chainLength follows e in s and every follow-up its actions may report,
// and returns the length of the longest chain.
func chainLength(s modelState, e modelEvent) int {
	next, acts, ok := s.step(e)
	if !ok {
		return 0
	}
	longest := 0
	for act, follow := range followUps {
		if !acts.has(act) {
			continue
		}
		if _, _, ok := next.step(follow); !ok {
			return 100 // a follow-up the state refuses
		}
		longest = max(longest, 1+chainLength(next, follow))
	}
	return longest
}

// TestLifecycleReachable checks that every state can be reached from
// where a registration starts: pending, or blocked.
func TestLifecycleReachable(t *testing.T) {
	got := reachable([]modelState{stPending, stBlocked}, allModelEvents())
	for _, s := range allModelStates() {
		if !slices.Contains(got, s) {
			t.Errorf("%v cannot be reached", s)
		}
	}
}

// TestLifecyclePredicates pins what each phase means to the rest of the
// registry: DJL's word, whether it loads (busy, PENDING, its first load),
// wants no worker, loads on demand (/ping counts it as serving), and
// whether what its workers hold is leaving.
func TestLifecyclePredicates(t *testing.T) {
	tests := []struct {
		s                                                modelState
		word                                             string
		loading, first, gone, onDemand, leaving, failing bool
	}{
		{stPending, api.StatusPending, true, true, false, false, false, false},
		{stBlocked, api.StatusPending, true, true, false, false, false, false},
		{stLoading, api.StatusPending, true, false, false, false, false, false},
		{stLoadingOnDemand, api.StatusPending, true, false, false, true, false, false},
		{stReady, api.StatusReady, false, false, false, false, false, false},
		{stUnloading, api.StatusPending, false, false, true, true, true, false},
		{stUnloadingReload, api.StatusPending, false, false, true, true, true, false},
		{stUnloaded, api.StatusPending, false, false, true, true, false, false},
		{stFailed, api.StatusFailed, false, false, true, false, true, true},
		{stBlockedFailed, api.StatusFailed, false, false, true, false, true, true},
		{stRemoved, api.StatusReady, false, false, true, false, true, false},
	}
	if len(tests) != numPhases {
		t.Fatalf("%d phases listed, want %d", len(tests), numPhases)
	}
	for _, tt := range tests {
		for _, s := range []modelState{tt.s, tt.s | stDraining} {
			got := fmt.Sprint(s.word(), s.loading(), s.firstLoad(), s.gone(), s.onDemand(), s.leaving(), s.failed())
			want := fmt.Sprint(tt.word, tt.loading, tt.first, tt.gone, tt.onDemand, tt.leaving, tt.failing)
			if got != want {
				t.Errorf("%v: %s, want %s", s, got, want)
			}
		}
	}
}

// TestLifecycleNames checks that every state, event and action has a name
// of its own.
func TestLifecycleNames(t *testing.T) {
	var names []string
	for _, s := range allModelStates() {
		names = append(names, s.String())
	}
	for _, e := range allModelEvents() {
		names = append(names, e.String())
	}
	for i := range numActs {
		names = append(names, modelActs(1<<i).String())
	}
	for i, n := range names {
		if strings.Contains(n, "?") || slices.Contains(names[:i], n) {
			t.Errorf("name %q is missing or taken twice", n)
		}
	}
	if got := (actFill | actStartScaler).String(); got != "fill start-scaler" {
		t.Errorf("actions %q", got)
	}
}

// TestLifecycleDiagram checks the diagram of docs/architecture.md
// (Lifecycle of a model) against the table: one arrow per pair of phases
// that some event moves between, labelled with those events in order;
// drain, remove and the late launches (from phases other than pending and
// blocked) are described there, not drawn.
func TestLifecycleDiagram(t *testing.T) {
	doc, err := os.ReadFile("../docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "## Lifecycle of a model")
	_, block, _ := strings.Cut(section, "```mermaid\n")
	block, _, _ = strings.Cut(block, "```")
	var drawn []string
	for _, line := range strings.Split(block, "\n") {
		if line = strings.TrimSpace(line); strings.Contains(line, "-->") && !strings.HasPrefix(line, "[*]") {
			drawn = append(drawn, line)
		}
	}
	want := diagramArrows()
	slices.Sort(drawn)
	if !slices.Equal(drawn, want) {
		t.Errorf("the diagram draws\n%s\nthe table has\n%s", strings.Join(drawn, "\n"), strings.Join(want, "\n"))
	}
}

// diagramArrows are the arrows the table says the diagram has, sorted.
func diagramArrows() []string {
	var out []string
	for p := range modelState(numPhases) {
		var order []modelState
		labels := map[modelState][]string{}
		for _, r := range phaseRows(p) {
			if r.next == p || isLaunch(r.on) && !p.in(stPending, stBlocked) {
				continue
			}
			if labels[r.next] == nil {
				order = append(order, r.next)
			}
			labels[r.next] = append(labels[r.next], r.on.String())
		}
		for _, next := range order {
			slices.SortFunc(labels[next], func(a, b string) int { return slices.Index(eventNames[:], a) - slices.Index(eventNames[:], b) })
			out = append(out, fmt.Sprintf("%s --> %s: %s", diagramID(p), diagramID(next), strings.Join(labels[next], ", ")))
		}
	}
	slices.Sort(out)
	return out
}

// diagramID is a phase's name in the diagram: "loading-on-demand" is
// loadingOnDemand.
func diagramID(p modelState) string {
	words := strings.Split(p.String(), "-")
	for i := 1; i < len(words); i++ {
		words[i] = strings.ToUpper(words[i][:1]) + words[i][1:]
	}
	return strings.Join(words, "")
}
