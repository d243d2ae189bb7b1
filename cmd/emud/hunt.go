package main

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/scenario/shard"

	"github.com/spf13/cobra"
)

func newHuntCmd() *cobra.Command { return newHuntCmdFor(nil) }

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
	race       bool
	tracePath  string
	shardArg   string
	shardOut   string
	// processPerSeed: a program's seeds each start it afresh.
	processPerSeed bool
	programs       string
	debug          bool
}

// newHuntCmdFor is hunt; with merged set (emud merge) it runs no sweep but
// puts the shards' table together, running each first detection again for
// its example.
func newHuntCmdFor(merged *shard.Merged) *cobra.Command {
	cf := huntFlags{merged: merged}
	cmd := &cobra.Command{
		Use:   "hunt [BUG...] | hunt [flags] -- BUG[:FIXED]...",
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
	fs.BoolVar(&cf.race, "race", false, "run emud's race detector on every run: a race is a detection even when the data came out right (see above)")
	fs.BoolVar(&cf.processPerSeed, "process-per-seed", false, "programs after --: start the program as a process for every seed, not in a warm seed server (emud c++'s seed form; see docs/guide-cxx.md)")
	fs.StringVar(&cf.tracePath, "trace", "", "with --seed: write the run's Chrome trace-event JSON to this file")
	fs.StringVar(&cf.shardArg, "shard", "", "run shard K/N of the seeds (K from 0; contiguous ranges, every bug and strategy) and write its JSON record for emud merge instead of the table")
	fs.StringVar(&cf.shardOut, "shard-out", "-", "with --shard: the file the record goes to (- = stdout)")
	fs.BoolVar(&cf.debug, "debug", false, "with C++ programs: run them with MORI_CCO_SDMA_DEBUG=1 (MORI's debug build's misuse traps)")
	fs.StringVar(&cf.programs, "programs", "", "hunt C++ programs: a file of BUG[:FIXED] lines (as after --; # comments)")
	return cmd
}

// run is the command's RunE.
func (cf *huntFlags) run(cmd *cobra.Command, args []string) error {
	if err := onlyWith(cmd, "shard", "without it the table goes to stdout", "shard-out"); err != nil {
		return err
	}
	if cmd.ArgsLenAtDash() >= 0 || cf.programs != "" || (cf.merged != nil && cf.merged.Program != nil) {
		return cf.runPrograms(cmd, args)
	}
	if cf.debug {
		return fmt.Errorf("invalid --debug: only with C++ programs (after --, or --programs); a planted bug's scenario sets its own")
	}
	if cmd.Flags().Changed("seed") {
		if len(args) != 1 {
			return fmt.Errorf("hunt --seed runs one bug: name exactly one (the planted bugs: %s)", scenario.PlantedNames())
		}
		return cf.one(cmd, args[0])
	}
	if cf.tracePath != "" {
		return fmt.Errorf("invalid --trace: only with --seed (one run)")
	}
	if cmd.Flags().Changed("strategy") {
		if _, err := scenario.LookupStrategy(cf.strategy); err != nil {
			return fmt.Errorf("invalid --strategy: %w", err)
		}
		return fmt.Errorf("invalid --strategy %s: only with --seed (one run); the table compares --strategies", cf.strategy)
	}
	if cf.seeds < 1 {
		return fmt.Errorf("invalid --seeds %d: need at least 1", cf.seeds)
	}
	if cf.jobs < 1 {
		return fmt.Errorf("invalid --jobs %d: need at least 1", cf.jobs)
	}
	sts, err := scenario.ParseStrategies(cf.strategies)
	if err != nil {
		return err
	}
	for i := range sts {
		sts[i].Race = cf.race
	}
	list, err := scenario.PlantedNamed(args)
	if err != nil {
		return err
	}
	if cf.shardArg != "" {
		sh, err := shard.Parse(cf.shardArg)
		if err != nil {
			return err
		}
		rec := shardRecord(cmd, "hunt", strings.Join(args, ","), cf.first, cf.seeds, sh)
		rec.RunHunt(list, sts, cf.jobs, cf.fixed)
		return rec.Write(cmd.OutOrStdout(), cf.shardOut)
	}
	var h *scenario.Hunting
	if cf.merged != nil {
		if h, err = cf.merged.Hunting(list, sts, cf.fixed); err != nil {
			return err
		}
	} else {
		errOut := cmd.ErrOrStderr()
		prog := newProgress(errOut, cf.progress || isTerminal(errOut), "hunt", len(list)*len(sts))
		if prog != nil {
			prog.unit = "hunts"
		}
		h = scenario.HuntAll(list, sts, cf.first, cf.seeds, cf.jobs, cf.fixed, prog.step)
		prog.finish()
	}
	if err := h.Print(cmd.OutOrStdout(), cf.asJSON); err != nil {
		return err
	}
	return h.ExitErr()
}

// one runs one planted bug once (--seed) and prints what run would.
func (cf *huntFlags) one(cmd *cobra.Command, name string) error {
	list, err := scenario.PlantedNamed([]string{name})
	if err != nil {
		return err
	}
	st, err := scenario.LookupStrategy(cf.strategy)
	if err != nil {
		return fmt.Errorf("invalid --strategy: %w", err)
	}
	st.Race = cf.race
	var writeTrace func() (bool, error)
	var adjust func(*scenario.Options)
	if cf.tracePath != "" {
		var o scenario.Options
		if writeTrace, err = scenario.TraceToFile(&o, cf.tracePath); err != nil {
			return err
		}
		adjust = func(ro *scenario.Options) { ro.Observe = o.Observe }
	}
	runErr := scenario.HuntOnce(cmd.OutOrStdout(), list[0], st, cf.seed, cf.pctSteps, cf.fixed, cf.asJSON, adjust)
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
--fixed, when a twin failed), or when a run failed without detecting its bug
(emud's own error or the scenario's setup: not counted as found).

Without --race a detection is what a release run shows. With --race emud's
happens-before race detector runs too (as run --race), so a seed whose data
came out right but whose accesses raced is a detection as well (status race);
the table's first line says so and the reproduce commands carry --race.

With --seed, hunt runs one bug once (that seed, --strategy, --pct-steps) and
prints its hang report or data error and its seed and digest, as run does;
--trace writes its Chrome trace.

After -- (or in --programs' file, one a line), hunt takes C++ programs built
with emud c++ instead: each operand BUG[:FIXED] is a planted bug's command
line and, after the colon, its fixed twin's (words split at spaces, e.g.
"./put_overwrite:./put_overwrite fixed"). Every seed of the range runs the
bug and the twin under each strategy (the strategy's level and schedule in
their environment, as explore passes them; PCT's k measured once per pair by
one run of --first-seed without PCT, on the twin where there is one). The
table gives per program and strategy the seeds to the first detection (a
non-zero exit status of an emulated run, one that printed emud's summary
line; a program that fails without it, having crashed, failed to start or
not run under emud, stops the hunt with an error, as no detection), the
detection count and the twin's failures, then
the command that reproduces each bug's first detection under pct (--race and
--debug run every program with EMUD_RACE=1 and MORI_CCO_SDMA_DEBUG=1). Exit
status 1 when pct missed a bug or any twin failed. --shard and emud merge
work as for planted bugs; the record names the pairs and the SHA-256 of
each executable, and merge refuses other builds.`
