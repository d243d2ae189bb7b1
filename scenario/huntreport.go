package scenario

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/emud-dev/emud/sim"
)

// ReproduceHunt is the command that reruns r's first detection.
func ReproduceHunt(r Result, fixed bool) string {
	args := []string{"emud", "hunt", r.Bug, "--seed", fmt.Sprint(r.First), "--strategy", r.Strategy}
	if r.PCTSteps > 0 {
		args = append(args, "--pct-steps", fmt.Sprint(r.PCTSteps))
	}
	if r.Race {
		args = append(args, "--race")
	}
	if fixed {
		args = append(args, "--fixed")
	}
	return strings.Join(args, " ")
}

// race says the hunt ran with the race detector.
func (h *Hunting) race() bool {
	for _, st := range h.Strategies {
		if st.Race {
			return true
		}
	}
	return false
}

// found counts the bugs strategy column s detected.
func (h *Hunting) found(s int) int {
	k := 0
	for b := range h.Bugs {
		if h.Res[b][s].Detected > 0 {
			k++
		}
	}
	return k
}

// defaultColumn is the column of the default strategy, or −1.
func (h *Hunting) defaultColumn() int {
	for i, st := range h.Strategies {
		if st.Name == DefaultStrategy {
			return i
		}
	}
	return -1
}

