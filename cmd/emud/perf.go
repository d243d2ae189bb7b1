package main

import (
	"fmt"

	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/scenario/shard"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/sim"
)

func newPerfCmd() *cobra.Command { return newPerfCmdFor(nil) }

// newPerfCmdFor is perf; with merged set (emud merge) it runs no size but
// prints the shards' lines as one sweep prints them.
func newPerfCmdFor(merged *shard.Merged) *cobra.Command {
	f := newScenarioFlags()
	var (
		minB, maxB, stepB  byteSize
		factor             float64
		iters, warmup      int
		plotPath           string
		shardArg, shardOut string
	)
	minB, maxB = 1<<10, 64<<20
	cmd := &cobra.Command{
		Use:   "perf [SCENARIO]",
		Short: "Sweep a scenario over message sizes and print nccl-tests' columns (size, count, type, redop, time, algbw, busbw, #wrong)",
		Long:  perfLong,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := onlyWith(cmd, "shard", "without it the table goes to stdout", "shard-out"); err != nil {
				return err
			}
			if err := notWith(cmd, "shard", "a shard writes its record of some sizes, not a picture; draw it with perf --plot over the whole sweep", "plot"); err != nil {
				return err
			}
			sc, err := f.resolve(cmd, args)
			if err != nil {
				return err
			}
			if err := checkSweep(minB, maxB, stepB, factor, iters, warmup); err != nil {
				return err
			}
			if plotPath != "" {
				if _, err := scenario.PerfPlotFormat(plotPath); err != nil {
					return err
				}
			}
			sizes := scenario.PerfSizes(uint64(minB), uint64(maxB), uint64(stepB), factor)
			defer scenario.WithMemLimit(uint64(f.budget))()
			if shardArg != "" {
				sh, err := shard.Parse(shardArg)
				if err != nil {
					return err
				}
				rec := shardRecord(cmd, "perf", sc.Name, 0, len(sizes), sh)
				rec.RunPerf(sc, f.o, sizes, iters, uint64(f.budget))
				return rec.Write(cmd.OutOrStdout(), shardOut)
			}
			var rows []scenario.PerfRow
			var status error
			if merged != nil {
				if rows, err = merged.PerfTable(cmd.OutOrStdout(), sc, f.o, iters, len(sizes)); err != nil {
					return err
				}
			} else {
				rows, status = scenario.PerfSweep(cmd.OutOrStdout(), sc, f.o, sizes, iters, uint64(f.budget))
			}
			if plotPath != "" {
				if err := scenario.WritePerfPlotFile(plotPath, sc.Name, f.o, rows); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "plot: %s\n", plotPath)
			}
			if w := merged.PerfWorstOf(); w != nil {
				return scenario.PerfExitFrom(sc, rows, w.Code, w.Text)
			}
			return scenario.PerfExitErr(sc, rows, status)
		},
	}
	f.bind(cmd, true, sim.LevelExact, sim.StrategyRandom)
	fs := cmd.Flags()
	fs.VarP(&minB, "minbytes", "b", "smallest size (nccl-tests -b); K, M, G suffixes")
	fs.VarP(&maxB, "maxbytes", "e", "largest size (nccl-tests -e)")
	fs.Float64VarP(&factor, "stepfactor", "f", 2, "multiply the size by this much per step (nccl-tests -f)")
	fs.VarP(&stepB, "stepbytes", "i", "add this many bytes per step instead of multiplying (nccl-tests -i)")
	fs.IntVarP(&iters, "iters", "n", 1, "runs per size, on seeds --seed, --seed+1, ...; time is their mean (nccl-tests -n)")
	fs.IntVarP(&warmup, "warmup_iters", "w", 0, "accepted for nccl-tests command lines; an emulated run needs no warm-up")
	fs.StringVar(&plotPath, "plot", "", "write the busbw curve to this file (.svg or .png)")
	fs.StringVar(&shardArg, "shard", "", "run shard K/N of the sizes (K from 0; contiguous ranges) and write its JSON record for emud merge instead of the table")
	fs.StringVar(&shardOut, "shard-out", "-", "with --shard: the file the record goes to (- = stdout)")
	return cmd
}

// checkSweep checks perf's sweep flags, naming the one at fault.
func checkSweep(minB, maxB, stepB byteSize, factor float64, iters, warmup int) error {
	switch {
	case minB < 1 || maxB < minB:
		return fmt.Errorf("invalid -b %s / -e %s: need 1 ≤ -b ≤ -e", scenario.FormatBytes(uint64(minB)), scenario.FormatBytes(uint64(maxB)))
	case stepB == 0 && !(factor > 1):
		return fmt.Errorf("invalid -f %v: the step factor must be above 1 (or give -i)", factor)
	case iters < 1 || iters > 1000:
		return fmt.Errorf("invalid -n %d: need 1..1000", iters)
	case warmup < 0:
		return fmt.Errorf("invalid -w %d: need ≥ 0", warmup)
	}
	return nil
}

// perfLong is the command's help.
var perfLong = `Run a scenario at every size from -b to -e (multiplying by -f, or adding -i)
and print one line per size in nccl-tests' format: size (B), count (elements),
type, redop, time (µs), algbw and busbw (GB/s), #wrong. Sizes are nccl-tests'
per-rank buffers: for an all-to-all or all-gather, ranks × the bytes per pair
or chunk; for an all-reduce, the buffer every rank reduces; for a broadcast or
relay, the payload. Each size is rounded down to what the scenario can move,
and the size printed is the one run.

time is the emulated time from launch until the last rank is done, under the
calibrated model (mi355x, or the CFT fabric's own model for cft-*) at timing
perturbation level 0: the numbers are the model's, exactly, on every run.
algbw = size / time; busbw = algbw × the collective's factor (nccl-tests
doc/PERFORMANCE.md: all-reduce 2(n−1)/n, all-gather and all-to-all (n−1)/n,
broadcast 1). #wrong counts the blocks and signals the data check found
wrong (every byte is checked unless --phantom). -n averages over that many
seeds (from --seed); -w is accepted for nccl-tests' command lines and ignored
(an emulated run has nothing to warm up). A size that hangs or fails is
reported on its line and the sweep goes on; the exit status is then that of
the worst failure.

--plot FILE writes the busbw curve (.svg or .png).

--shard K/N runs only shard K of the sizes (N contiguous ranges, K from 0)
and writes its JSON record (--shard-out FILE, default stdout); emud merge
puts the records back together into this very table and exit status.

` + exitStatusHelp
