package main

import (
	"fmt"
	"runtime"

	"github.com/emud-dev/emud/scenario"

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
			defer scenario.WithMemLimit(uint64(f.budget))()
			switch {
			case seeds < 1:
				return fmt.Errorf("invalid --seeds %d: need at least 1", seeds)
			case jobs < 1:
				return fmt.Errorf("invalid --jobs %d: need at least 1", jobs)
			case first+uint64(seeds)-1 < first:
				return fmt.Errorf("invalid --first-seed %d with --seeds %d: the range passes 2^64", first, seeds)
			}
			if f.o.Strategy == sim.StrategyPCT && f.o.PCT.Steps == 0 {
				f.o.PCT.Steps = scenario.PCTSteps(sc, f.o, first)
			}
			errOut := cmd.ErrOrStderr()
			if n, why := scenario.ExploreJobs(jobs, runtime.GOMAXPROCS(0), scenario.Footprint(sc, f.o).Bytes(), uint64(f.budget)); n < jobs {
				fmt.Fprintf(errOut, "explore: --jobs %d capped to %d (%s)\n", jobs, n, why)
				jobs = n
			}
			prog := newProgress(errOut, progress || isTerminal(errOut), "explore "+sc.Name, seeds)
			res := scenario.Explore(sc, f.o, first, seeds, jobs, prog.step)
			prog.finish()
			return res.Write(cmd.OutOrStdout(), f.asJSON)
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
