package main

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

const exitStatusHelp = `Exit status: 0 ok, 1 bad flags or a failed run (engine fault, debug trap),
2 hang (the report says who waits on what), 3 wrong data, 5 data races
(--race: the report names both accesses and the missing ordering).`

func newRunCmd() *cobra.Command {
	f := newScenarioFlags()
	var tracePath string
	cmd := &cobra.Command{
		Use:   "run [SCENARIO]",
		Short: "Run a scenario on an emulated MI355X node (8 GPUs by default) and print per-rank results",
		Long: `Run a scenario on one deterministic emulated node, check every byte it moved,
and print one row per rank: finish time (emulated µs), bytes sent and received,
and bandwidth. The last two lines are the run's seed and trace digest; the same
seed and flags give the same digest. Without a scenario, runs alltoall.

Scenarios:
` + scenario.List() + `
With --trace FILE the run's Chrome trace-event JSON (ui.perfetto.dev,
chrome://tracing, the DevTools performance panel, speedscope) is written to
FILE, whatever the outcome (hang, wrong data, race) once the node was built.

` + exitStatusHelp,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f.o.Traced = tracePath != ""
			sc, err := f.resolve(cmd, args)
			if err != nil {
				return err
			}
			defer scenario.WithMemLimit(uint64(f.budget))()
			return runAndPrint(cmd.OutOrStdout(), sc, f.o, f.asJSON, tracePath)
		},
	}
	f.bind(cmd, true, sim.LevelExact, sim.StrategyRandom)
	cmd.Flags().StringVar(&tracePath, "trace", "", "write the run's Chrome trace-event JSON to this file")
	return cmd
}

// runAndPrint runs sc once, writes its trace when asked, and prints its
// summary or hang report to w. The error it returns carries the exit
// status.
func runAndPrint(w io.Writer, sc *scenario.Scenario, o scenario.Options, asJSON bool, tracePath string) error {
	var writeTrace func() (bool, error)
	if tracePath != "" {
		if sc.Fabric {
			return fmt.Errorf("invalid --trace: %s has no SDMA queues; traces record SDMA scenarios only", sc.Name)
		}
		var err error
		if writeTrace, err = scenario.TraceToFile(&o, tracePath); err != nil {
			return err
		}
	}
	rep := scenario.RunOnce(sc, o)
	if writeTrace != nil {
		if _, err := writeTrace(); err != nil {
			return err
		}
	}
	if err := rep.Write(w, asJSON); err != nil {
		return err
	}
	return rep.ExitErr()
}
