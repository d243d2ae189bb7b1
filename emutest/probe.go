package emutest

import (
	"sync"
	"sync/atomic"

	"github.com/emud-dev/emud/sim"
)

// PCT spreads its change points over the scheduling steps of a run; a
// fixed count (sim.DefaultPCTSteps) puts them past the end of a short
// test, where they change nothing. So, as "emud explore" measures its
// scenario, a search under -emutest.strategy=pct without
// -emutest.pct-steps first runs the body once on seed 1 with the random
// strategy (the probe), counts the steps of the jobs NewJob built for it,
// and spreads the change points of every run of the search over that
// many steps. The count is the search's: searches that probe run one at
// a time, and a NewJob outside them (another test running in parallel)
// would see it too, so parallel tests under pct should set
// -emutest.pct-steps.
var probe struct {
	search sync.Mutex   // held by the search whose probe set steps
	on     atomic.Bool  // NewJob is building the probe's jobs
	steps  atomic.Int64 // the probed count (0: none)
	mu     sync.Mutex   // guards jobs
	jobs   []*Job       // the probe's jobs
}

// probed is the step count the current search measured, 0 if none.
func probed() int { return int(probe.steps.Load()) }

// probeJob records j when NewJob builds it for the probe run, and says
// whether it did (the job then runs with the random strategy).
func probeJob(j *Job) {
	probe.mu.Lock()
	probe.jobs = append(probe.jobs, j)
	probe.mu.Unlock()
}

// probePCT measures PCT's step count for a search of body when the
// search runs under PCT with no -emutest.pct-steps (see probe), and
// returns done, which ends the search's hold on the count. Otherwise it
// does nothing.
func probePCT(body func(uint64) error) (done func()) {
	st, c, err := flagSchedule()
	if err != nil || st != sim.StrategyPCT || c.Steps != 0 {
		return func() {}
	}
	probe.search.Lock()
	probe.on.Store(true)
	_ = call(body, 1) // a failing probe still ran its steps
	probe.on.Store(false)
	probe.mu.Lock()
	steps := 0
	for _, j := range probe.jobs {
		steps += j.Sim.Steps()
	}
	probe.jobs = nil
	probe.mu.Unlock()
	probe.steps.Store(int64(steps))
	return func() {
		probe.steps.Store(0)
		probe.search.Unlock()
	}
}
