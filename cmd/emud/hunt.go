package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/scenario/shard"
	"github.com/emud-dev/emud/sim"

	"github.com/spf13/cobra"
)

func newHuntCmd() *cobra.Command { return newHuntCmdFor(nil) }

// newHuntCmdFor is hunt; with merged set (emud merge) it runs no sweep but
// puts the shards' table together, running each first detection again for
// its example.
// huntFlags are the command's flags.
type huntFlags struct {
	merged     *shard.Merged // the merged shards, when hunt runs as merge's
	seeds      int
	first      uint64
	jobs       int
	strategies string
	fixed      bool
	asJSON     bool
	progress   bool
	seed       uint64
	strategy   string
	pctSteps   int
	tracePath  string
	shardArg   string
	shardOut   string
}

func newHuntCmdFor(merged *shard.Merged) *cobra.Command {
	cf := huntFlags{merged: merged}
	cmd := &cobra.Command{
		Use:   "hunt [BUG...]",
		Short: "Run the planted-bug corpus under each exploration strategy and count the seeds to detection",
		Long:  huntLong,
		RunE:  func(cmd *cobra.Command, args []string) error { return cf.run(cmd, args) },
	}
	fs := cmd.Flags()
	fs.IntVar(&cf.seeds, "seeds", 200, "seeds per bug and strategy")
	fs.Uint64Var(&cf.first, "first-seed", 1, "the first seed")
	fs.IntVar(&cf.jobs, "jobs", runtime.GOMAXPROCS(0), "hunts at a time")
	fs.StringVar(&cf.strategies, "strategies", "ties,perturb,pct", "comma-separated strategies to compare (ties, perturb, pct)")
	fs.BoolVar(&cf.fixed, "fixed", false, "run the fixed twins instead of the bugs (every rate should be 0)")
	fs.BoolVar(&cf.asJSON, "json", false, "print the table as JSON")
	fs.BoolVar(&cf.progress, "progress", false, "draw the progress bar on stderr even when it is not a terminal")
	fs.Uint64Var(&cf.seed, "seed", 0, "run one bug once with this seed (see above)")
	fs.StringVar(&cf.strategy, "strategy", scenario.DefaultStrategy, "with --seed: the strategy (ties, perturb, pct)")
	fs.IntVar(&cf.pctSteps, "pct-steps", 0, "with --seed and pct: PCT's k (0: measured as hunt measures it, one run of seed 1 without PCT)")
	fs.StringVar(&cf.tracePath, "trace", "", "with --seed: write the run's Chrome trace-event JSON to this file")
	fs.StringVar(&cf.shardArg, "shard", "", "run shard K/N of the seeds (K from 0; contiguous ranges, every bug and strategy) and write its JSON record for emud merge instead of the table")
	fs.StringVar(&cf.shardOut, "shard-out", "-", "with --shard: the file the record goes to (- = stdout)")
	return cmd
}

