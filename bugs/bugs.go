package bugs

import (
	"errors"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/sim"
)

// Config is one run of a corpus program: the seed and how the seed's
// choices are made.
type Config struct {
	Seed     uint64
	Perturb  sim.Level
	Strategy sim.Strategy
	PCT      sim.PCT
	// Observe, if set, sees the node and host before anything runs (a
	// trace recorder attaches there).
	Observe func(*engine.Node, *cco.Host)
	// Race turns on the happens-before race detector: a data-race bug
	// then fails with a *race.Error on every seed, whether or not its
	// data came out wrong.
	Race bool
}

// Bug is one planted bug: a collective with the bug, and its fixed twin.
type Bug struct {
	Name string
	// Class is the bug class, in the words of the issue that lists it.
	Class string
	// Source is where the class was seen or documented.
	Source string
	// Faults is the fault injection the program runs under: the hardware
	// incident a bug of that kind reproduces (empty for program bugs).
	Faults engine.InjectSpec
	// Timing marks a bug that needs timing hardware shows but the
	// calibrated model alone never produces (a late launch, a slow link, a
	// poll at another phase, a descheduled CTA): seeded tie-breaks at
	// exact timing never find it.
	Timing bool
	// run runs the program once, buggy or fixed, and returns nil when it
	// finished with the right data, else why not (*sim.HangError,
	// *WrongData, or another failure), and what the run was.
	run func(c Config, fixed bool) (Outcome, error)
}

// Outcome is what one run of a corpus program was, whatever its verdict
// (zero if the run never started).
type Outcome struct {
	Steps    int // scheduling steps (PCT's k)
	End      sim.Time
	Digest   string // the trace digest
	Model    string // timing model name
	Ranks    int
	Injected []engine.Fault // the faults the program's fault plan injected
}

// Run runs the buggy program once. A panic in the program's host code is
// an error, not a crash.
func (b *Bug) Run(c Config) error { _, err := b.Exec(c, false); return err }

// RunFixed runs the fixed twin once.
func (b *Bug) RunFixed(c Config) error { _, err := b.Exec(c, true); return err }

// Exec runs the buggy program (or with fixed its twin) once and returns
// what the run was with its verdict.
func (b *Bug) Exec(c Config, fixed bool) (out Outcome, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("bug %s: panic: %v\n%s", b.Name, v, debug.Stack())
		}
	}()
	return b.run(c, fixed)
}

var corpus []*Bug

func register(b *Bug) { corpus = append(corpus, b) }

// Corpus returns every planted bug, sorted by name.
func Corpus() []*Bug {
	out := slices.Clone(corpus)
	slices.SortFunc(out, func(a, b *Bug) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return out
}

// Lookup returns the bug called name.
func Lookup(name string) (*Bug, error) {
	for _, b := range corpus {
		if b.Name == name {
			return b, nil
		}
	}
	names := make([]string, 0, len(corpus))
	for _, b := range Corpus() {
		names = append(names, b.Name)
	}
	return nil, fmt.Errorf("no planted bug %q; the corpus has %v", name, names)
}

// Strategy is a way to explore seeds: a perturbation level and a
// scheduling strategy.
type Strategy struct {
	Name     string
	Perturb  sim.Level
	Schedule sim.Strategy
	// PCTDepth is PCT's d (0: sim's default). PCT's k is measured per bug:
	// the steps of one run of the program under the first seed.
	PCTDepth int
}

// Strategies are the ones "emud hunt" compares: seeded tie-breaks alone
// at exact timing, under realistic timing perturbation, and PCT under
// realistic perturbation (DefaultStrategy, explore's default).
var Strategies = []Strategy{
	{Name: "ties", Perturb: sim.LevelExact, Schedule: sim.StrategyRandom},
	{Name: "perturb", Perturb: sim.LevelRealistic, Schedule: sim.StrategyRandom},
	{Name: "pct", Perturb: sim.LevelRealistic, Schedule: sim.StrategyPCT},
}

// DefaultStrategy is the strategy of "emud explore": PCT under realistic
// timing perturbation.
const DefaultStrategy = "pct"

// LookupStrategy returns the strategy called name.
func LookupStrategy(name string) (Strategy, error) {
	for _, s := range Strategies {
		if s.Name == name {
			return s, nil
		}
	}
	return Strategy{}, fmt.Errorf("no strategy %q: want ties, perturb or pct", name)
}

// Result is what hunting one bug with one strategy found.
type Result struct {
	Bug      string
	Strategy string
	Seeds    int    // seeds run: first..first+Seeds-1
	First    uint64 // the first seed that detected the bug, 0 if none did
	Detected int    // how many seeds did
	// Example is the first detection's error (the hang report's first
	// cause, or the data check).
	Example error
	// PCTSteps is the k PCT used (0 unless PCT).
	PCTSteps int
}

// SeedsToFirst is how many seeds it took to see the bug (First−first+1),
// 0 if it never showed.
func (r Result) SeedsToFirst(first uint64) int {
	if r.First == 0 {
		return 0
	}
	return int(r.First-first) + 1
}

// Rate is the detection rate over the seeds run.
func (r Result) Rate() float64 { return float64(r.Detected) / float64(max(r.Seeds, 1)) }

// PCTSteps is the k PCT uses for b: PCT spreads its change points over
// the steps of a run, measured once on seed first without PCT.
func PCTSteps(b *Bug, st Strategy, first uint64, fixed bool) int {
	out, _ := b.Exec(Config{Seed: first, Perturb: st.Perturb}, fixed)
	return max(out.Steps, 1)
}

// Hunt runs bug b (or its fixed twin) under seeds first..first+n−1 with
// strategy st and counts the seeds that detect it. Every seed runs (the
// rate needs them all); each run is independent and deterministic.
func Hunt(b *Bug, st Strategy, first uint64, n int, fixed bool) Result {
	res := Result{Bug: b.Name, Strategy: st.Name, Seeds: n}
	c := Config{Perturb: st.Perturb, Strategy: st.Schedule}
	if st.Schedule == sim.StrategyPCT {
		c.PCT = sim.PCT{Depth: st.PCTDepth, Steps: PCTSteps(b, st, first, fixed)}
		res.PCTSteps = c.PCT.Steps
	}
	for i := range n {
		c.Seed = first + uint64(i)
		_, err := b.Exec(c, fixed)
		if err == nil {
			continue
		}
		res.Detected++
		if res.First == 0 {
			res.First, res.Example = c.Seed, err
		}
	}
	return res
}

// Explain is a one-line account of a detection: the hang's first cause,
// or the error.
func Explain(err error) string {
	var h *sim.HangError
	if errors.As(err, &h) {
		if len(h.Causes) > 0 {
			return "hang: " + h.Causes[0].String()
		}
		return "hang: " + h.Error()
	}
	return err.Error()
}
