package main

import (
	"fmt"
	"runtime"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/worker"
)

// procsChoice is the front-end's GOMAXPROCS and why: set is false when
// the runtime's own value stands (from $GOMAXPROCS, or a default that
// needs no change, which the runtime keeps following when the CPU quota
// changes).
type procsChoice struct {
	procs int
	why   string
	set   bool
}

// chooseProcs decides the front-end's GOMAXPROCS. env is $GOMAXPROCS,
// which always wins (the runtime has applied it already); setting is the
// gomaxprocs key (0 for auto); def is runtime.GOMAXPROCS(0) at start: with
// env unset, the runtime's default, the host's CPUs or its cgroup's CPU
// quota, whichever is lower; workers is how many Python workers the
// models loaded at start keep.
func chooseProcs(env string, setting, def, workers int) procsChoice {
	switch {
	case env != "":
		return procsChoice{procs: def, why: "$GOMAXPROCS"}
	case setting > 0:
		return procsChoice{procs: setting, why: "gomaxprocs", set: true}
	}
	n := frontendProcs(def, workers)
	why := fmt.Sprintf("auto: the CPU quota (%d) less one per worker at start (%d), keeping at least half", def, workers)
	return procsChoice{procs: n, why: why, set: n != def}
}

// frontendProcs is the auto rule: each Python worker runs its requests on
// one thread (the GIL), so it leaves one CPU of the quota to each worker
// the host keeps, up to half of the quota; the front-end keeps the other
// half and at least one. On a 2-CPU host with any worker that is 1: Go's
// idle threads then stop spinning on a core a worker needs.
func frontendProcs(def, workers int) int {
	return max(1, def-min(max(workers, 0), def/2))
}

// setGOMAXPROCS applies chooseProcs (run once the startup models are
// registered, with their workers) and logs the value in force and why.
func setGOMAXPROCS(getenv func(string) string, setting, workers int, log *zap.Logger) {
	c := chooseProcs(getenv("GOMAXPROCS"), setting, runtime.GOMAXPROCS(0), workers)
	if c.set {
		runtime.GOMAXPROCS(c.procs)
	}
	log.Info("GOMAXPROCS", zap.Int("procs", c.procs), zap.String("from", c.why),
		zap.Int("cpus", runtime.NumCPU()), zap.Int("workers_at_start", workers))
}

// startWorkers returns how many workers the registered models keep at
// least (their groups' minimums added up).
func startWorkers(reg *worker.Registry) int {
	n := 0
	for _, name := range reg.Names() {
		rec, err := reg.Describe(name)
		if err != nil {
			continue // unregistered meanwhile
		}
		for _, g := range rec.WorkerGroups {
			n += g.MinWorkers
		}
	}
	return n
}
