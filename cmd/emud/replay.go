package main

import (
	"fmt"

	"github.com/emud-dev/emud/scenario"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/sim"
)

func newReplayCmd() *cobra.Command {
	f := newScenarioFlags()
	var tracePath, wantDigest string
	cmd := &cobra.Command{
		Use:   "replay [SCENARIO] --seed S",
		Short: "Rerun one seed of a scenario and write its trace",
		Long:  replayLong,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.o.Traced = true
			sc, err := f.resolve(cmd, args)
			if err != nil {
				return err
			}
			defer scenario.WithMemLimit(uint64(f.budget))()
			if tracePath == "" {
				tracePath = fmt.Sprintf("%s-seed%d.trace.json", sc.Name, f.o.Seed)
			}
			writeTrace := func() (bool, error) { return false, nil }
			if sc.Fabric {
				if cmd.Flags().Changed("trace") {
					return fmt.Errorf("invalid --trace: %s has no SDMA queues; traces record SDMA scenarios only", sc.Name)
				}
				tracePath = "none (" + sc.Name + " has no SDMA queues)"
			} else if writeTrace, err = scenario.TraceToFile(&f.o, tracePath); err != nil {
				return err
			}
			rep := scenario.RunOnce(sc, f.o)
			if wrote, err := writeTrace(); err != nil {
				return err
			} else if wrote || (sc.Fabric && rep.Digest() != "") {
				fmt.Fprintf(cmd.ErrOrStderr(), "trace: %s\n", tracePath)
			}
			if err := rep.Write(cmd.OutOrStdout(), f.asJSON); err != nil {
				return err
			}
			if got := rep.Digest(); wantDigest != "" && got != wantDigest {
				return fmt.Errorf("replay %s seed %d: digest %s differs from --expect-digest %s: the run did not reproduce (other flags, or another emud version?)",
					sc.Name, f.o.Seed, got, wantDigest)
			}
			return rep.ExitErr()
		},
	}
	f.bind(cmd, true, sim.LevelExact, sim.StrategyRandom)
	fs := cmd.Flags()
	fs.StringVar(&tracePath, "trace", "", "where to write the trace (default SCENARIO-seedS.trace.json)")
	fs.StringVar(&wantDigest, "expect-digest", "", "fail unless the run's digest is this one")
	_ = cmd.MarkFlagRequired("seed")
	return cmd
}

// replayLong is the command's help.
var replayLong = `Rerun one seed of a scenario, as "emud explore" prints it, and write the run's
Chrome trace-event JSON (open it in ui.perfetto.dev, chrome://tracing, the
DevTools performance panel or speedscope).
The output is run's: the table or the hang report, ending with the seed and
the digest, which is the original run's: the same seed and flags give the same
run, bit for bit. --expect-digest makes that a check.

The trace goes to --trace, by default SCENARIO-seedS.trace.json.

` + exitStatusHelp + ` A digest other than --expect-digest exits 1.`
