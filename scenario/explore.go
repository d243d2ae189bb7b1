package scenario

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/sim"
)

// Exploration is what Explore found.
type Exploration struct {
	sc    *Scenario
	o     Options // the flags; Seed is unused
	first uint64
	seeds int
	found *Report // the lowest failing seed's report, nil if all passed
	// Of the passing runs: end times (µs) and distinct digests.
	ends    []float64
	digests map[string]bool
}

// Explore runs sc under seeds first.. first+n−1, jobs at a time, and
// returns the lowest failing seed's report. Seeds are handed out in order
// and a failure at seed s stops handing out seeds above s, so every seed
// below the one reported has run and passed: the answer does not depend on
// jobs or on timing. step is called once per finished run.
func Explore(sc *Scenario, o Options, first uint64, n, jobs int, step func(failed bool)) *Exploration {
	defer withExploreGC()()
	x := &Exploration{sc: sc, o: o, first: first, seeds: n, digests: map[string]bool{}}
	var mu sync.Mutex
	next, stop := first, first+uint64(n) // hand out [next, stop)
	var wg sync.WaitGroup
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// The worker's own buffers, handed back zeroed by each
			// seed's node: no seed sees what an earlier one left.
			scratch := engine.NewScratch()
			defer scratch.Close()
			for {
				mu.Lock()
				if next >= stop {
					mu.Unlock()
					return
				}
				seed := next
				next++
				mu.Unlock()

				ro := o
				ro.Seed, ro.Scratch = seed, scratch
				rep := RunOnce(sc, ro)
				rep.O.Scratch = nil // the worker's, not the report's

				mu.Lock()
				failed := rep.Status != StatusOK
				switch {
				case failed && (x.found == nil || seed < x.found.O.Seed):
					x.found, stop = rep, seed
				case !failed:
					x.ends = append(x.ends, rep.Summary.EndMicros)
					x.digests[rep.Summary.Digest] = true
				}
				mu.Unlock()
				if step != nil {
					step(failed)
				}
			}
		}()
	}
	wg.Wait()
	return x
}

// ExploreGCPercent is the collector's target (GOGC) while Explore runs,
// unless the environment sets GOGC: a seed's garbage is short-lived and
// its live heap small, so at the default 100 the collector ran every few
// seeds and took 11-16% of the CPU of a 4 KiB all-to-all at --jobs 2;
// at 400 it took 2-4% and 20-30% less CPU a seed, for a peak RSS of
// 34 MB instead of 23 MB (3000 seeds). The heap goal stays proportional
// to what is live, and under the soft memory limit explore sets from
// --mem-budget (WithMemLimit) the collector runs harder near the limit.
const ExploreGCPercent = 400

// exploreGC counts the Explores running (a daemon may run several at
// once): the first sets the target, the last restores the one before.
var exploreGC struct {
	sync.Mutex
	running int
	prev    int
}

// withExploreGC sets ExploreGCPercent until the returned function
// restores the previous target; a GOGC in the environment is the user's
// and is left alone.
func withExploreGC() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	g := &exploreGC
	g.Lock()
	defer g.Unlock()
	if g.running == 0 {
		g.prev = debug.SetGCPercent(ExploreGCPercent)
	}
	g.running++
	return func() {
		g.Lock()
		defer g.Unlock()
		if g.running--; g.running == 0 {
			debug.SetGCPercent(g.prev)
		}
	}
}

// PCTSteps is PCT's k for sc: the scheduling steps of one run of the first
// seed without PCT (sim.DefaultPCTSteps if that run does not finish).
func PCTSteps(sc *Scenario, o Options, first uint64) int {
	probe := o
	probe.Seed, probe.Strategy = first, sim.StrategyRandom
	if rep := RunOnce(sc, probe); rep.Status == StatusOK && rep.Outcome.Steps > 0 {
		return rep.Outcome.Steps
	}
	return sim.DefaultPCTSteps
}

// Reproduce is the command line that reruns the failing seed with its trace.
func Reproduce(sc *Scenario, o Options) string {
	args := []string{"emud", "replay", sc.Name, "--seed", fmt.Sprint(o.Seed),
		"--ranks", fmt.Sprint(o.Ranks), "--bytes", FormatBytes(o.Bytes), "--queues", fmt.Sprint(o.Queues)}
	if o.Debug {
		args = append(args, "--debug")
	}
	if o.Race {
		args = append(args, "--race")
	}
	if o.Model != "" {
		args = append(args, "--model", o.Model)
	}
	return strings.Join(append(args, TimingArgs(o)...), " ")
}

// TimingArgs are the flags that fix a run's timing and faults beyond the
// seed, as replay takes them: the perturbation level always (replay's
// default differs from explore's), the strategy and faults when set.
func TimingArgs(o Options) []string {
	args := []string{"--perturb", fmt.Sprint(int(o.Perturb))}
	if o.Strategy != sim.StrategyRandom {
		args = append(args, "--strategy", o.Strategy.String())
		if o.PCT.Depth != 0 {
			args = append(args, "--pct-depth", fmt.Sprint(o.PCT.Depth))
		}
		if o.PCT.Steps != 0 {
			args = append(args, "--pct-steps", fmt.Sprint(o.PCT.Steps))
		}
	}
	if !o.Faults.Empty() {
		args = append(args, "--faults", o.Faults.String())
	}
	return args
}

