package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/emud-dev/emud/scenario"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/sim"
)

func newReplayCmd() *cobra.Command {
	f := newScenarioFlags()
	var tracePath, wantDigest string
	cmd := &cobra.Command{
		Use:   "replay [SCENARIO] --seed S | replay --seed S [flags] -- PROGRAM [ARGS...]",
		Short: "Rerun one seed of a scenario or a C++ program and write its trace",
		Long:  replayLong,
		Args:  scenarioOrProgram,
		RunE: func(cmd *cobra.Command, args []string) error {
			if at := cmd.ArgsLenAtDash(); at >= 0 {
				return replayProgram(cmd, f, args[at:], tracePath, wantDigest)
			}
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

After --, a C++ program built with emud c++ is rerun on --seed, with the
flags' meaning in its environment as emud explore passes it; its output
passes through, its trace (EMUD_TRACE) goes to --trace, by default
PROGRAM-seedS.trace.json, and its exit status is the program's.

` + exitStatusHelp + ` A digest other than --expect-digest exits 1.`

// replayProgram reruns seed --seed of a C++ program, as explore printed
// it: its output passes through, its trace goes to --trace (default
// PROGRAM-seedS.trace.json, as EMUD_TRACE writes it), and its exit status
// is the program's. --expect-digest checks the digest of its summary.
func replayProgram(cmd *cobra.Command, f *scenarioFlags, argv []string, tracePath, wantDigest string) error {
	set, err := programFlags(f)
	if err != nil {
		return err
	}
	if tracePath == "" {
		tracePath = fmt.Sprintf("%s-seed%d.trace.json", filepath.Base(argv[0]), f.o.Seed)
	}
	set = append(set, fmt.Sprintf("EMUD_SEED=%d", f.o.Seed), "EMUD_TRACE="+tracePath)
	var errb bytes.Buffer
	code, err := runProgram(argv, programEnv(set), cmd.OutOrStdout(), io.MultiWriter(cmd.ErrOrStderr(), &errb))
	if err != nil {
		return err
	}
	if _, err := os.Stat(tracePath); err == nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "trace: %s\n", tracePath)
	}
	name := strings.Join(argv, " ")
	got := programRun{stderr: errb.String()}.digest()
	if wantDigest != "" && got != wantDigest {
		return fmt.Errorf("replay %s seed %d: digest %q differs from --expect-digest %s: the run did not reproduce (other flags, or another build?)", name, f.o.Seed, got, wantDigest)
	}
	if code != 0 {
		return &scenario.ExitError{Code: code, Err: fmt.Errorf("%s: seed %d exited %d", name, f.o.Seed, code)}
	}
	return nil
}
