package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"

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
		perSeed  bool
		shardArg string
		shardOut string
	)
	cmd := &cobra.Command{
		Use:   "explore [SCENARIO] | explore [flags] -- PROGRAM [ARGS...]",
		Short: "Run a scenario or a C++ program under many seeds and stop at the first hang or failed check",
		Long:  exploreLong,
		Args:  scenarioOrProgram,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := onlyWith(cmd, "shard", "without it the report goes to stdout", "shard-out"); err != nil {
				return err
			}
			if merged != nil && merged.Program != nil {
				return mergeProgram(cmd, f, merged, f.asJSON)
			}
			if at := cmd.ArgsLenAtDash(); at >= 0 && merged == nil {
				switch {
				case seeds < 1:
					return fmt.Errorf("invalid --seeds %d: need at least 1", seeds)
				case jobs < 1:
					return fmt.Errorf("invalid --jobs %d: need at least 1", jobs)
				case first+uint64(seeds)-1 < first:
					return fmt.Errorf("invalid --first-seed %d with --seeds %d: the range passes 2^64", first, seeds)
				}
				return exploreProgram(cmd, f, args[at:], first, seeds, jobs, progress, perSeed, shardArg, shardOut)
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
	fs.BoolVar(&perSeed, "process-per-seed", false, "a C++ program's seeds: start the program as a process for every seed, not in a warm seed server (emud c++'s seed form; see docs/guide-cxx.md)")
	fs.StringVar(&shardArg, "shard", "", "run shard K/N of the seeds (K from 0; contiguous ranges) and write its JSON record for emud merge instead of the report")
	fs.StringVar(&shardOut, "shard-out", "-", "with --shard: the file the record goes to (- = stdout)")
	return cmd
}

// scenarioOrProgram admits a scenario name, or after "--" a program and
// its arguments.
func scenarioOrProgram(cmd *cobra.Command, args []string) error {
	at := cmd.ArgsLenAtDash()
	switch {
	case at < 0:
		return cobra.MaximumNArgs(1)(cmd, args)
	case at > 0:
		return fmt.Errorf("a scenario (%s) and a program after --: give one", args[0])
	case len(args) == 0:
		return fmt.Errorf("no program after --")
	}
	return nil
}

// unshardedFlags are explore's flags that do not change its answer: they
// are left out of a shard's record, so shards may differ in them.
var unshardedFlags = map[string]bool{"shard": true, "shard-out": true, "jobs": true, "progress": true, "json": true, "mem-budget": true, "scenario": true, "programs": true, "process-per-seed": true}

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

After --, a C++ program built with emud c++ runs in a scenario's place: each
seed runs it once, with the seed and --perturb's, --strategy's, --pct-depth's,
--pct-steps's, --race's and --debug's meaning passed in its environment
(EMUD_SEED, EMUD_PERTURB, EMUD_STRATEGY, EMUD_PCT_*, EMUD_RACE,
MORI_CCO_SDMA_DEBUG), and the first failing seed's output is printed with the
emud replay command that reruns it. Its exit status is the program's: 2 hang,
5 race, 1 a failed call or check. PCT's steps are measured as a scenario's:
one run of the first seed without PCT counts the program's scheduling steps
(EMUD_STEPS=1), unless --pct-steps says. --shard K/N runs that shard's seeds
and writes its record, which names the program and the SHA-256 of its
executable; emud merge, where the same build is, reruns the failing seed.

` + exitStatusHelp + ` (of the seed found; 0 when all passed)`

// A built C++ program (emud c++) runs where a scenario would: "emud
// explore [flags] -- PROGRAM [ARGS...]" runs it once per seed, several at
// a time, with the schedule in its environment (capi reads EMUD_SEED,
// EMUD_PERTURB, EMUD_STRATEGY, EMUD_PCT_DEPTH, EMUD_PCT_STEPS, EMUD_RACE,
// MORI_CCO_SDMA_DEBUG), and "emud replay --seed N -- PROGRAM [ARGS...]"
// reruns one seed. The program's exit status is the run's (0 passed, 1
// failed, 2 hang, 5 race: capi's, as a scenario's; a program's own
// failed check is its status, usually 1).

// programFlags checks the flags that reach a program and returns the
// environment they make, without the seed.
func programFlags(f *scenarioFlags) ([]string, error) {
	if f.perturb < 0 || f.perturb > int(sim.MaxLevel) {
		return nil, fmt.Errorf("invalid --perturb %d: need 0..%d", f.perturb, sim.MaxLevel)
	}
	st, err := sim.ParseStrategy(f.strategy)
	if err != nil {
		return nil, fmt.Errorf("invalid --strategy: %w", err)
	}
	if err := f.o.PCT.Check(); err != nil {
		return nil, fmt.Errorf("invalid --pct-depth/--pct-steps: %w", err)
	}
	env := []string{fmt.Sprintf("EMUD_PERTURB=%d", f.perturb), "EMUD_STRATEGY=random", "EMUD_SUMMARY=1"}
	if st == sim.StrategyPCT {
		env[1] = "EMUD_STRATEGY=pct"
	}
	if f.o.PCT.Depth != 0 {
		env = append(env, fmt.Sprintf("EMUD_PCT_DEPTH=%d", f.o.PCT.Depth))
	}
	if f.o.PCT.Steps != 0 {
		env = append(env, fmt.Sprintf("EMUD_PCT_STEPS=%d", f.o.PCT.Steps))
	}
	if f.o.Race {
		env = append(env, "EMUD_RACE=1")
	}
	if f.o.Debug {
		env = append(env, "MORI_CCO_SDMA_DEBUG=1")
	}
	return env, nil
}

// programEnv is the process environment of one run: the caller's, with
// the variables emud sets replaced.
func programEnv(set []string) []string {
	ours := map[string]bool{}
	for _, kv := range append([]string{"EMUD_SEED=", "EMUD_RACE=", "MORI_CCO_SDMA_DEBUG=", "EMUD_PCT_DEPTH=", "EMUD_PCT_STEPS=", "EMUD_TRACE="}, set...) {
		ours[kv[:strings.IndexByte(kv, '=')]] = true
	}
	var env []string
	for _, kv := range os.Environ() {
		if i := strings.IndexByte(kv, '='); i < 0 || !ours[kv[:i]] {
			env = append(env, kv)
		}
	}
	return append(env, set...)
}

// programRun is one run of a program.
type programRun struct {
	seed           uint64
	code           int
	stdout, stderr string
	warm           bool // it ran in a seed server, not a process of its own
}

// digestRe finds the digest in the summary line capi prints (EMUD_SUMMARY).
var digestRe = regexp.MustCompile(`(?m)^emud: seed \d+: end \d+ ps, digest ([0-9a-f]+)$`)

func (r programRun) digest() string {
	if m := digestRe.FindStringSubmatch(r.stderr); m != nil {
		return m[1]
	}
	return ""
}

// runProgram runs argv with env; a program that cannot start is an error.
func runProgram(argv, env []string, stdout, stderr io.Writer) (int, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, stdout, stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &ee):
		if ee.ExitCode() < 0 { // killed by a signal
			return scenario.ExitFailed, nil
		}
		return ee.ExitCode(), nil
	}
	return 0, fmt.Errorf("program %s: %w", argv[0], err)
}

// replayFlags are the flags that make replay's run explore's: replay's
// defaults differ (exact timing, random strategy), so each is spelled out.
func replayFlags(f *scenarioFlags) string {
	s := fmt.Sprintf("--perturb %d --strategy %s ", f.perturb, f.strategy)
	if f.o.PCT.Depth != 0 {
		s += fmt.Sprintf("--pct-depth %d ", f.o.PCT.Depth)
	}
	if f.o.PCT.Steps != 0 {
		s += fmt.Sprintf("--pct-steps %d ", f.o.PCT.Steps)
	}
	if f.o.Race {
		s += "--race "
	}
	if f.o.Debug {
		s += "--debug "
	}
	return s
}
