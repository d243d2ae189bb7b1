package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/sim"
)

func newRunCmd() *cobra.Command {
	o := options{Ranks: 8, Bytes: 1 << 20, Queues: 2, Seed: 1}
	size := byteSize(o.Bytes)
	name, asJSON := "alltoall", false
	cmd := &cobra.Command{
		Use:   "run [SCENARIO]",
		Short: "Run a scenario on an emulated MI355X node (8 GPUs by default) and print per-rank results",
		Long: `Run a scenario on one deterministic emulated node, check every byte it moved,
and print one row per rank: finish time (emulated µs), bytes sent and received,
and bandwidth. The last two lines are the run's seed and trace digest; the same
seed and flags give the same digest.

Timing comes from the placeholder model: uncalibrated, right in shape only.

Exit status: 0 ok, 1 bad flags or a failed run, 2 hang (the report says who
waits on what), 3 wrong data.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Bytes = uint64(size)
			if len(args) == 1 {
				if cmd.Flags().Changed("scenario") && args[0] != name {
					return fmt.Errorf("scenario given twice: %q as an argument and %q by --scenario", args[0], name)
				}
				name = args[0]
			}
			sc, err := lookupScenario(name)
			if err != nil {
				return err
			}
			if err := o.validate(); err != nil {
				return err
			}
			if sc.check != nil {
				if err := sc.check(o); err != nil {
					return err
				}
			}
			return runScenario(cmd.OutOrStdout(), sc, o, asJSON)
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "scenario", name, "scenario to run ("+scenarioNames()+")")
	f.IntVar(&o.Ranks, "ranks", o.Ranks, fmt.Sprintf("ranks, one per emulated GPU (%d..%d)", minRanks, maxRanks))
	f.Var(&size, "bytes", "bytes each rank sends to each rank; K, M, G suffixes are powers of 1024")
	f.IntVar(&o.Queues, "queues", o.Queues, fmt.Sprintf("SDMA queue ids per GPU pair (%d..%d); peer p uses id p mod queues", minQueues, maxQueues))
	f.Uint64Var(&o.Seed, "seed", o.Seed, "seed that fixes every scheduling choice of the run")
	f.BoolVar(&asJSON, "json", false, "print the summary, or the hang report, as JSON")
	return cmd
}

// runScenario runs sc and prints its summary or its hang report to w. The
// error it returns carries the exit status.
func runScenario(w io.Writer, sc *scenario, o options, asJSON bool) error {
	res, err := sc.run(o)
	var hang *sim.HangError
	var bad *mismatchError
	switch {
	case errors.As(err, &hang):
		if werr := writeHang(w, hang, asJSON); werr != nil {
			return werr
		}
		return &codedError{exitHang, fmt.Errorf("%s: %w (report on stdout)", sc.name, hang)}
	case errors.As(err, &bad):
		return &codedError{exitMismatch, err}
	case err != nil:
		return fmt.Errorf("%s failed (seed %d): %w", sc.name, o.Seed, err)
	}
	if asJSON {
		return writeJSON(w, sc.name, o, res)
	}
	return writeTable(w, sc.name, o, res)
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

func writeTable(w io.Writer, name string, o options, res *outcome) error {
	fmt.Fprintf(w, "%s: %d ranks, %s per pair, %d queue ids per GPU pair, timing model %s (uncalibrated)\n",
		name, o.Ranks, formatBytes(o.Bytes), o.Queues, res.Model)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "rank\ttime (µs)\tsent (B)\treceived (B)\tGB/s\t")
	for _, r := range res.Ranks {
		fmt.Fprintf(tw, "%d\t%.3f\t%d\t%d\t%.2f\t\n", r.Rank, r.Micros(), r.BytesSent, r.BytesReceived, r.GBps())
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "seed: %d\ndigest: %s\n", res.Seed, res.Digest)
	return err
}

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
	Scenario     string     `json:"scenario"`
	Model        string     `json:"model"`
	Ranks        int        `json:"ranks"`
	BytesPerPair uint64     `json:"bytes_per_pair"`
	Queues       int        `json:"queues"`
	EndMicros    float64    `json:"end_us"`
	Results      []jsonRank `json:"results"`
	Seed         uint64     `json:"seed"`
	Digest       string     `json:"digest"`
}

func writeJSON(w io.Writer, name string, o options, res *outcome) error {
	s := jsonSummary{Scenario: name, Model: res.Model, Ranks: o.Ranks, BytesPerPair: o.Bytes, Queues: o.Queues,
		EndMicros: res.End.Micros(), Seed: res.Seed, Digest: res.Digest}
	for _, r := range res.Ranks {
		s.Results = append(s.Results, jsonRank{r.Rank, r.Micros(), r.BytesSent, r.BytesReceived, r.GBps()})
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}