// run is the command's RunE.
func (cf *huntFlags) run(cmd *cobra.Command, args []string) error {
	merged := cf.merged
	seeds, first, jobs, strategies, fixed, asJSON, progress, seed, strategy, pctSteps, tracePath, shardArg, shardOut := cf.seeds, cf.first, cf.jobs, cf.strategies, cf.fixed, cf.asJSON, cf.progress, cf.seed, cf.strategy, cf.pctSteps, cf.tracePath, cf.shardArg, cf.shardOut
	if cmd.Flags().Changed("seed") {
		if len(args) != 1 {
			return fmt.Errorf("hunt --seed runs one bug: name exactly one (the planted bugs: %s)", plantedNames())
		}
		return huntOne(cmd, args[0], seed, strategy, pctSteps, fixed, asJSON, tracePath)
	}
	if tracePath != "" {
		return fmt.Errorf("invalid --trace: only with --seed (one run)")
	}
	if cmd.Flags().Changed("strategy") {
		if _, err := scenario.LookupStrategy(strategy); err != nil {
			return fmt.Errorf("invalid --strategy: %w", err)
		}
		return fmt.Errorf("invalid --strategy %s: only with --seed (one run); the table compares --strategies", strategy)
	}
	if seeds < 1 {
		return fmt.Errorf("invalid --seeds %d: need at least 1", seeds)
	}
	if jobs < 1 {
		return fmt.Errorf("invalid --jobs %d: need at least 1", jobs)
	}
	sts, err := parseStrategies(strategies)
	if err != nil {
		return err
	}
	list, err := plantedBugs(args)
	if err != nil {
		return err
	}
	if shardArg != "" {
		sh, err := shard.Parse(shardArg)
		if err != nil {
			return err
		}
		return huntShard(cmd, args, list, sts, first, seeds, jobs, fixed, sh, shardOut)
	}
	var h *scenario.Hunting
	if merged != nil {
		if h, err = mergedHunting(merged, list, sts, first, seeds, fixed); err != nil {
			return err
		}
	} else {
		errOut := cmd.ErrOrStderr()
		prog := newProgress(errOut, progress || isTerminal(errOut), "hunt", len(list)*len(sts))
		if prog != nil {
			prog.unit = "hunts"
		}
		h = scenario.HuntAll(list, sts, first, seeds, jobs, fixed, prog.step)
		prog.finish()
	}
	if asJSON {
		enc := json.NewEncoder(cmd.OutOrStdout())
		enc.SetIndent("", "  ")
		if err := enc.Encode(h.JSON()); err != nil {
			return err
		}
	} else if err := h.Write(cmd.OutOrStdout()); err != nil {
		return err
	}
	return h.ExitErr()
}

// huntShard runs every (bug, strategy) pair over shard sh's seeds and
// writes the record.
func huntShard(cmd *cobra.Command, args []string, list []*scenario.Scenario, sts []scenario.Strategy, first uint64, seeds, jobs int, fixed bool, sh shard.Spec, out string) error {
	rec := shardRecord(cmd, "hunt", strings.Join(args, ","), first, seeds, sh)
	if rec.RangeSeeds > 0 {
		h := scenario.HuntAllRange(list, sts, first, rec.RangeFirst, rec.RangeSeeds, jobs, fixed, nil)
		for b := range list {
			for s := range sts {
				r := h.Res[b][s]
				rec.Hunt = append(rec.Hunt, shard.HuntCell{Bug: r.Bug, Strategy: r.Strategy, Detected: r.Detected, First: r.First, PCTSteps: r.PCTSteps})
			}
		}
	} else {
		for _, b := range list {
			for _, st := range sts {
				c := shard.HuntCell{Bug: b.Name, Strategy: st.Name}
				if st.Schedule == sim.StrategyPCT {
					c.PCTSteps = scenario.PCTStepsFor(b, st, first, fixed)
				}
				rec.Hunt = append(rec.Hunt, c)
			}
		}
	}
	return writeRecord(cmd, rec, out)
}

// mergedHunting is the whole sweep's table from the merged cells; each
// first detection runs again for its example.
func mergedHunting(m *shard.Merged, list []*scenario.Scenario, sts []scenario.Strategy, first uint64, seeds int, fixed bool) (*scenario.Hunting, error) {
	if len(m.Hunt) != len(list)*len(sts) {
		return nil, fmt.Errorf("merge: %d hunt cells for %d bugs × %d strategies", len(m.Hunt), len(list), len(sts))
	}
	h := &scenario.Hunting{Bugs: list, Strategies: sts, First: first, Seeds: seeds, Fixed: fixed, Res: make([][]scenario.Result, len(list))}
	for b := range list {
		h.Res[b] = make([]scenario.Result, len(sts))
		for s := range sts {
			c := m.Hunt[b*len(sts)+s]
			if c.Bug != list[b].Name || c.Strategy != sts[s].Name {
				return nil, fmt.Errorf("merge: cell %s/%s where %s/%s belongs", c.Bug, c.Strategy, list[b].Name, sts[s].Name)
			}
			r := scenario.Result{Bug: c.Bug, Strategy: c.Strategy, Seeds: seeds, First: c.First, Detected: c.Detected, PCTSteps: c.PCTSteps}
			if c.First != 0 {
				if r.Example = scenario.HuntDetects(list[b], sts[s], c.First, c.PCTSteps, fixed); r.Example == nil {
					return nil, fmt.Errorf("merge: %s under %s detected at seed %d in its shard but passes here: merge with the build that ran the shards", c.Bug, c.Strategy, c.First)
				}
			}
			h.Res[b][s] = r
		}
	}
	return h, nil
}

