package emutest

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/sim"
)

// Job is the host side of a MORI program on one emulated MI355X node: one
// comm per rank (rank r on GPU r), windows, dev comms (package job). Build
// one per seed.
type Job = job.Job

// NewJob builds a node of ranks GPUs for seed, with SDMA on (unless
// MORI_ENABLE_SDMA says otherwise), one comm per rank, the timing
// perturbation level of Level (realistic unless -emutest.perturb or
// EMUD_PERTURB says otherwise), the scheduling strategy of Schedule
// (random unless -emutest.strategy says otherwise), the race detector
// when Race says so, a gfx1250 node under EMUD_ARCH=gfx1250, and the
// MORI_* environment (MORI_CCO_SDMA_DEBUG: the debug checks on every dev
// comm).
func NewJob(seed uint64, ranks int) (*Job, error) {
	if err := checkEnv(); err != nil {
		return nil, err
	}
	return NewJobAt(seed, ranks, Level())
}

// NewJobAt is NewJob at perturbation level l.
func NewJobAt(seed uint64, ranks int, l sim.Level) (*Job, error) {
	st, pct, err := Schedule()
	if err != nil {
		return nil, err
	}
	m, err := arch()
	if err != nil {
		return nil, err
	}
	if !probe.on.Load() {
		return NewJobWith(seed, ranks, Options{Perturb: l, Strategy: st, PCT: pct, Race: Race(), Model: m})
	}
	// The probe run of a PCT search: its steps under the random strategy.
	j, err := NewJobWith(seed, ranks, Options{Perturb: l, Race: Race(), Model: m})
	if err == nil {
		probeJob(j)
	}
	return j, err
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
	// Env is the process environment cco reads (MORI_*); nil is Env(),
	// the test binary's.
	Env cco.Env
	// Model is the timing model, and so the architecture (model.ArchOf:
	// the gfx1250 preset runs wave32 kernels); nil is the calibrated
	// MI355X.
	Model model.Model
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
	if o.Env == nil {
		o.Env = Env()
	}
	j, err := job.New(job.Config{Sim: sim.Config{Seed: seed, Perturb: l, Strategy: o.Strategy, PCT: o.PCT}, Ranks: ranks, Race: o.Race, Env: o.Env, Model: o.Model})
	if err != nil {
		return nil, err
	}
	guardLanes(j)
	return j, nil
}
