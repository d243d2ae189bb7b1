package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/internal/fileio"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/scenario/shard"
	"github.com/emud-dev/emud/sim"
)

// programHunt is hunt over C++ programs: pairs (a planted bug and its
// fixed twin) × strategies, every seed of the range run for the bug and
// for the twin.
type programHunt struct {
	pairs []programPair
	sts   []scenario.Strategy
	race  bool
	debug bool // MORI_CCO_SDMA_DEBUG=1
	warn  io.Writer
	first uint64
	seeds int
	sweep sweepOpts
	cells []shard.HuntCell // pair-major, as the table reads
	// twinOut is the first failing twin run's output (stdout, stderr) by
	// cell, kept for the error (not in a merge: its shards ran it).
	twinOut map[int]string
}

// huntPairs reads the pairs of a program hunt: the operands after --, or
// --programs' file, or a merged sweep's.
func (cf *huntFlags) huntPairs(cmd *cobra.Command, args []string) ([]programPair, error) {
	var specs []string
	switch {
	case cf.merged != nil:
		specs = cf.merged.Program
	case cf.programs != "" && cmd.ArgsLenAtDash() >= 0:
		return nil, fmt.Errorf("invalid --programs: give the program pairs in its file or after --, not both")
	case cf.programs != "":
		if len(args) > 0 {
			return nil, fmt.Errorf("invalid --programs: planted bugs (%s) and C++ programs in one hunt: give one", strings.Join(args, " "))
		}
		r, err := fileio.Open(cf.programs, 16<<20, "hunt --programs")
		if err != nil {
			return nil, err
		}
		defer r.Close()
		return parsePairs(r, cf.programs)
	default:
		at := cmd.ArgsLenAtDash()
		if at > 0 {
			return nil, fmt.Errorf("planted bugs (%s) and C++ programs after -- in one hunt: give one", strings.Join(args[:at], " "))
		}
		specs = args[at:]
	}
	if len(specs) == 0 {
		return nil, fmt.Errorf("no program after --: give BUG[:FIXED] pairs")
	}
	if len(specs) > maxPairs {
		return nil, fmt.Errorf("%d program pairs: at most %d", len(specs), maxPairs)
	}
	pairs := make([]programPair, len(specs))
	for i, s := range specs {
		p, err := parsePair(s)
		if err != nil {
			return nil, err
		}
		pairs[i] = p
	}
	return pairs, nil
}

// runPrograms is hunt over C++ programs (after --, or --programs).
func (cf *huntFlags) runPrograms(cmd *cobra.Command, args []string) error {
	for _, fl := range []string{"seed", "trace", "fixed", "strategy", "pct-steps"} {
		if cmd.Flags().Changed(fl) {
			return fmt.Errorf("invalid --%s: not with C++ programs (each fixed twin runs beside its bug; emud replay -- PROGRAM reruns one seed)", fl)
		}
	}
	switch {
	case cf.seeds < 1:
		return fmt.Errorf("invalid --seeds %d: need at least 1", cf.seeds)
	case cf.jobs < 1:
		return fmt.Errorf("invalid --jobs %d: need at least 1", cf.jobs)
	case cf.first+uint64(cf.seeds)-1 < cf.first:
		return fmt.Errorf("invalid --first-seed %d with --seeds %d: the range passes 2^64", cf.first, cf.seeds)
	}
	pairs, err := cf.huntPairs(cmd, args)
	if err != nil {
		return err
	}
	sts, err := scenario.ParseStrategies(cf.strategies)
	if err != nil {
		return err
	}
	var argvs [][]string
	var specs []string
	for _, p := range pairs {
		argvs = append(argvs, p.bug, p.fixed)
		specs = append(specs, p.spec)
	}
	sums, err := programSums(argvs...)
	if err != nil {
		return err
	}
	h := &programHunt{pairs: pairs, sts: sts, race: cf.race, debug: cf.debug, first: cf.first, seeds: cf.seeds, warn: cmd.ErrOrStderr(),
		sweep: sweepOpts{processPerSeed: cf.processPerSeed, warn: cmd.ErrOrStderr()}}
	if cf.merged != nil {
		if !slices.Equal(sums, cf.merged.Sums) {
			return fmt.Errorf("merge: the programs here are not the builds the shards ran (SHA-256 %s, the shards' %s)", strings.Join(sums, ","), strings.Join(cf.merged.Sums, ","))
		}
		if len(cf.merged.Hunt) != len(pairs)*len(sts) {
			return fmt.Errorf("merge: %d hunt cells for %d program pairs × %d strategies: not one sweep", len(cf.merged.Hunt), len(pairs), len(sts))
		}
		h.cells = cf.merged.Hunt
		return h.print(cmd.OutOrStdout(), cf.asJSON)
	}
	first, n := cf.first, cf.seeds
	var sh *shard.Spec
	if cf.shardArg != "" {
		spec, err := shard.Parse(cf.shardArg)
		if err != nil {
			return err
		}
		sh = &spec
		first, n = spec.Range(cf.first, cf.seeds)
	}
	errOut := cmd.ErrOrStderr()
	var step func(bool)
	if sh == nil {
		prog := newProgress(errOut, cf.progress || isTerminal(errOut), "hunt", len(pairs)*len(sts))
		if prog != nil {
			prog.unit = "hunts"
		}
		defer prog.finish()
		step = prog.step
	}
	if err := h.run(first, n, cf.jobs, step); err != nil {
		return err
	}
	if sh != nil {
		rec := shardRecord(cmd, "hunt", "", cf.first, cf.seeds, *sh)
		rec.Program, rec.Sums, rec.Hunt = specs, sums, h.cells
		return rec.Write(cmd.OutOrStdout(), cf.shardOut)
	}
	return h.print(cmd.OutOrStdout(), cf.asJSON)
}