// plantedNames lists the planted bugs, for errors.
func plantedNames() string {
	var names []string
	for _, b := range scenario.PlantedBugs() {
		names = append(names, b.Name)
	}
	return strings.Join(names, ", ")
}

// plantedBugs are the bugs named (all of them when none is).
func plantedBugs(names []string) ([]*scenario.Scenario, error) {
	if len(names) == 0 {
		return scenario.PlantedBugs(), nil
	}
	var list []*scenario.Scenario
	for _, n := range names {
		b, err := scenario.Lookup(n)
		if err != nil || b.Planted == nil {
			return nil, fmt.Errorf("no planted bug %q; the planted bugs: %s", n, plantedNames())
		}
		list = append(list, b)
	}
	return list, nil
}

func parseStrategies(list string) ([]scenario.Strategy, error) {
	var sts []scenario.Strategy
	for _, name := range strings.Split(list, ",") {
		st, err := scenario.LookupStrategy(strings.TrimSpace(name))
		if err != nil {
			return nil, fmt.Errorf("invalid --strategies: %w", err)
		}
		sts = append(sts, st)
	}
	return sts, nil
}

// huntOne runs one planted bug once and prints what run would.
func huntOne(cmd *cobra.Command, name string, seed uint64, strategy string, pctSteps int, fixed, asJSON bool, tracePath string) error {
	list, err := plantedBugs([]string{name})
	if err != nil {
		return err
	}
	st, err := scenario.LookupStrategy(strategy)
	if err != nil {
		return fmt.Errorf("invalid --strategy: %w", err)
	}
	var writeTrace func() (bool, error)
	var adjust func(*scenario.Options)
	if tracePath != "" {
		var o scenario.Options
		if writeTrace, err = scenario.TraceToFile(&o, tracePath); err != nil {
			return err
		}
		adjust = func(ro *scenario.Options) { ro.Observe = o.Observe }
	}
	runErr := scenario.HuntOnce(cmd.OutOrStdout(), list[0], st, seed, pctSteps, fixed, asJSON, adjust)
	if writeTrace != nil {
		if _, err := writeTrace(); err != nil {
			return err
		}
	}
	return runErr
}

// huntLong is the command's help.
const huntLong = `Run every planted bug of the registry (package scenario: the corpus of
scenario/planted and the planted SDMA scenarios), or the ones named, under
seeds --first-seed.. (--seeds of them) with each strategy of --strategies:

  ties     seeded tie-breaks only, at the model's exact timing (--perturb 0)
  perturb  seeded tie-breaks under realistic timing perturbation (--perturb 1)
  pct      PCT (random priorities, change points) under realistic perturbation,
           explore's default

For each bug and strategy it prints the seeds to the first detection (a hang,
a failure or wrong data; "-" if none) and the detection rate over all seeds,
then one line per strategy and last

  found K of N planted bugs within S seeds each

for the default strategy (pct), after the command that reproduces each bug's
first detection under it. --fixed runs the fixed twins instead: every rate
should be 0. Exit status 1 when the default strategy missed a bug (or, with
--fixed, when a twin failed).

With --seed, hunt runs one bug once (that seed, --strategy, --pct-steps) and
prints its hang report or data error and its seed and digest, as run does;
--trace writes its Chrome trace.`
