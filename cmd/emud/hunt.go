package main

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	"github.com/emud-dev/emud/scenario"

	"github.com/spf13/cobra"
)

func newHuntCmd() *cobra.Command {
	var (
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
	)
	cmd := &cobra.Command{
		Use:   "hunt [BUG...]",
		Short: "Run the planted-bug corpus under each exploration strategy and count the seeds to detection",
		Long: `Run every planted bug of the registry (package scenario: the corpus of
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
--trace writes its Chrome trace.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("seed") {
				if len(args) != 1 {
					return fmt.Errorf("hunt --seed runs one bug: name exactly one (the planted bugs: %s)", plantedNames())
				}
				return huntOne(cmd, args[0], seed, strategy, pctSteps, fixed, asJSON, tracePath)
			}
			if tracePath != "" {
				return fmt.Errorf("invalid --trace: only with --seed (one run)")
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
			errOut := cmd.ErrOrStderr()
			prog := newProgress(errOut, progress || isTerminal(errOut), "hunt", len(list)*len(sts))
			if prog != nil {
				prog.unit = "hunts"
			}
			h := scenario.HuntAll(list, sts, first, seeds, jobs, fixed, prog.step)
			prog.finish()
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
		},
	}
	fs := cmd.Flags()
	fs.IntVar(&seeds, "seeds", 200, "seeds per bug and strategy")
	fs.Uint64Var(&first, "first-seed", 1, "the first seed")
	fs.IntVar(&jobs, "jobs", runtime.GOMAXPROCS(0), "hunts at a time")
	fs.StringVar(&strategies, "strategies", "ties,perturb,pct", "comma-separated strategies to compare (ties, perturb, pct)")
	fs.BoolVar(&fixed, "fixed", false, "run the fixed twins instead of the bugs (every rate should be 0)")
	fs.BoolVar(&asJSON, "json", false, "print the table as JSON")
	fs.BoolVar(&progress, "progress", false, "draw the progress bar on stderr even when it is not a terminal")
	fs.Uint64Var(&seed, "seed", 0, "run one bug once with this seed (see above)")
	fs.StringVar(&strategy, "strategy", scenario.DefaultStrategy, "with --seed: the strategy (ties, perturb, pct)")
	fs.IntVar(&pctSteps, "pct-steps", 0, "with --seed and pct: PCT's k (0: measured as hunt measures it, one run of seed 1 without PCT)")
	fs.StringVar(&tracePath, "trace", "", "with --seed: write the run's Chrome trace-event JSON to this file")
	return cmd
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