// env is the environment of strategy st's runs, PCT's k steps.
func (h *programHunt) env(st scenario.Strategy, steps int) []string {
	set := []string{fmt.Sprintf("EMUD_PERTURB=%d", int(st.Perturb)), "EMUD_STRATEGY=random", "EMUD_SUMMARY=1"}
	if st.Schedule == sim.StrategyPCT {
		set[1] = "EMUD_STRATEGY=pct"
		if steps > 0 {
			set = append(set, fmt.Sprintf("EMUD_PCT_STEPS=%d", steps))
		}
		if st.PCTDepth != 0 {
			set = append(set, fmt.Sprintf("EMUD_PCT_DEPTH=%d", st.PCTDepth))
		}
	}
	if h.race {
		set = append(set, "EMUD_RACE=1")
	}
	if h.debug {
		set = append(set, "MORI_CCO_SDMA_DEBUG=1")
	}
	return set
}

// run runs seeds first..first+n-1 of every pair and strategy. PCT's k is
// measured once per pair at the sweep's first seed (h.first, whatever the
// shard), on the twin where there is one (it passes, so its run is the
// program's whole length), else on the bug.
func (h *programHunt) run(first uint64, n, jobs int, step func(bool)) error {
	for _, p := range h.pairs {
		for _, st := range h.sts {
			c := shard.HuntCell{Bug: p.spec, Strategy: st.Name}
			if st.Schedule == sim.StrategyPCT {
				probe := p.fixed
				if probe == nil {
					probe = p.bug
				}
				k, err := programPCTSteps(probe, h.env(st, 0), h.first, h.warn)
				if err != nil {
					return err
				}
				c.PCTSteps = k
			}
			set := h.env(st, c.PCTSteps)
			if n > 0 {
				runs, _, err := sweepProgram(p.bug, set, first, n, jobs, false, nil, h.sweep)
				if err != nil {
					return err
				}
				for _, r := range runs {
					if r.code == 0 {
						continue
					}
					// A detection is a failed emulated run: one that
					// reached emud's end (the summary line with its
					// digest). A crash, a start-up error or a program
					// that never ran under emud found nothing.
					if r.digest() == "" {
						return fmt.Errorf("hunt: %s at seed %d failed without an emulated run's end (exit status %d, no \"emud: seed N: end\" line: a crash, a start-up error, or not an emud program): not a detection; its output:\nstdout:\n%sstderr:\n%s",
							strings.Join(p.bug, " "), r.seed, r.code, tail(r.stdout, 2000), tail(r.stderr, 2000))
					}
					c.Detected++
					if c.First == 0 {
						c.First = r.seed
					}
				}
				if p.fixed != nil {
					runs, _, err := sweepProgram(p.fixed, set, first, n, jobs, false, nil, h.sweep)
					if err != nil {
						return err
					}
					for _, r := range runs {
						if r.code != 0 {
							c.TwinFailed++
							if c.TwinFirst == 0 {
								c.TwinFirst = r.seed
								if h.twinOut == nil {
									h.twinOut = map[int]string{}
								}
								h.twinOut[len(h.cells)] = fmt.Sprintf("exit status %d\nstdout:\n%sstderr:\n%s", r.code, tail(r.stdout, 2000), tail(r.stderr, 2000))
							}
						}
					}
				}
			}
			h.cells = append(h.cells, c)
			if step != nil {
				step(c.Detected == 0 || c.TwinFailed > 0)
			}
		}
	}
	return nil
}

