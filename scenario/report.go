package scenario

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"text/tabwriter"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// Run statuses, as the daemon and explore name them.
const (
	StatusOK       = "ok"
	StatusHang     = "hang"
	StatusMismatch = "mismatch"
	StatusRace     = "race"
	// StatusMisuse: a host call refused the program's misuse, as the API
	// does on hardware (a *cco.MisuseError: ccoCommDestroy with work in
	// flight). It is a detection, like a hang; StatusError is not.
	StatusMisuse = "misuse"
	StatusError  = "error"
)

// Detected says a status is a bug of the emulated program found (a hang,
// wrong data, a race, a refused misuse) rather than a pass or emud's own
// failure.
func Detected(status string) bool {
	switch status {
	case StatusHang, StatusMismatch, StatusRace, StatusMisuse:
		return true
	}
	return false
}

// Exit statuses of a run, as the emud command ends with them. Scripts tell
// a hang from a data error by the status alone.
const (
	ExitOK       = 0
	ExitFailed   = 1
	ExitHang     = 2
	ExitMismatch = 3
	// ExitCalibration: a calibration report with a row outside tolerance.
	ExitCalibration = 4
	// ExitRace: the race detector (--race) found unordered conflicting
	// accesses.
	ExitRace = 5
)

// ExitError carries the exit status a failure should end the process
// with.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// Report is everything one run produced: its summary when it passed, its
// hang report when it hung, the error otherwise. It is what run and replay
// print, what explore stops on and what the daemon stores.
type Report struct {
	Status  string         `json:"status"`
	Summary *Summary       `json:"summary,omitempty"`
	Hang    *sim.HangError `json:"hang,omitempty"`
	Races   *race.Error    `json:"races,omitempty"`
	Error   string         `json:"error,omitempty"`
	// Err is the run's error, for exit statuses; Outcome the run's
	// numbers (set when it passed, and when it finished with wrong data).
	Err     error     `json:"-"`
	Outcome *Outcome  `json:"-"`
	Sc      *Scenario `json:"-"` // what ran
	O       Options   `json:"-"` // with what
}

// RunOnce runs sc once with o and classifies what happened. A panic in the
// scenario's host code (a bug in emud, not in the emulated program, whose
// panics sim turns into errors) becomes an error report: a daemon serving
// many runs must survive any one of them.
func RunOnce(sc *Scenario, o Options) (rep *Report) {
	rep = &Report{Sc: sc, O: o}
	defer func() {
		if v := recover(); v != nil {
			rep.Status, rep.Err = StatusError, fmt.Errorf("%s panicked (seed %d): %v\n%s", sc.Name, o.Seed, v, debug.Stack())
			rep.Error = rep.Err.Error()
		}
	}()
	res, err := sc.Run(o)
	rep.Outcome = res
	var hang *sim.HangError
	var bad *MismatchError
	var races *race.Error
	var refused *cco.MisuseError
	switch {
	case errors.As(err, &hang):
		rep.Status, rep.Hang, rep.Err = StatusHang, hang, err
	case errors.As(err, &races):
		rep.Status, rep.Races, rep.Err = StatusRace, races, err
	case errors.As(err, &bad):
		rep.Status, rep.Err = StatusMismatch, err
	case errors.As(err, &refused):
		rep.Status, rep.Err = StatusMisuse, fmt.Errorf("%s: a call refused misuse (seed %d): %w", sc.Name, o.Seed, err)
	case err != nil:
		rep.Status, rep.Err = StatusError, fmt.Errorf("%s failed (seed %d): %w", sc.Name, o.Seed, err)
	default:
		rep.Status, rep.Summary = StatusOK, Summarize(sc, o, res)
		return rep
	}
	rep.Error = rep.Err.Error()
	return rep
}

// ExitErr is the error (carrying the exit status) a command returns for
// the report; nil when the run passed.
func (r *Report) ExitErr() error {
	switch r.Status {
	case StatusHang:
		return &ExitError{ExitHang, fmt.Errorf("%s: %w (report on stdout)", r.Sc.Name, r.Hang)}
	case StatusMismatch:
		return &ExitError{ExitMismatch, r.Err}
	case StatusRace:
		n := len(r.Races.Reports) + r.Races.Dropped
		return &ExitError{ExitRace, fmt.Errorf("%s (seed %d): %d data race(s) (report on stdout)", r.Sc.Name, r.O.Seed, n)}
	case StatusError, StatusMisuse:
		return r.Err
	}
	return nil
}

// Digest is the run's trace digest, whatever the outcome (empty when the
// run never started).
func (r *Report) Digest() string {
	switch {
	case r.Summary != nil:
		return r.Summary.Digest
	case r.Hang != nil:
		return r.Hang.Digest
	case r.Outcome != nil:
		return r.Outcome.Digest
	}
	return ""
}

// Write prints the report as the run command does: the table (or JSON
// summary) of a passing run, the hang report (text or JSON) of a hung one.
// Mismatches and errors print nothing here; the caller prints the one-line
// error.
func (r *Report) Write(w io.Writer, asJSON bool) error {
	switch {
	case r.Hang != nil:
		return WriteHang(w, r.Hang, asJSON)
	case r.Races != nil && asJSON:
		b, err := r.Races.JSON()
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case r.Races != nil:
		_, err := io.WriteString(w, r.Races.Text())
		return err
	case r.Summary != nil && asJSON:
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r.Summary)
	case r.Summary != nil:
		return WriteTable(w, r.Sc, r.O, r.Outcome)
	}
	return nil
}

