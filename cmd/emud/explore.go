package main

import (
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/sim"
)

func newExploreCmd() *cobra.Command {
	f := newScenarioFlags()
	var (
		seeds    int
		first    uint64
		jobs     int
		progress bool
	)
	cmd := &cobra.Command{
		Use:   "explore [SCENARIO]",
		Short: "Run a scenario under many seeds and stop at the first hang or failed check",
		Long: `Run a scenario under seeds --first-seed, --first-seed+1, ... (--seeds of them),
several at a time (--jobs), and stop at the first seed that hangs, fails its
data check or fails otherwise. Print that seed, its report and the command that
reproduces it. The seed reported is the lowest failing one in the range, however
the runs were spread over jobs.

By default the seeds explore what hardware does: --perturb 1 spreads launches,
engine gaps, doorbells, link rates, poll phases, CU costs and host stores within
measured spreads, and --strategy pct adds PCT's random priorities with change
points that preempt a wave or an engine (its steps measured by one run of the
first seed without PCT, unless --pct-steps says). --perturb 0 --strategy random
only varies tie-breaks between events due at the same instant. "emud hunt"
compares the strategies on a corpus of planted bugs.

A progress bar goes to stderr when it is a terminal, or with --progress.

` + exitStatusHelp + ` (of the seed found; 0 when all passed)`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sc, err := f.resolve(cmd, args)
			if err != nil {
				return err
			}
			defer withMemLimit(uint64(f.budget))()
			switch {
			case seeds < 1:
				return fmt.Errorf("invalid --seeds %d: need at least 1", seeds)
			case jobs < 1:
				return fmt.Errorf("invalid --jobs %d: need at least 1", jobs)
			case first+uint64(seeds)-1 < first:
				return fmt.Errorf("invalid --first-seed %d with --seeds %d: the range passes 2^64", first, seeds)
			}
			if f.o.Strategy == sim.StrategyPCT && f.o.PCT.Steps == 0 {
				f.o.PCT.Steps = pctSteps(sc, f.o, first)
			}
			errOut := cmd.ErrOrStderr()
			if n, why := exploreJobs(jobs, runtime.GOMAXPROCS(0), footprint(sc, f.o).Bytes(), uint64(f.budget)); n < jobs {
				fmt.Fprintf(errOut, "explore: --jobs %d capped to %d (%s)\n", jobs, n, why)
				jobs = n
			}
			prog := newProgress(errOut, progress || isTerminal(errOut), "explore "+sc.name, seeds)
			res := explore(sc, f.o, first, seeds, jobs, prog.step)
			prog.finish()
			return res.write(cmd.OutOrStdout(), f.asJSON)
		},
	}
	f.bind(cmd, false, sim.LevelRealistic, sim.StrategyPCT)
	fs := cmd.Flags()
	fs.IntVar(&seeds, "seeds", 100, "how many seeds to run")
	fs.Uint64Var(&first, "first-seed", 1, "the first seed of the range")
	fs.IntVar(&jobs, "jobs", runtime.GOMAXPROCS(0), "runs at a time; capped at 4 per processor and by --mem-budget over a run's estimated footprint")
	fs.BoolVar(&progress, "progress", false, "draw the progress bar on stderr even when it is not a terminal")
	return cmd
}

// exploration is what explore found.
type exploration struct {
	sc    *scenario
	o     options // the flags; Seed is unused
	first uint64
	seeds int
	found *report // the lowest failing seed's report, nil if all passed
	// Of the passing runs: end times (µs) and distinct digests.
	ends    []float64
	digests map[string]bool
}