// replay is the command that reruns seed of argv under st.
func (h *programHunt) replay(c shard.HuntCell, st scenario.Strategy, seed uint64, argv []string) string {
	s := fmt.Sprintf("emud replay --seed %d --perturb %d --strategy %s ", seed, int(st.Perturb), st.Schedule)
	if st.Schedule == sim.StrategyPCT {
		s += fmt.Sprintf("--pct-steps %d ", c.PCTSteps)
		if st.PCTDepth != 0 {
			s += fmt.Sprintf("--pct-depth %d ", st.PCTDepth)
		}
	}
	if h.race {
		s += "--race "
	}
	if h.debug {
		s += "--debug "
	}
	return s + "-- " + strings.Join(argv, " ")
}

// programHuntJSON is a program hunt's --json output.
type programHuntJSON struct {
	FirstSeed uint64           `json:"first_seed"`
	Seeds     int              `json:"seeds"`
	Race      bool             `json:"race,omitempty"`
	Debug     bool             `json:"debug,omitempty"`
	Default   string           `json:"default_strategy"`
	Found     int              `json:"found"`
	Cells     []shard.HuntCell `json:"results"`
}

// print writes the table (or JSON) and returns the exit error: the
// default strategy (pct) missed a bug, or a twin failed under any.
func (h *programHunt) print(w io.Writer, asJSON bool) error {
	ns := len(h.sts)
	def := -1
	for s, st := range h.sts {
		if st.Name == scenario.DefaultStrategy {
			def = s
		}
	}
	found := make([]int, ns)
	for i, c := range h.cells {
		if c.Detected > 0 {
			found[i%ns]++
		}
	}
	if asJSON {
		j := programHuntJSON{FirstSeed: h.first, Seeds: h.seeds, Race: h.race, Debug: h.debug, Default: scenario.DefaultStrategy, Cells: h.cells}
		if def >= 0 {
			j.Found = found[def]
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(j); err != nil {
			return err
		}
	} else {
		race := ""
		if h.race {
			race = " with the race detector (--race: a race is a detection)"
		}
		if h.debug {
			race += " in debug mode (MORI_CCO_SDMA_DEBUG=1)"
		}
		fmt.Fprintf(w, "hunt: %d C++ programs, seeds %d..%d per program and strategy%s; each fixed twin runs the same seeds\n",
			len(h.pairs), h.first, h.first+uint64(h.seeds)-1, race)
		width := len("program")
		for _, p := range h.pairs {
			width = max(width, len(strings.Join(p.bug, " ")))
		}
		fmt.Fprintf(w, "%-*s  %-8s  %-14s  %-9s  %s\n", width, "program", "strategy", "seeds to first", "detected", "twin failed")
		for i, c := range h.cells {
			p := h.pairs[i/ns]
			first, twin := "-", "no twin"
			if c.First != 0 {
				first = fmt.Sprint(c.First - h.first + 1)
			}
			if p.fixed != nil {
				twin = fmt.Sprintf("%d/%d", c.TwinFailed, h.seeds)
			}
			fmt.Fprintf(w, "%-*s  %-8s  %-14s  %-9s  %s\n", width, strings.Join(p.bug, " "), c.Strategy, first, fmt.Sprintf("%d/%d", c.Detected, h.seeds), twin)
		}
		for s, st := range h.sts {
			fmt.Fprintf(w, "%s: found %d of %d planted bugs within %d seeds each\n", st.Name, found[s], len(h.pairs), h.seeds)
		}
		if def >= 0 {
			for i := def; i < len(h.cells); i += ns {
				if c := h.cells[i]; c.First != 0 {
					fmt.Fprintf(w, "reproduce: %s\n", h.replay(c, h.sts[def], c.First, h.pairs[i/ns].bug))
				}
			}
		}
	}
	for i, c := range h.cells {
		if c.TwinFailed > 0 {
			p, st := h.pairs[i/ns], h.sts[i%ns]
			out := ""
			if o, ok := h.twinOut[i]; ok {
				out = "\nits output:\n" + o
			}
			return fmt.Errorf("hunt: the fixed twin %s failed under %s on %d of %d seeds, first %d: %s%s",
				strings.Join(p.fixed, " "), st.Name, c.TwinFailed, h.seeds, c.TwinFirst, h.replay(c, st, c.TwinFirst, p.fixed), out)
		}
	}
	if def >= 0 && found[def] < len(h.pairs) {
		return fmt.Errorf("hunt: %s found %d of %d planted bugs within %d seeds", scenario.DefaultStrategy, found[def], len(h.pairs), h.seeds)
	}
	return nil
}

// tail is the last n bytes of s, marked as cut where it is.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "...\n" + s[len(s)-n:]
}