// WriteHang prints a hang report as text or JSON.
func WriteHang(w io.Writer, h *sim.HangError, asJSON bool) error {
	if !asJSON {
		_, err := io.WriteString(w, h.Text())
		return err
	}
	b, err := h.JSON()
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// modelNote marks the placeholder model, whose numbers are right in shape
// only.
func modelNote(name string) string {
	if name == "placeholder" {
		return " (uncalibrated)"
	}
	return ""
}

// WriteTable prints a passing run's table: a header line naming the
// shape, one row per rank, the seed and the digest.
func WriteTable(w io.Writer, sc *Scenario, o Options, res *Outcome) error {
	note := ""
	if o.Debug {
		note = ", debug checks on"
	}
	if o.Phantom {
		note += ", " + PhantomNote
	}
	shape := fmt.Sprintf("%d queue ids per GPU pair", o.Queues)
	if sc.Fabric {
		t, _ := o.Topology().Normalize()
		shape = fmt.Sprintf("LSA domains of %d, CFT teams of %d, multicast groups of %d", t.LsaSize, t.CftSize, t.CftMcSize)
	}
	fmt.Fprintf(w, "%s: %d ranks, %s %s, %s, timing model %s%s%s\n",
		sc.Name, o.Ranks, FormatBytes(o.Bytes), sc.BytesMeaning(), shape, res.Model, modelNote(res.Model), note)
	if len(res.Ranks) == 0 {
		fmt.Fprintf(w, "no hang, right data at %.3f µs (the program does not time its ranks)\n", res.End.Micros())
	} else if err := writeRanks(w, res.Ranks); err != nil {
		return err
	}
	if o.Perturb != sim.LevelExact || o.Strategy != sim.StrategyRandom {
		fmt.Fprintf(w, "timing perturbation: level %v; strategy %v\n", o.Perturb, o.Strategy)
	}
	if !o.Faults.Empty() {
		fmt.Fprintf(w, "faults: %s; %d injected\n", o.Faults, len(res.Injected))
		for _, f := range res.Injected {
			fmt.Fprintf(w, "  injected %s\n", f.Error())
		}
	}
	_, err := fmt.Fprintf(w, "seed: %d\ndigest: %s\n", res.Seed, res.Digest)
	return err
}

// PhantomNote is what a phantom run's output says about its data.
const PhantomNote = "phantom (timing only: no bytes stored, data checks skipped)"

// JSONRank and Summary are the --json form of the table: the same
// numbers, plus the run's parameters, seed and digest.
type JSONRank struct {
	Rank          int     `json:"rank"`
	TimeMicros    float64 `json:"time_us"`
	BytesSent     uint64  `json:"bytes_sent"`
	BytesReceived uint64  `json:"bytes_received"`
	GBps          float64 `json:"bandwidth_gbps"`
}

type Summary struct {
	Scenario string `json:"scenario"`
	Model    string `json:"model"`
	Ranks    int    `json:"ranks"`
	// BytesPerPair is --bytes, whatever the scenario calls it (per pair,
	// per chunk, payload); the name is kept from the first release.
	BytesPerPair uint64 `json:"bytes_per_pair"`
	Queues       int    `json:"queues"`
	Debug        bool   `json:"debug"`
	Perturb      int    `json:"perturb"`
	Strategy     string `json:"strategy"`
	Faults       string `json:"faults,omitempty"`
	// Injected are the SDMA faults the run's plan injected.
	Injected []engine.Fault `json:"injected,omitempty"`
	// Phantom says the run stored no bytes and checked no data.
	Phantom     bool       `json:"phantom,omitempty"`
	PhantomNote string     `json:"phantom_note,omitempty"`
	EndMicros   float64    `json:"end_us"`
	Results     []JSONRank `json:"results"`
	Seed        uint64     `json:"seed"`
	Digest      string     `json:"digest"`
}

// Summarize is the JSON summary of a passing run.
func Summarize(sc *Scenario, o Options, res *Outcome) *Summary {
	s := &Summary{Scenario: sc.Name, Model: res.Model, Ranks: o.Ranks, BytesPerPair: o.Bytes, Queues: o.Queues,
		Debug: o.Debug, Perturb: int(o.Perturb), Strategy: o.Strategy.String(), Injected: res.Injected,
		EndMicros: res.End.Micros(), Seed: res.Seed, Digest: res.Digest}
	if o.Phantom {
		s.Phantom, s.PhantomNote = true, PhantomNote
	}
	if !o.Faults.Empty() {
		s.Faults = o.Faults.String()
	}
	for _, r := range res.Ranks {
		s.Results = append(s.Results, JSONRank{r.Rank, r.Micros(), r.BytesSent, r.BytesReceived, r.GBps()})
	}
	return s
}

// writeRanks prints the per-rank rows. A rank that finished at time 0 (a
// timing model that charges nothing for what it did) has no bandwidth:
// its GB/s reads "instant" and a line under the table says why, rather
// than a 0.00 that reads as a rank that moved nothing.
func writeRanks(w io.Writer, ranks []RankResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\ttime (µs)\tsent (B)\treceived (B)\tGB/s\t")
	instant := 0
	for _, r := range ranks {
		bw := fmt.Sprintf("%.2f", r.GBps())
		if r.Finish <= 0 {
			bw = "instant"
			instant++
		}
		fmt.Fprintf(tw, "%d\t%.3f\t%d\t%d\t%s\t\n", r.Rank, r.Micros(), r.BytesSent, r.BytesReceived, bw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if instant > 0 {
		_, err := fmt.Fprintf(w, "%d of %d ranks finished at time 0: the timing model charged nothing for their work, so they have no bandwidth (\"instant\")\n", instant, len(ranks))
		return err
	}
	return nil
}
