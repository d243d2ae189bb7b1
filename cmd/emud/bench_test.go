package main

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/emud-dev/emud/scenario"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The bench prints one table with every row it promises, each with a
// number; the scale row ran in a child process (its peak RSS is known).
func TestBenchQuick(t *testing.T) {
	out, errOut, status := execute(t, "bench", "--quick", "--jobs", "2")
	require.Equal(t, scenario.ExitOK, status, errOut)
	ls := lines(out)
	require.GreaterOrEqual(t, len(ls), 10, out)
	assert.Contains(t, ls[0], "emud bench:")
	assert.Regexp(t, `^benchmark\s+result\s+detail$`, ls[1])
	for _, want := range []string{
		`engine: 64 B COPY packets on one queue\s+[\d.]+[kM]? packets/s`,
		`engine: 8 MiB COPY\s+[\d.]+ GB/s`,
		`Go copy\(\) of 8 MiB\s+[\d.]+ GB/s`,
		`engine 8 MiB COPY vs Go copy\(\)\s+[\d.]+×\s+median of \d+ turns of the rows above`,
		`engine: 8 MiB COPY, phantom \(no bytes\)\s+[\d.]+[nµm]?s a COPY\s+the engine's own work per COPY: [\d.]+% of a Go copy\(\)`,
		`cco: 64-lane wave, 64 B SameQueue puts\s+[\d.]+[kM]? puts/s`,
		`fabric: puts of a CFT all-to-all\s+[\d.]+[kM]? ops/s`,
		`--jobs 1\s+[\d.]+[kM]? seeds/s`,
		`--jobs 2\s+[\d.]+[kM]? seeds/s`,
		`cft-allreduce, 64 ranks × 1 MiB, phantom\s+[\d.]+ s, [\d.]+(KiB|MiB|GiB)\s+wall, peak RSS: emud run cft-allreduce .* µs emulated\n`,
		`cft-allreduce, 8 ranks × 1 MiB, real bytes\s+[\d.]+ s, [\d.]+(KiB|MiB|GiB)\s+wall, peak RSS: emud run cft-allreduce .* µs emulated; peak RSS [\d.]+× the 16.0MiB of emulated memory \(before: `,
	} {
		assert.Regexp(t, want, out)
	}
	assert.NotContains(t, out, "unknown")
	assert.True(t, strings.Contains(errOut, "bench: "), "progress on stderr")
}

// The explore rows show per seed the CPU time, bytes and allocations and
// the collector's share of the CPU that bound explore's parallel
// efficiency, with the figures before issue 27's work.
func TestBenchExploreRows(t *testing.T) {
	out, errOut, status := execute(t, "bench", "--quick", "--only", "explore", "--jobs", "2")
	require.Equal(t, scenario.ExitOK, status, errOut)
	ls := lines(out)
	require.Len(t, ls, 5, out)
	per := `per seed [\d.]+[µm]?s CPU, [\d.]+(B|KiB|MiB) and \d+ allocations; (0 GCs|\d+ GCs, GC \d+% of CPU)`
	assert.Regexp(t, `explore alltoall \(4 ranks, 4 KiB\), --jobs 1\s+[\d.]+[kM]? seeds/s\s+8 seeds in .*; `+per+`$`, ls[2])
	assert.Regexp(t, `explore alltoall \(4 ranks, 4 KiB\), --jobs 2\s+[\d.]+[kM]? seeds/s\s+8 seeds in .*; `+per+` \(before: [^)]+ allocations per seed, [^)]+\)$`, ls[3])
	assert.Regexp(t, `explore alltoall \(8 ranks, 1 MiB\), --jobs 1\s+[\d.]+[kM]? seeds/s\s+2 seeds in .*; `+per+` \(before: issue 27 0.18 s a run; [^)]+\)$`, ls[4])
}

