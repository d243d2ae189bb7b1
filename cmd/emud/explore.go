package main

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/scenario/shard"
	"github.com/emud-dev/emud/sim"
)

func newExploreCmd() *cobra.Command { return newExploreCmdFor(nil) }

// newExploreCmdFor is explore; with merged set (emud merge) it runs no
// sweep but puts the shards' answer together: the flags are the shards'
// own, and only the failing seed, if any, runs again for its report.
func newExploreCmdFor(merged *shard.Merged) *cobra.Command {
	f := newScenarioFlags()
	var (
		seeds    int
		first    uint64
		jobs     int
		progress bool
		shardArg string
		shardOut string
	)
	cmd := &cobra.Command{
		Use:   "explore [SCENARIO]",
		Short: "Run a scenario under many seeds and stop at the first hang or failed check",
		Long:  exploreLong,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := onlyWith(cmd, "shard", "without it the report goes to stdout", "shard-out"); err != nil {
				return err
			}
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
			if merged != nil {
				x, err := merged.Exploration(sc, f.o)
				if err != nil {
					return err
				}
				return x.Write(cmd.OutOrStdout(), f.asJSON)
			}
			var sh *shard.Spec
			if shardArg != "" {
				spec, err := shard.Parse(shardArg)
				if err != nil {
					return err
				}
				sh = &spec
			}
			errOut := cmd.ErrOrStderr()
			if n, why := scenario.ExploreJobs(jobs, runtime.GOMAXPROCS(0), scenario.Footprint(sc, f.o).Bytes(), uint64(f.budget)); n < jobs {
				fmt.Fprintf(errOut, "explore: --jobs %d capped to %d (%s)\n", jobs, n, why)
				jobs = n
			}
			if sh != nil {
				rec := shardRecord(cmd, "explore", sc.Name, first, seeds, *sh)
				rec.RunExplore(sc, f.o, jobs)
				return rec.Write(cmd.OutOrStdout(), shardOut)
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
	fs.StringVar(&shardArg, "shard", "", "run shard K/N of the seeds (K from 0; contiguous ranges) and write its JSON record for emud merge instead of the report")
	fs.StringVar(&shardOut, "shard-out", "-", "with --shard: the file the record goes to (- = stdout)")
	return cmd
}

// unshardedFlags are explore's flags that do not change its answer: they
// are left out of a shard's record, so shards may differ in them.
var unshardedFlags = map[string]bool{"shard": true, "shard-out": true, "jobs": true, "progress": true, "json": true, "mem-budget": true, "scenario": true}

// shardRecord is the record of shard sh of command's sweep, with the
// flags set on cmd that shape the answer.
func shardRecord(cmd *cobra.Command, command, what string, first uint64, seeds int, sh shard.Spec) shard.Record {
	rec := shard.Record{Header: shard.Header{Version: shard.Version(), Command: command, Scenario: what, Flags: map[string]string{},
		First: first, Seeds: seeds, Shard: sh.K, Shards: sh.N}}
	cmd.Flags().VisitAll(func(fl *pflag.Flag) {
		if fl.Changed && !unshardedFlags[fl.Name] && fl.Name != "seeds" && fl.Name != "first-seed" {
			rec.Flags[fl.Name] = fl.Value.String()
		}
	})
	rec.RangeFirst, rec.RangeSeeds = sh.Range(first, seeds)
	return rec
}

var exploreLong = `Run a scenario under seeds --first-seed, --first-seed+1, ... (--seeds of them),
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

` + exitStatusHelp + ` (of the seed found; 0 when all passed)`