// Write prints the table: one row per bug, then a line per strategy, the
// reproduce commands and the found line of the default strategy.
func (h *Hunting) Write(w io.Writer) error {
	what := "planted bugs"
	if h.Fixed {
		what = "fixed twins"
	}
	detector := ""
	if h.race() {
		detector = ", with the race detector"
	}
	fmt.Fprintf(w, "hunt: %d %s, seeds %d..%d under each strategy%s\n", len(h.Bugs), what, h.First, h.First+uint64(h.Seeds)-1, detector)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "bug\ttiming"
	for _, st := range h.Strategies {
		head += "\t" + st.Name + " first\t" + st.Name + " rate"
	}
	fmt.Fprintln(tw, head+"\t")
	for b, bug := range h.Bugs {
		kind := "any"
		if bug.Planted.Timing {
			kind = "needs"
		}
		if bug.Planted.Faults != "" {
			kind = "fault"
		}
		row := bug.Name + "\t" + kind
		for s := range h.Strategies {
			r := h.Res[b][s]
			first := "-"
			if n := r.SeedsToFirst(h.First); n > 0 {
				first = fmt.Sprint(n)
			}
			row += fmt.Sprintf("\t%s\t%.0f%%", first, 100*r.Rate())
		}
		fmt.Fprintln(tw, row+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for s, st := range h.Strategies {
		var missed []string
		for b, bug := range h.Bugs {
			if h.Res[b][s].Detected == 0 {
				missed = append(missed, bug.Name)
			}
		}
		line := fmt.Sprintf("%s: %d of %d detected", st.Name, h.found(s), len(h.Bugs))
		if len(missed) > 0 && !h.Fixed {
			line += "; missed " + strings.Join(missed, ", ")
		}
		fmt.Fprintln(w, line)
	}
	if h.Fixed {
		return nil
	}
	if d := h.defaultColumn(); d >= 0 {
		for b := range h.Bugs {
			if r := h.Res[b][d]; r.First != 0 {
				fmt.Fprintf(w, "  reproduce: %s\n", ReproduceHunt(r, false))
			}
		}
		_, err := fmt.Fprintf(w, "found %d of %d planted bugs within %d seeds each\n", h.found(d), len(h.Bugs), h.Seeds)
		return err
	}
	return nil
}

// ExitErr is hunt's verdict: an error when the default strategy missed a
// Print writes the table to w, as text (Write) or as indented JSON.
func (h *Hunting) Print(w io.Writer, asJSON bool) error {
	if !asJSON {
		return h.Write(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(h.JSON())
}

// bug, or (Fixed) when a twin failed, or when a run failed without
// detecting its bug (emud's own error: the hunt's figures would hide it).
func (h *Hunting) ExitErr() error {
	for b := range h.Bugs {
		for s := range h.Strategies {
			if r := h.Res[b][s]; r.Failed > 0 {
				return fmt.Errorf("hunt: %s under %s failed on %d of %d seeds without a detection (not counted as found), first at seed %d: %v", r.Bug, r.Strategy, r.Failed, r.Seeds, r.FailedSeed, r.FailedErr)
			}
		}
	}
	if h.Fixed {
		for b := range h.Bugs {
			for s := range h.Strategies {
				if r := h.Res[b][s]; r.Detected > 0 {
					return fmt.Errorf("hunt: the fixed twin of %s failed under %s at seed %d: %s", r.Bug, r.Strategy, r.First, Explain(r.Example))
				}
			}
		}
		return nil
	}
	d := h.defaultColumn()
	if d < 0 {
		return nil
	}
	if k := h.found(d); k < len(h.Bugs) {
		return fmt.Errorf("hunt: %s found %d of %d planted bugs within %d seeds", DefaultStrategy, k, len(h.Bugs), h.Seeds)
	}
	return nil
}

// HuntJSON is hunt's --json output.
type HuntJSON struct {
	FirstSeed uint64        `json:"first_seed"`
	Seeds     int           `json:"seeds"`
	Fixed     bool          `json:"fixed"`
	Race      bool          `json:"race,omitempty"` // the race detector was on
	Bugs      []HuntBugJSON `json:"bugs"`
	Default   string        `json:"default_strategy"`
	Found     int           `json:"found"`
}

// HuntBugJSON is one bug's row of HuntJSON.
type HuntBugJSON struct {
	Name    string           `json:"name"`
	Class   string           `json:"class"`
	Source  string           `json:"source"`
	Timing  bool             `json:"needs_timing"`
	Faults  string           `json:"faults,omitempty"`
	Results []HuntResultJSON `json:"results"`
}

// HuntResultJSON is one strategy's cell of a row.
type HuntResultJSON struct {
	Strategy     string  `json:"strategy"`
	SeedsToFirst int     `json:"seeds_to_first"` // 0: not detected
	Detected     int     `json:"detected"`
	Rate         float64 `json:"rate"`
	Example      string  `json:"example,omitempty"`
}

// JSON is the table as HuntJSON.
func (h *Hunting) JSON() HuntJSON {
	j := HuntJSON{FirstSeed: h.First, Seeds: h.Seeds, Fixed: h.Fixed, Race: h.race(), Default: DefaultStrategy}
	if d := h.defaultColumn(); d >= 0 {
		j.Found = h.found(d)
	}
	for b, bug := range h.Bugs {
		p := bug.Planted
		jb := HuntBugJSON{Name: bug.Name, Class: p.Class, Source: p.Source, Timing: p.Timing, Faults: p.Faults}
		for s := range h.Strategies {
			r := h.Res[b][s]
			jr := HuntResultJSON{Strategy: r.Strategy, SeedsToFirst: r.SeedsToFirst(h.First), Detected: r.Detected, Rate: r.Rate()}
			if r.Example != nil {
				jr.Example = Explain(r.Example)
			}
			jb.Results = append(jb.Results, jr)
		}
		j.Bugs = append(j.Bugs, jb)
	}
	return j
}

// HuntOnce runs planted scenario sc (or with fixed its twin) once, as
// "emud hunt BUG --seed" does, and prints its hang report or data error,
// or that it passed, with the seed and the digest (asJSON: one JSON
// object). adjust, if set, edits the run's options first (a trace
// recorder attaches there). The error carries the exit status.
func HuntOnce(w io.Writer, sc *Scenario, st Strategy, seed uint64, pctSteps int, fixed, asJSON bool, adjust func(*Options)) error {
	if st.Schedule == sim.StrategyPCT && pctSteps == 0 {
		pctSteps = PCTStepsFor(sc, st, 1, fixed)
	}
	rep, err := huntRun(sc, st, seed, pctSteps, fixed, adjust)
	if err != nil {
		return err
	}
	what := "planted bug"
	if fixed {
		what = "fixed twin"
	}
	if asJSON {
		if err := writeHuntOnceJSON(w, sc, st, seed, fixed, rep); err != nil {
			return err
		}
	} else if err := writeHuntOnce(w, sc, what, seed, rep); err != nil {
		return err
	}
	switch rep.Status {
	case StatusOK:
		return nil
	case StatusHang:
		return &ExitError{Code: ExitHang, Err: fmt.Errorf("hunt %s (%s) seed %d under %s: hang", sc.Name, what, seed, st.Name)}
	case StatusMismatch:
		return &ExitError{Code: ExitMismatch, Err: fmt.Errorf("hunt %s (%s) seed %d under %s: %w", sc.Name, what, seed, st.Name, rep.Err)}
	}
	return rep.ExitErr()
}

func writeHuntOnce(w io.Writer, sc *Scenario, what string, seed uint64, rep *Report) error {
	var err error
	switch {
	case rep.Hang != nil:
		err = WriteHang(w, rep.Hang, false)
	case rep.Status != StatusOK && rep.Digest() == "":
		// A race report or an error ends the run before its trace digest.
		_, err = fmt.Fprintf(w, "%s\nseed: %d\n", rep.Error, seed)
	case rep.Status != StatusOK:
		_, err = fmt.Fprintf(w, "%s\nseed: %d\ndigest: %s\n", rep.Error, seed, rep.Digest())
	default:
		_, err = fmt.Fprintf(w, "%s (%s): no hang, right data at %.3f µs on %d ranks\nseed: %d\ndigest: %s\n",
			sc.Name, what, rep.Outcome.End.Micros(), rep.O.Ranks, seed, rep.Digest())
	}
	return err
}

func writeHuntOnceJSON(w io.Writer, sc *Scenario, st Strategy, seed uint64, fixed bool, rep *Report) error {
	if rep.Hang != nil {
		return WriteHang(w, rep.Hang, true)
	}
	j := struct {
		Bug      string `json:"bug"`
		Fixed    bool   `json:"fixed"`
		Strategy string `json:"strategy"`
		Seed     uint64 `json:"seed"`
		Error    string `json:"error,omitempty"`
		Digest   string `json:"digest"`
	}{sc.Name, fixed, st.Name, seed, rep.Error, rep.Digest()}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}
