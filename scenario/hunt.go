package scenario

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/sim"
)

// Strategy is a way to explore seeds: a perturbation level and a
// scheduling strategy.
type Strategy struct {
	Name     string
	Perturb  sim.Level
	Schedule sim.Strategy
	// PCTDepth is PCT's d (0: sim's default). PCT's k is measured per bug:
	// the steps of one run of the program under the first seed.
	PCTDepth int
	// Race runs emud's happens-before race detector (package race) on
	// every run, so a race the schedule did not turn into wrong data is
	// still a detection (hunt --race). Off, a bug counts only when it hangs,
	// fails or lands wrong data: what a release run shows.
	Race bool
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

// ParseStrategies reads a comma-separated list of strategy names (hunt's
// --strategies).
func ParseStrategies(list string) ([]Strategy, error) {
	var sts []Strategy
	for _, name := range strings.Split(list, ",") {
		st, err := LookupStrategy(strings.TrimSpace(name))
		if err != nil {
			return nil, fmt.Errorf("invalid --strategies: %w", err)
		}
		sts = append(sts, st)
	}
	return sts, nil
}

// PlantedNames lists the planted bugs, comma-separated, for errors.
func PlantedNames() string {
	var names []string
	for _, b := range PlantedBugs() {
		names = append(names, b.Name)
	}
	return strings.Join(names, ", ")
}

// PlantedNamed is the planted bugs called names (all of them when none
// is named); a name that is not a planted bug is an error listing them.
func PlantedNamed(names []string) ([]*Scenario, error) {
	if len(names) == 0 {
		return PlantedBugs(), nil
	}
	var list []*Scenario
	for _, n := range names {
		b, err := Lookup(n)
		if err != nil || b.Planted == nil {
			return nil, fmt.Errorf("no planted bug %q; the planted bugs: %s", n, PlantedNames())
		}
		list = append(list, b)
	}
	return list, nil
}

// HuntOptions are the options planted scenario sc (or its twin) runs
// with under st and seed: the scenario's defaults at the bug's hunt shape.
func HuntOptions(sc *Scenario, st Strategy, seed uint64) Options {
	o := Defaults(sc)
	if p := sc.Planted; p != nil && p.Ranks != 0 {
		o.Ranks = p.Ranks
	}
	if p := sc.Planted; p != nil && p.Bytes != 0 {
		o.Bytes = p.Bytes
	}
	if p := sc.Planted; p != nil && p.LsaSize != 0 {
		o.LsaSize = p.LsaSize
	}
	o.Seed, o.Perturb, o.Strategy = seed, st.Perturb, st.Schedule
	o.Race = o.Race || st.Race
	return o
}

// Target is what a hunt runs for planted scenario sc: sc itself, or with
// fixed its twin, at sc's hunt shape.
func Target(sc *Scenario, fixed bool) (*Scenario, error) {
	if !fixed {
		return sc, nil
	}
	return Twin(sc)
}

// PCTStepsFor is the k PCT uses for planted scenario sc (or its twin):
// PCT spreads its change points over the steps of a run, measured once on
// seed first without PCT (sim.DefaultPCTSteps when that run reports no
// outcome: it never started, or an SDMA scenario hung).
func PCTStepsFor(sc *Scenario, st Strategy, first uint64, fixed bool) int {
	run, err := Target(sc, fixed)
	if err != nil {
		return sim.DefaultPCTSteps
	}
	o := HuntOptions(sc, st, first)
	o.Strategy = sim.StrategyRandom
	rep := RunOnce(run, o)
	if rep.Outcome != nil {
		return max(rep.Outcome.Steps, 1)
	}
	return sim.DefaultPCTSteps
}

// HuntRun runs planted scenario sc (or with fixed its twin) once with st
// at seed, PCT's k pctSteps.
func HuntRun(sc *Scenario, st Strategy, seed uint64, pctSteps int, fixed bool) (*Report, error) {
	return huntRun(sc, st, seed, pctSteps, fixed, nil)
}

func huntRun(sc *Scenario, st Strategy, seed uint64, pctSteps int, fixed bool, adjust func(*Options)) (*Report, error) {
	run, err := Target(sc, fixed)
	if err != nil {
		return nil, err
	}
	o := HuntOptions(sc, st, seed)
	if adjust != nil {
		adjust(&o)
	}
	if st.Schedule == sim.StrategyPCT {
		o.PCT = sim.PCT{Depth: st.PCTDepth, Steps: pctSteps}
	}
	return RunOnce(run, o), nil
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
	// Race says the runs had the race detector on (Strategy.Race).
	Race bool
	// Failed counts the seeds that failed without detecting the bug: emud's
	// own error or the scenario's setup (StatusError), not a hang, race,
	// mismatch or misuse; FailedSeed and FailedErr are the first. They are
	// not detections (a broken setup is not a bug found). A fixed twin's
	// every failure counts as Detected.
	Failed     int
	FailedSeed uint64
	FailedErr  error
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

// Hunt runs planted scenario sc (or its fixed twin) under seeds
// first..first+n−1 with strategy st and counts the seeds that detect it: a
// hang, a failure or wrong data. Every seed runs (the rate needs them
// all); each run is independent and deterministic.
func Hunt(sc *Scenario, st Strategy, first uint64, n int, fixed bool) Result {
	return HuntRange(sc, st, first, first, n, fixed)
}

// HuntRange is Hunt of a sweep starting at first over only its seeds
// from..from+n−1 (a shard of it, package scenario/shard): PCT's k is the
// whole sweep's, measured at first; Seeds is n.
func HuntRange(sc *Scenario, st Strategy, first, from uint64, n int, fixed bool) Result {
	res := Result{Bug: sc.Name, Strategy: st.Name, Seeds: n, Race: st.Race}
	if st.Schedule == sim.StrategyPCT {
		res.PCTSteps = PCTStepsFor(sc, st, first, fixed)
	}
	for i := range n {
		seed := from + uint64(i)
		err, failed := HuntOutcome(sc, st, seed, res.PCTSteps, fixed)
		if fixed && err == nil {
			err = failed // the twin must pass: any failure is one
		} else if failed != nil {
			res.Failed++
			if res.FailedSeed == 0 {
				res.FailedSeed, res.FailedErr = seed, failed
			}
		}
		if err == nil {
			continue
		}
		res.Detected++
		if res.First == 0 {
			res.First, res.Example = seed, err
		}
	}
	return res
}

// HuntDetects runs one seed of a hunt and returns what detected the bug
// (nil: the run passed, or failed without detecting it; HuntOutcome tells
// the two apart). A merge of shards calls it again for each first
// detection's Example.
func HuntDetects(sc *Scenario, st Strategy, seed uint64, pctSteps int, fixed bool) error {
	detected, _ := HuntOutcome(sc, st, seed, pctSteps, fixed)
	return detected
}

// HuntOutcome runs one seed of a hunt: detected is what found the bug (a
// Detected status: hang, mismatch, race, misuse); failed is a failure that
// is none of those (emud's own error, the scenario's setup), which is no
// detection; both nil: the run passed.
func HuntOutcome(sc *Scenario, st Strategy, seed uint64, pctSteps int, fixed bool) (detected, failed error) {
	rep, err := HuntRun(sc, st, seed, pctSteps, fixed)
	switch {
	case err != nil:
		return nil, err
	case rep.Status == StatusOK:
		return nil, nil
	case Detected(rep.Status):
		return rep.Err, nil
	case rep.Err != nil:
		return nil, rep.Err
	}
	return nil, fmt.Errorf("status %s", rep.Status)
}

// Explain is a one-line account of a detection: the hang's first cause,
// the refused call (a misuse), or the error.
func Explain(err error) string {
	var h *sim.HangError
	if errors.As(err, &h) {
		if len(h.Causes) > 0 {
			return "hang: " + h.Causes[0].String()
		}
		return "hang: " + h.Error()
	}
	if refused := (*cco.MisuseError)(nil); errors.As(err, &refused) {
		return "misuse: " + refused.Error()
	}
	return err.Error()
}

// Hunting is the outcome of a hunt: one result per (bug, strategy).
type Hunting struct {
	Bugs       []*Scenario
	Strategies []Strategy
	First      uint64
	Seeds      int
	Fixed      bool
	Res        [][]Result // [bug][strategy]
}

// HuntAll runs every (bug, strategy) pair, jobs at a time. Each pair's
// seeds run in order in one goroutine; results land in fixed slots, so the
// table does not depend on jobs. step, if set, is called once per pair
// with whether it came out as it should (a bug detected, a twin clean).
func HuntAll(list []*Scenario, sts []Strategy, first uint64, seeds, jobs int, fixed bool, step func(bool)) *Hunting {
	return HuntAllRange(list, sts, first, first, seeds, jobs, fixed, step)
}

// HuntAllRange is HuntAll of the sweep from first over only the seeds
// from..from+seeds−1 (HuntRange); the Hunting's First and Seeds are the
// range's.
func HuntAllRange(list []*Scenario, sts []Strategy, first, from uint64, seeds, jobs int, fixed bool, step func(bool)) *Hunting {
	h := &Hunting{Bugs: list, Strategies: sts, First: from, Seeds: seeds, Fixed: fixed, Res: make([][]Result, len(list))}
	for b := range list {
		h.Res[b] = make([]Result, len(sts))
	}
	type pair struct{ b, s int }
	work := make(chan pair)
	var wg sync.WaitGroup
	for range min(jobs, len(list)*len(sts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				r := HuntRange(list[p.b], sts[p.s], first, from, seeds, fixed)
				h.Res[p.b][p.s] = r
				if step != nil {
					step(r.Detected > 0 == !fixed)
				}
			}
		}()
	}
	for b := range list {
		for s := range sts {
			work <- pair{b, s}
		}
	}
	close(work)
	wg.Wait()
	return h
}