// explore runs sc under seeds first.. first+n−1, jobs at a time, and
// returns the lowest failing seed's report. Seeds are handed out in order
// and a failure at seed s stops handing out seeds above s, so every seed
// below the one reported has run and passed: the answer does not depend on
// jobs or on timing. step is called once per finished run.
func explore(sc *scenario, o options, first uint64, n, jobs int, step func(failed bool)) *exploration {
	x := &exploration{sc: sc, o: o, first: first, seeds: n, digests: map[string]bool{}}
	var mu sync.Mutex
	next, stop := first, first+uint64(n) // hand out [next, stop)
	var wg sync.WaitGroup
	for range min(jobs, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
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
				ro.Seed = seed
				rep := runOnce(sc, ro)

				mu.Lock()
				failed := rep.Status != statusOK
				switch {
				case failed && (x.found == nil || seed < x.found.o.Seed):
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

// pctSteps is PCT's k for sc: the scheduling steps of one run of the first
// seed without PCT (sim.DefaultPCTSteps if that run does not finish).
func pctSteps(sc *scenario, o options, first uint64) int {
	probe := o
	probe.Seed, probe.Strategy = first, sim.StrategyRandom
	if rep := runOnce(sc, probe); rep.res != nil && rep.res.Steps > 0 {
		return rep.res.Steps
	}
	return sim.DefaultPCTSteps
}

// reproduce is the command line that reruns the failing seed with its trace.
func reproduce(sc *scenario, o options) string {
	args := []string{"emud", "replay", sc.name, "--seed", fmt.Sprint(o.Seed),
		"--ranks", fmt.Sprint(o.Ranks), "--bytes", formatBytes(o.Bytes), "--queues", fmt.Sprint(o.Queues)}
	if o.Debug {
		args = append(args, "--debug")
	}
	if o.Race {
		args = append(args, "--race")
	}
	if o.Model != "" {
		args = append(args, "--model", o.Model)
	}
	return strings.Join(append(args, timingArgs(o)...), " ")
}

// timingArgs are the flags that fix a run's timing and faults beyond the
// seed, as replay takes them: the perturbation level always (replay's
// default differs from explore's), the strategy and faults when set.
func timingArgs(o options) []string {
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

// jsonExploration is explore's --json output.
type jsonExploration struct {
	Scenario  string  `json:"scenario"`
	FirstSeed uint64  `json:"first_seed"`
	Seeds     int     `json:"seeds"`
	SeedsRun  int     `json:"seeds_run"`
	Found     bool    `json:"found"`
	Seed      uint64  `json:"seed,omitempty"`
	Status    string  `json:"status,omitempty"`
	Report    *report `json:"report,omitempty"`
	Reproduce string  `json:"reproduce,omitempty"`
	// Phantom: the runs stored no bytes and checked no data.
	Phantom bool `json:"phantom,omitempty"`
}

// seedsRun counts the seeds that decided the answer: up to the failing one,
// or all of them.
func (x *exploration) seedsRun() int {
	if x.found == nil {
		return x.seeds
	}
	return int(x.found.o.Seed-x.first) + 1
}

// write prints the outcome and returns the exit error of the seed found.
func (x *exploration) write(w io.Writer, asJSON bool) error {
	if asJSON {
		j := jsonExploration{Scenario: x.sc.name, FirstSeed: x.first, Seeds: x.seeds, SeedsRun: x.seedsRun(), Found: x.found != nil, Phantom: x.o.Phantom}
		if x.found != nil {
			j.Seed, j.Status, j.Report, j.Reproduce = x.found.o.Seed, x.found.Status, x.found, reproduce(x.sc, x.found.o)
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(j); err != nil {
			return err
		}
		return x.exitErr()
	}
	last := x.first + uint64(x.seeds) - 1
	if x.found == nil {
		slices.Sort(x.ends)
		if x.o.Phantom {
			fmt.Fprintf(w, "explore %s: seeds %d..%d all passed (no hang, no failed signal check; %s)\n", x.sc.name, x.first, last, phantomNote)
		} else {
			fmt.Fprintf(w, "explore %s: seeds %d..%d all passed (no hang, no failed check)\n", x.sc.name, x.first, last)
		}
		fmt.Fprintf(w, "  end time (µs): min %.3f  median %.3f  max %.3f\n", x.ends[0], x.ends[len(x.ends)/2], x.ends[len(x.ends)-1])
		fmt.Fprintf(w, "  distinct digests: %d of %d runs\n", len(x.digests), len(x.ends))
		fmt.Fprintf(w, "  explored with: %s\n", strings.Join(timingArgs(x.o), " "))
		return nil
	}
	rep := x.found
	fmt.Fprintf(w, "explore %s: seed %d %s (%d of seeds %d..%d run)\n", x.sc.name, rep.o.Seed, describeStatus(rep.Status), x.seedsRun(), x.first, last)
	if rep.Hang != nil {
		if err := writeHang(w, rep.Hang, false); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(w, "%s\n", rep.Error)
	}
	fmt.Fprintf(w, "reproduce: %s\n", reproduce(x.sc, rep.o))
	return x.exitErr()
}

func (x *exploration) exitErr() error {
	if x.found == nil {
		return nil
	}
	err := x.found.exitErr()
	if ce, ok := err.(*codedError); ok {
		// The report is on stdout already; the one-line error names the seed.
		return &codedError{ce.code, fmt.Errorf("explore %s: seed %d %s", x.sc.name, x.found.o.Seed, describeStatus(x.found.Status))}
	}
	return fmt.Errorf("explore %s: seed %d failed", x.sc.name, x.found.o.Seed)
}

func describeStatus(s string) string {
	switch s {
	case statusHang:
		return "hangs"
	case statusMismatch:
		return "fails its data check"
	case statusRace:
		return "has data races"
	}
	return "fails"
}