// The scaling rows first give the machine's own ceiling (three loops alone
// and GOMAXPROCS at once), then run both explore shapes at 1, 2, 4 ...
// GOMAXPROCS jobs, each with its seeds/s, its efficiency against 1 job and
// the per-seed figures, and then as GOMAXPROCS processes of explore --shard.
func TestBenchScalingRows(t *testing.T) {
	out, errOut, status := execute(t, "bench", "--quick", "--only", "scaling")
	require.Equal(t, scenario.ExitOK, status, errOut)
	var jobs []int
	for j := 1; j < runtime.GOMAXPROCS(0); j *= 2 {
		jobs = append(jobs, j)
	}
	jobs = append(jobs, runtime.GOMAXPROCS(0))
	procs := runtime.GOMAXPROCS(0)
	ls := lines(out)
	hosts := []string{`integer loop \(no memory\)`, `copy of 1 MiB \(cache\)`, `copy of 4 MiB \(memory\)`} // --quick's sizes
	rows := len(jobs) + 1                                                                                  // and the processes' row
	require.Len(t, ls, 2+len(hosts)+2*rows, out)
	for i, h := range hosts {
		assert.Regexp(t, fmt.Sprintf(`^host ceiling, %s, %d goroutines\s+\d+%% efficiency\s+[\d.]+[µm]?s alone, [\d.]+[µm]?s each of %d at once: `, h, procs, procs), ls[2+i])
	}
	ls = append(ls[:2:2], ls[2+len(hosts):]...)
	per := `per seed [\d.]+[µm]?s CPU, [\d.]+(B|KiB|MiB) and \d+ allocations; (0 GCs|\d+ GCs, GC \d+% of CPU)`
	for i, shape := range []string{`alltoall \(4 ranks, 4 KiB\)`, `alltoall \(8 ranks, 1 MiB\)`} {
		for k, j := range jobs {
			assert.Regexp(t, fmt.Sprintf(`^explore scaling, %s, --jobs %d\s+[\d.]+[kM]? seeds/s, \d+%% efficiency\s+\d+ seeds in .*; %s$`, shape, j, per), ls[2+i*rows+k])
		}
		assert.Regexp(t, fmt.Sprintf(`^explore scaling, %s, %d processes × --shard k/%d\s+[\d.]+[kM]? seeds/s, \d+%% efficiency\s+\d+ seeds in .*; per seed [\d.]+[µm]?s CPU \(process start included\); peak RSS [\d.]+(B|KiB|MiB|GiB) a process$`, shape, procs, procs), ls[2+i*rows+len(jobs)])
	}
}

// A scale run over --mem-budget is skipped, and the table says why.
func TestBenchSkipsRunsOverBudget(t *testing.T) {
	out, errOut, status := execute(t, "bench", "--quick", "--mem-budget", "10M")
	require.Equal(t, scenario.ExitOK, status, errOut)
	assert.Regexp(t, `cft-allreduce, 64 ranks × 1 MiB, phantom\s+skipped\s+needs an estimated [\d.]+MiB, over --mem-budget 10.0MiB`, out)
}

// --only runs one group of rows: --only fabric prints the fabric's two
// rows (the wave's with its CPU rate, bytes and allocations per put and
// the figure before issue 27's work) and no other; an unknown group is an
// error naming the groups.
func TestBenchOnly(t *testing.T) {
	out, errOut, status := execute(t, "bench", "--quick", "--only", "fabric")
	require.Equal(t, scenario.ExitOK, status, errOut)
	ls := lines(out)
	require.Len(t, ls, 4, out)
	assert.Regexp(t, `fabric: puts of a CFT all-to-all\s+[\d.]+[kM]? ops/s`, ls[2])
	assert.Regexp(t, `fabric: 32-lane wave, 64 B puts\s+[\d.]+[kM]? ops/s\s+1 × 256 puts in .*; [\d.]+[kM]? ops per CPU second, \d+ B and [\d.]+ allocations per put \(before: `, ls[3])

	_, errOut, status = execute(t, "bench", "--quick", "--only", "fabrik")
	assert.NotEqual(t, scenario.ExitOK, status)
	assert.Contains(t, errOut, `no group of rows "fabrik" (the groups: engine, copy, cco, fabric, explore, scaling, cxx, scale)`)
}
