package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"text/tabwriter"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// Run statuses, as the daemon and explore name them.
const (
	statusOK       = "ok"
	statusHang     = "hang"
	statusMismatch = "mismatch"
	statusRace     = "race"
	statusError    = "error"
)

// report is everything one run produced: its summary when it passed, its
// hang report when it hung, the error otherwise. It is what run and replay
// print, what explore stops on and what the daemon stores.
type report struct {
	Status  string         `json:"status"`
	Summary *jsonSummary   `json:"summary,omitempty"`
	Hang    *sim.HangError `json:"hang,omitempty"`
	Races   *race.Error    `json:"races,omitempty"`
	Error   string         `json:"error,omitempty"`
	err     error          // the run's error, for exit statuses
	res     *outcome       // the passing run's numbers, for the table
	sc      *scenario      // what ran
	o       options        // with what
}

// runOnce runs sc once with o and classifies what happened. A panic in the
// scenario's host code (a bug in emud, not in the emulated program, whose
// panics sim turns into errors) becomes an error report: a daemon serving
// many runs must survive any one of them.
func runOnce(sc *scenario, o options) (rep *report) {
	rep = &report{sc: sc, o: o}
	defer func() {
		if v := recover(); v != nil {
			rep.Status, rep.err = statusError, fmt.Errorf("%s panicked (seed %d): %v\n%s", sc.name, o.Seed, v, debug.Stack())
			rep.Error = rep.err.Error()
		}
	}()
	res, err := sc.run(o)
	var hang *sim.HangError
	var bad *mismatchError
	var races *race.Error
	switch {
	case errors.As(err, &hang):
		rep.Status, rep.Hang, rep.err = statusHang, hang, err
	case errors.As(err, &races):
		rep.Status, rep.Races, rep.err = statusRace, races, err
	case errors.As(err, &bad):
		rep.Status, rep.err = statusMismatch, err
	case err != nil:
		rep.Status, rep.err = statusError, fmt.Errorf("%s failed (seed %d): %w", sc.name, o.Seed, err)
	default:
		rep.Status, rep.res, rep.Summary = statusOK, res, summarize(sc, o, res)
		return rep
	}
	rep.Error = rep.err.Error()
	return rep
}

// exitErr is the error (carrying the exit status) a command returns for
// the report; nil when the run passed.
func (r *report) exitErr() error {
	switch r.Status {
	case statusHang:
		return &codedError{exitHang, fmt.Errorf("%s: %w (report on stdout)", r.sc.name, r.Hang)}
	case statusMismatch:
		return &codedError{exitMismatch, r.err}
	case statusRace:
		n := len(r.Races.Reports) + r.Races.Dropped
		return &codedError{exitRace, fmt.Errorf("%s (seed %d): %d data race(s) (report on stdout)", r.sc.name, r.o.Seed, n)}
	case statusError:
		return r.err
	}
	return nil
}

// digest is the run's trace digest, whatever the outcome (empty when the
// run never started).
func (r *report) digest() string {
	switch {
	case r.Summary != nil:
		return r.Summary.Digest
	case r.Hang != nil:
		return r.Hang.Digest
	}
	return ""
}

// write prints the report as the run command does: the table (or JSON
// summary) of a passing run, the hang report (text or JSON) of a hung one.
// Mismatches and errors print nothing here; the caller prints the one-line
// error.
func (r *report) write(w io.Writer, asJSON bool) error {
	switch {
	case r.Hang != nil:
		return writeHang(w, r.Hang, asJSON)
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
		return writeTable(w, r.sc, r.o, r.res)
	}
	return nil
}

func writeHang(w io.Writer, h *sim.HangError, asJSON bool) error {
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

func writeTable(w io.Writer, sc *scenario, o options, res *outcome) error {
	note := ""
	if o.Debug {
		note = ", debug checks on"
	}
	if o.Phantom {
		note += ", " + phantomNote
	}
	shape := fmt.Sprintf("%d queue ids per GPU pair", o.Queues)
	if sc.noSDMA {
		t, _ := o.topology().Normalize()
		shape = fmt.Sprintf("LSA domains of %d, CFT teams of %d, multicast groups of %d", t.LsaSize, t.CftSize, t.CftMcSize)
	}
	fmt.Fprintf(w, "%s: %d ranks, %s %s, %s, timing model %s%s%s\n",
		sc.name, o.Ranks, formatBytes(o.Bytes), sc.bytesMeaning(), shape, res.Model, modelNote(res.Model), note)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\ttime (µs)\tsent (B)\treceived (B)\tGB/s\t")
	for _, r := range res.Ranks {
		fmt.Fprintf(tw, "%d\t%.3f\t%d\t%d\t%.2f\t\n", r.Rank, r.Micros(), r.BytesSent, r.BytesReceived, r.GBps())
	}
	if err := tw.Flush(); err != nil {
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

// phantomNote is what a phantom run's output says about its data.
const phantomNote = "phantom (timing only: no bytes stored, data checks skipped)"

// jsonRank and jsonSummary are the --json form of the table: the same
// numbers, plus the run's parameters, seed and digest.
type jsonRank struct {
	Rank          int     `json:"rank"`
	TimeMicros    float64 `json:"time_us"`
	BytesSent     uint64  `json:"bytes_sent"`
	BytesReceived uint64  `json:"bytes_received"`
	GBps          float64 `json:"bandwidth_gbps"`
}

type jsonSummary struct {
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
	Results     []jsonRank `json:"results"`
	Seed        uint64     `json:"seed"`
	Digest      string     `json:"digest"`
}

func summarize(sc *scenario, o options, res *outcome) *jsonSummary {
	s := &jsonSummary{Scenario: sc.name, Model: res.Model, Ranks: o.Ranks, BytesPerPair: o.Bytes, Queues: o.Queues,
		Debug: o.Debug, Perturb: int(o.Perturb), Strategy: o.Strategy.String(), Injected: res.Injected,
		EndMicros: res.End.Micros(), Seed: res.Seed, Digest: res.Digest}
	if o.Phantom {
		s.Phantom, s.PhantomNote = true, phantomNote
	}
	if !o.Faults.Empty() {
		s.Faults = o.Faults.String()
	}
	for _, r := range res.Ranks {
		s.Results = append(s.Results, jsonRank{r.Rank, r.Micros(), r.BytesSent, r.BytesReceived, r.GBps()})
	}
	return s
}
