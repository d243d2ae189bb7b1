package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/emud-dev/emud/scenario"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/bugs"
	"github.com/emud-dev/emud/sim"
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
		Long: `Run every planted bug of the corpus (package bugs), or the ones named, under
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
					return fmt.Errorf("hunt --seed runs one bug: name exactly one (the corpus: %s)", corpusNames())
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
			var sts []bugs.Strategy
			for _, name := range strings.Split(strategies, ",") {
				st, err := bugs.LookupStrategy(strings.TrimSpace(name))
				if err != nil {
					return fmt.Errorf("invalid --strategies: %w", err)
				}
				sts = append(sts, st)
			}
			list := bugs.Corpus()
			if len(args) > 0 {
				list = nil
				for _, a := range args {
					b, err := bugs.Lookup(a)
					if err != nil {
						return err
					}
					list = append(list, b)
				}
			}
			errOut := cmd.ErrOrStderr()
			prog := newProgress(errOut, progress || isTerminal(errOut), "hunt", len(list)*len(sts))
			if prog != nil {
				prog.unit = "hunts"
			}
			h := hunt(list, sts, first, seeds, jobs, fixed, prog.step)
			prog.finish()
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				if err := enc.Encode(h.json()); err != nil {
					return err
				}
			} else if err := h.write(cmd.OutOrStdout()); err != nil {
				return err
			}
			return h.exitErr()
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
	fs.StringVar(&strategy, "strategy", bugs.DefaultStrategy, "with --seed: the strategy (ties, perturb, pct)")
	fs.IntVar(&pctSteps, "pct-steps", 0, "with --seed and pct: PCT's k (0: measured as hunt measures it, one run of seed 1 without PCT)")
	fs.StringVar(&tracePath, "trace", "", "with --seed: write the run's Chrome trace-event JSON to this file")
	return cmd
}

func corpusNames() string {
	var names []string
	for _, b := range bugs.Corpus() {
		names = append(names, b.Name)
	}
	return strings.Join(names, ", ")
}

// huntOne runs one corpus program once and prints what run would.
func huntOne(cmd *cobra.Command, name string, seed uint64, strategy string, pctSteps int, fixed, asJSON bool, tracePath string) error {
	b, err := bugs.Lookup(name)
	if err != nil {
		return err
	}
	st, err := bugs.LookupStrategy(strategy)
	if err != nil {
		return fmt.Errorf("invalid --strategy: %w", err)
	}
	c := bugs.Config{Seed: seed, Perturb: st.Perturb, Strategy: st.Schedule}
	if st.Schedule == sim.StrategyPCT {
		if pctSteps == 0 {
			pctSteps = bugs.PCTSteps(b, st, 1, fixed)
		}
		c.PCT = sim.PCT{Depth: st.PCTDepth, Steps: pctSteps}
	}
	var o scenario.Options
	var writeTrace func() (bool, error)
	if tracePath != "" {
		if writeTrace, err = scenario.TraceToFile(&o, tracePath); err != nil {
			return err
		}
		c.Observe = o.Observe
	}
	out, runErr := b.Exec(c, fixed)
	if writeTrace != nil {
		if _, err := writeTrace(); err != nil {
			return err
		}
	}
	w := cmd.OutOrStdout()
	what := "planted bug"
	if fixed {
		what = "fixed twin"
	}
	var h *sim.HangError
	var wrong *bugs.WrongData
	switch {
	case errors.As(runErr, &h):
		if err := scenario.WriteHang(w, h, asJSON); err != nil {
			return err
		}
		return &scenario.ExitError{Code: scenario.ExitHang, Err: fmt.Errorf("hunt %s (%s) seed %d under %s: hang", name, what, seed, st.Name)}
	case runErr != nil && !asJSON:
		fmt.Fprintf(w, "%s\nseed: %d\ndigest: %s\n", runErr, seed, out.Digest)
	case runErr == nil && !asJSON:
		fmt.Fprintf(w, "%s (%s): no hang, right data at %.3f µs on %d ranks\nseed: %d\ndigest: %s\n", name, what, out.End.Micros(), out.Ranks, seed, out.Digest)
	}
	if asJSON {
		j := struct {
			Bug      string `json:"bug"`
			Fixed    bool   `json:"fixed"`
			Strategy string `json:"strategy"`
			Seed     uint64 `json:"seed"`
			Error    string `json:"error,omitempty"`
			Digest   string `json:"digest"`
		}{name, fixed, st.Name, seed, "", out.Digest}
		if runErr != nil {
			j.Error = runErr.Error()
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		if err := enc.Encode(j); err != nil {
			return err
		}
	}
	switch {
	case errors.As(runErr, &wrong):
		return &scenario.ExitError{Code: scenario.ExitMismatch, Err: fmt.Errorf("hunt %s (%s) seed %d under %s: %w", name, what, seed, st.Name, runErr)}
	case runErr != nil:
		return runErr
	}
	return nil
}

// reproduceHunt is the command that reruns r's first detection.
func reproduceHunt(r bugs.Result, fixed bool) string {
	args := []string{"emud", "hunt", r.Bug, "--seed", fmt.Sprint(r.First), "--strategy", r.Strategy}
	if r.PCTSteps > 0 {
		args = append(args, "--pct-steps", fmt.Sprint(r.PCTSteps))
	}
	if fixed {
		args = append(args, "--fixed")
	}
	return strings.Join(args, " ")
}

// hunting is the outcome of a hunt: one result per (bug, strategy).
type hunting struct {
	bugs       []*bugs.Bug
	strategies []bugs.Strategy
	first      uint64
	seeds      int
	fixed      bool
	res        [][]bugs.Result // [bug][strategy]
}

// hunt runs every (bug, strategy) pair, jobs at a time. Each pair's seeds
// run in order in one goroutine; results land in fixed slots, so the table
// does not depend on jobs.
func hunt(list []*bugs.Bug, sts []bugs.Strategy, first uint64, seeds, jobs int, fixed bool, step func(bool)) *hunting {
	h := &hunting{bugs: list, strategies: sts, first: first, seeds: seeds, fixed: fixed, res: make([][]bugs.Result, len(list))}
	type pair struct{ b, s int }
	work := make(chan pair)
	var wg sync.WaitGroup
	for range min(jobs, len(list)*len(sts)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				r := bugs.Hunt(list[p.b], sts[p.s], first, seeds, fixed)
				h.res[p.b][p.s] = r
				if step != nil {
					step(r.Detected > 0 == !fixed)
				}
			}
		}()
	}
	for b := range list {
		h.res[b] = make([]bugs.Result, len(sts))
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

// found counts the bugs strategy column s detected.
func (h *hunting) found(s int) int {
	k := 0
	for b := range h.bugs {
		if h.res[b][s].Detected > 0 {
			k++
		}
	}
	return k
}

// defaultColumn is the column of the default strategy, or −1.
func (h *hunting) defaultColumn() int {
	for i, st := range h.strategies {
		if st.Name == bugs.DefaultStrategy {
			return i
		}
	}
	return -1
}

func (h *hunting) write(w io.Writer) error {
	what := "planted bugs"
	if h.fixed {
		what = "fixed twins"
	}
	fmt.Fprintf(w, "hunt: %d %s, seeds %d..%d under each strategy\n", len(h.bugs), what, h.first, h.first+uint64(h.seeds)-1)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "bug\ttiming"
	for _, st := range h.strategies {
		head += "\t" + st.Name + " first\t" + st.Name + " rate"
	}
	fmt.Fprintln(tw, head+"\t")
	for b, bug := range h.bugs {
		kind := "any"
		if bug.Timing {
			kind = "needs"
		}
		if !bug.Faults.Empty() {
			kind = "fault"
		}
		row := bug.Name + "\t" + kind
		for s := range h.strategies {
			r := h.res[b][s]
			first := "-"
			if n := r.SeedsToFirst(h.first); n > 0 {
				first = fmt.Sprint(n)
			}
			row += fmt.Sprintf("\t%s\t%.0f%%", first, 100*r.Rate())
		}
		fmt.Fprintln(tw, row+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for s, st := range h.strategies {
		var missed []string
		for b, bug := range h.bugs {
			if h.res[b][s].Detected == 0 {
				missed = append(missed, bug.Name)
			}
		}
		line := fmt.Sprintf("%s: %d of %d detected", st.Name, h.found(s), len(h.bugs))
		if len(missed) > 0 && !h.fixed {
			line += "; missed " + strings.Join(missed, ", ")
		}
		fmt.Fprintln(w, line)
	}
	if h.fixed {
		return nil
	}
	if d := h.defaultColumn(); d >= 0 {
		for b := range h.bugs {
			if r := h.res[b][d]; r.First != 0 {
				fmt.Fprintf(w, "  reproduce: %s\n", reproduceHunt(r, false))
			}
		}
		_, err := fmt.Fprintf(w, "found %d of %d planted bugs within %d seeds each\n", h.found(d), len(h.bugs), h.seeds)
		return err
	}
	return nil
}

func (h *hunting) exitErr() error {
	if h.fixed {
		for b := range h.bugs {
			for s := range h.strategies {
				if r := h.res[b][s]; r.Detected > 0 {
					return fmt.Errorf("hunt: the fixed twin of %s failed under %s at seed %d: %s", r.Bug, r.Strategy, r.First, bugs.Explain(r.Example))
				}
			}
		}
		return nil
	}
	d := h.defaultColumn()
	if d < 0 {
		return nil
	}
	if k := h.found(d); k < len(h.bugs) {
		return fmt.Errorf("hunt: %s found %d of %d planted bugs within %d seeds", bugs.DefaultStrategy, k, len(h.bugs), h.seeds)
	}
	return nil
}

// jsonHunt is hunt's --json output.
type jsonHunt struct {
	FirstSeed uint64    `json:"first_seed"`
	Seeds     int       `json:"seeds"`
	Fixed     bool      `json:"fixed"`
	Bugs      []jsonBug `json:"bugs"`
	Default   string    `json:"default_strategy"`
	Found     int       `json:"found"`
}

type jsonBug struct {
	Name    string        `json:"name"`
	Class   string        `json:"class"`
	Source  string        `json:"source"`
	Timing  bool          `json:"needs_timing"`
	Faults  string        `json:"faults,omitempty"`
	Results []jsonHuntRes `json:"results"`
}

type jsonHuntRes struct {
	Strategy     string  `json:"strategy"`
	SeedsToFirst int     `json:"seeds_to_first"` // 0: not detected
	Detected     int     `json:"detected"`
	Rate         float64 `json:"rate"`
	Example      string  `json:"example,omitempty"`
}

func (h *hunting) json() jsonHunt {
	j := jsonHunt{FirstSeed: h.first, Seeds: h.seeds, Fixed: h.fixed, Default: bugs.DefaultStrategy}
	if d := h.defaultColumn(); d >= 0 {
		j.Found = h.found(d)
	}
	for b, bug := range h.bugs {
		jb := jsonBug{Name: bug.Name, Class: bug.Class, Source: bug.Source, Timing: bug.Timing}
		if !bug.Faults.Empty() {
			jb.Faults = bug.Faults.String()
		}
		for s := range h.strategies {
			r := h.res[b][s]
			jr := jsonHuntRes{Strategy: r.Strategy, SeedsToFirst: r.SeedsToFirst(h.first), Detected: r.Detected, Rate: r.Rate()}
			if r.Example != nil {
				jr.Example = bugs.Explain(r.Example)
			}
			jb.Results = append(jb.Results, jr)
		}
		j.Bugs = append(j.Bugs, jb)
	}
	return j
}