// ExplorationJSON is explore's --json output.
type ExplorationJSON struct {
	Scenario  string  `json:"scenario"`
	FirstSeed uint64  `json:"first_seed"`
	Seeds     int     `json:"seeds"`
	SeedsRun  int     `json:"seeds_run"`
	Found     bool    `json:"found"`
	Seed      uint64  `json:"seed,omitempty"`
	Status    string  `json:"status,omitempty"`
	Report    *Report `json:"report,omitempty"`
	Reproduce string  `json:"reproduce,omitempty"`
	// Phantom: the runs stored no bytes and checked no data.
	Phantom bool `json:"phantom,omitempty"`
}

// seedsRun counts the seeds that decided the answer: up to the failing one,
// or all of them.
func (x *Exploration) seedsRun() int {
	if x.found == nil {
		return x.seeds
	}
	return int(x.found.O.Seed-x.first) + 1
}

// Write prints the outcome and returns the exit error of the seed found.
func (x *Exploration) Write(w io.Writer, asJSON bool) error {
	if asJSON {
		j := ExplorationJSON{Scenario: x.sc.Name, FirstSeed: x.first, Seeds: x.seeds, SeedsRun: x.seedsRun(), Found: x.found != nil, Phantom: x.o.Phantom}
		if x.found != nil {
			j.Seed, j.Status, j.Report, j.Reproduce = x.found.O.Seed, x.found.Status, x.found, Reproduce(x.sc, x.found.O)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(j); err != nil {
			return err
		}
		return x.ExitErr()
	}
	last := x.first + uint64(x.seeds) - 1
	if x.found == nil {
		slices.Sort(x.ends)
		if x.o.Phantom {
			fmt.Fprintf(w, "explore %s: seeds %d..%d all passed (no hang, no failed signal check; %s)\n", x.sc.Name, x.first, last, PhantomNote)
		} else {
			fmt.Fprintf(w, "explore %s: seeds %d..%d all passed (no hang, no failed check)\n", x.sc.Name, x.first, last)
		}
		fmt.Fprintf(w, "  end time (µs): min %.3f  median %.3f  max %.3f\n", x.ends[0], x.ends[len(x.ends)/2], x.ends[len(x.ends)-1])
		fmt.Fprintf(w, "  distinct digests: %d of %d runs\n", len(x.digests), len(x.ends))
		fmt.Fprintf(w, "  explored with: %s\n", strings.Join(TimingArgs(x.o), " "))
		return nil
	}
	rep := x.found
	fmt.Fprintf(w, "explore %s: seed %d %s (%d of seeds %d..%d run)\n", x.sc.Name, rep.O.Seed, DescribeStatus(rep.Status), x.seedsRun(), x.first, last)
	if rep.Hang != nil {
		if err := WriteHang(w, rep.Hang, false); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "%s\n", rep.Error)
	}
	fmt.Fprintf(w, "reproduce: %s\n", Reproduce(x.sc, rep.O))
	return x.ExitErr()
}

// ExitErr is the exit error of the seed found (nil if all passed).
func (x *Exploration) ExitErr() error {
	if x.found == nil {
		return nil
	}
	err := x.found.ExitErr()
	if ce, ok := err.(*ExitError); ok {
		// The report is on stdout already; the one-line error names the seed.
		return &ExitError{ce.Code, fmt.Errorf("explore %s: seed %d %s", x.sc.Name, x.found.O.Seed, DescribeStatus(x.found.Status))}
	}
	return fmt.Errorf("explore %s: seed %d failed", x.sc.Name, x.found.O.Seed)
}

// DescribeStatus is a status in words: "hangs", "fails its data check".
func DescribeStatus(s string) string {
	switch s {
	case StatusHang:
		return "hangs"
	case StatusMismatch:
		return "fails its data check"
	case StatusRace:
		return "has data races"
	}
	return "fails"
}

// Found is the lowest failing seed's report, nil if every seed passed.
func (x *Exploration) Found() *Report { return x.found }

// Passed is what the passing runs left: their end times (µs) and their
// distinct digests, each sorted (for a shard's record, package
// scenario/shard).
func (x *Exploration) Passed() (ends []float64, digests []string) {
	// Sorted, so that a shard's record is the same at any --jobs (the runs
	// end in the order the workers finish them).
	ends = slices.Clone(x.ends)
	slices.Sort(ends)
	return ends, slices.Sorted(maps.Keys(x.digests))
}

// Merged is the Exploration of seeds first..first+n−1 put together from
// shards (package scenario/shard): found is the lowest failing seed's
// report (its run again), or nil with the passing runs' ends and digests.
// Its Write prints what Explore over the whole range prints.
func Merged(sc *Scenario, o Options, first uint64, n int, found *Report, ends []float64, digests []string) *Exploration {
	x := &Exploration{sc: sc, o: o, first: first, seeds: n, found: found, ends: slices.Clone(ends), digests: map[string]bool{}}
	for _, d := range digests {
		x.digests[d] = true
	}
	return x
}
