package main

import (
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/emud-dev/emud/bench"
	"github.com/emud-dev/emud/scenario"
)

func newBenchCmd() *cobra.Command {
	var (
		quick  bool
		jobs   int
		only   string
		budget = byteSize(scenario.DefaultMemBudget())
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure the emulator's own speed and the cost of the scale runs, in one table",
		Long:  benchLong,
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if jobs < 1 {
				return fmt.Errorf("invalid --jobs %d: need at least 1", jobs)
			}
			sz := bench.Full()
			if quick {
				sz = bench.Quick()
			}
			if only != "" {
				var err error
				if sz, err = sz.Only(only); err != nil {
					return err
				}
			}
			return bench.Run(cmd.OutOrStdout(), cmd.ErrOrStderr(), sz, jobs, uint64(budget))
		},
	}
	cmd.Flags().Var(&budget, "mem-budget", "memory a scale run may take by its estimate; one over it is skipped, and the table says so (default a quarter of the memory this process may use: physical, or its cgroup's limit)")
	cmd.Flags().BoolVar(&quick, "quick", false, "small sizes: a smoke test of the bench, not a measurement")
	cmd.Flags().IntVar(&jobs, "jobs", runtime.GOMAXPROCS(0), "jobs for the explore row with N jobs")
	cmd.Flags().StringVar(&only, "only", "", "run one group of rows: "+strings.Join(bench.Groups, ", "))
	return cmd
}

// benchLong is the command's help.
const benchLong = `Measure emud itself on this machine, in wall-clock time, and print one table:

  engine packets/s    64 B COPY packets rung on one queue, fetched, copied, retired
  8 MiB COPY          one engine COPY of 8 MiB against Go's copy() of the same
                      (both sources written), in turns, and the ratio of their
                      rates; the same COPY on phantom regions: the engine's own
                      work per COPY
  puts/s              a wave of 64 lanes posting 64 B SameQueue puts (issue, ring,
                      engine, quiet)
  fabric ops/s        the puts of a CFT all-to-all (setup, barrier and check
                      included), and a 32-lane wave posting 64 B puts (8 runs,
                      with CPU time, bytes and allocations per put)
  C++ vs Go           examples/cxx/alltoall_put.cpp built by emud c++, a whole
                      process per run, against the Go alltoall of the same
                      shape per seed in one process and per emud run process;
                      per seed under explore, examples/cxx/bench/
                      alltoall_sum.cpp (the Go seed's kind of check) and
                      alltoall_put.cpp in a warm seed server and as a
                      process per seed against the Go seed, with the warm
                      seed's parts (server, threads and node, emulation,
                      host loops);
                      per round, examples/cxx/bench/alltoall_rounds.cpp (the
                      same all-to-all repeated in one kernel) against the
                      same kernel in Go, which must end at the same emulated
                      time (wall and CPU time; needs the source tree and
                      g++/clang++; not with --quick); a C++ program
                      posting 4 M packets; and the 8-rank all-to-all as 8
                      forked processes against 8 threads
                      (examples/cxx/procs, the same emulated end time)
  explore seeds/s     alltoall (4 ranks, 4 KiB) at --jobs 1 and --jobs N, and
                      at its defaults (8 ranks, 1 MiB); each with the CPU time,
                      allocation and collections per seed that bound its
                      parallel efficiency
  host ceiling        an integer loop, a copy in cache (1 MiB) and one in
                      memory (64 MiB), alone and GOMAXPROCS at once: the
                      machine's own efficiency, the scaling rows' ceiling
  explore scaling     both explore shapes at 1, 2, 4 ... GOMAXPROCS jobs, the
                      same seeds per job at each: seeds/s and the parallel
                      efficiency against 1 job, with the per-seed figures;
                      then as GOMAXPROCS processes of explore --shard k/N
  scale runs          wall time and peak RSS of the 1024-rank CFT all-reduce
                      (64 MiB per rank) and all-to-all, phantom, of 64 MiB
                      all-reduces at 72 ranks, and of a 16-node × 8-GPU GIN
                      all-gather (phantom), each in a child process

Numbers depend on the machine and on what else runs on it. --quick runs
small sizes, for a smoke test; --only GROUP runs one group of rows (engine,
copy, cco, fabric, explore, scaling, cxx, scale), e.g. --only fabric to
measure the fabric's rates again.`
