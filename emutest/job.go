package emutest

import (
	"fmt"

	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/sim"
)

// Job is the host side of a MORI program on one emulated MI355X node: one
// comm per rank (rank r on GPU r), windows, dev comms (package job). Build
// one per seed.
type Job = job.Job

// NewJob builds a node of ranks GPUs for seed, with SDMA on
// (MORI_ENABLE_SDMA=1), one comm per rank, the timing perturbation level
// of Level (realistic unless -emutest.perturb says otherwise), the
// scheduling strategy of Schedule (random unless -emutest.strategy says
// otherwise) and the race detector when -emutest.race is set.
func NewJob(seed uint64, ranks int) (*Job, error) {
	return NewJobAt(seed, ranks, Level())
}

// NewJobAt is NewJob at perturbation level l.
func NewJobAt(seed uint64, ranks int, l sim.Level) (*Job, error) {
	st, pct, err := Schedule()
	if err != nil {
		return nil, err
	}
	return NewJobWith(seed, ranks, Options{Perturb: l, Strategy: st, PCT: pct, Race: Race()})
}

// Options are what NewJobWith takes beyond the seed and the ranks.
type Options struct {
	Perturb sim.Level
	// Strategy is how the scheduler makes the choices the seed fixes
	// (sim.StrategyRandom, the zero value, or sim.StrategyPCT); PCT
	// configures sim.StrategyPCT (zero fields take sim's defaults).
	Strategy sim.Strategy
	PCT      sim.PCT
	// Race turns on the happens-before race detector (package race): the
	// run then ends with a *race.Error when lanes, engines or the fabric
	// made conflicting accesses that nothing ordered.
	Race bool
}

// NewJobWith is NewJob with explicit options.
func NewJobWith(seed uint64, ranks int, o Options) (*Job, error) {
	l := o.Perturb
	if ranks < 1 {
		return nil, fmt.Errorf("emutest: NewJob with %d ranks: need at least 1", ranks)
	}
	if l > sim.MaxLevel {
		return nil, fmt.Errorf("emutest: NewJob at perturbation level %d: need 0..%d", l, sim.MaxLevel)
	}
	if o.Strategy > sim.StrategyPCT {
		return nil, fmt.Errorf("emutest: NewJob with %v: want random or pct", o.Strategy)
	}
	if o.Strategy == sim.StrategyPCT {
		if err := o.PCT.Check(); err != nil {
			return nil, fmt.Errorf("emutest: NewJob: %w", err)
		}
	} else {
		o.PCT = sim.PCT{} // unused; kept out of the digest
	}
	return job.New(job.Config{Sim: sim.Config{Seed: seed, Perturb: l, Strategy: o.Strategy, PCT: o.PCT}, Ranks: ranks, Race: o.Race})
}
