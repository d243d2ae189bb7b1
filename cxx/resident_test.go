package cxx

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A grid far beyond what runs at once (cxx/testdata/bounds/wide_grid.cpp:
// 4096 blocks of 256 lanes, 1 Mi lanes, on one GPU) runs to its correct
// output with the memory of its resident blocks: its peak is within 128
// MiB of a grid of 512 blocks, which already fills the run's 65,536
// resident lanes (capi's resident.go; measured 28-48 MiB over it, the Go
// heap's collections landing differently), and under 1 GiB. Before, a launch made every lane at
// once, some 10 KiB each: 256 blocks peaked at 639 MB and 1 Mi lanes
// would have needed some 10 GB.
func TestWideGridBounded(t *testing.T) {
	plainLine(t)
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "cxx", "testdata", "bounds", "wide_grid.cpp"), "-O2", "-Wall", "-Werror")
	start := time.Now()
	few := maxRSS(t, prog, "512")
	mid := time.Now()
	many := maxRSS(t, prog, "4096")
	t.Logf("peak RSS: 512 blocks %d MiB (%v), 4096 blocks %d MiB (%v)", few>>20, mid.Sub(start).Round(time.Millisecond), many>>20, time.Since(mid).Round(time.Millisecond))
	assert.Less(t, many-few, int64(128<<20), fmt.Sprintf("3584 more blocks grew the peak by %d MiB", (many-few)>>20))
	assert.Less(t, many, int64(1<<30), "1 Mi lanes' peak")
}

// A grid-wide wait (every block spins on a flag the last block raises)
// passes whatever EMUD_RESIDENT_LANES says: the budget bounds emud's
// memory, and blocks start past it once every lane alive waits
// (kernel.Pool.Overflow). Before, a budget of 512 lanes made this correct
// program of 8 blocks of 256 a hang report, where a GPU's CUs hold every
// block. A grid past what the CUs hold (257 blocks each asking for a
// CU's whole 160 KiB of LDS: 256 CUs hold 256 of them) is a hang, on a
// GPU too, and the report says how many blocks have not started and how
// many the CUs hold; a bad budget names itself.
func TestGridWideWaitReported(t *testing.T) {
	plainLine(t)
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "cxx", "testdata", "bounds", "wait_last.cpp"), "-O2", "-Wall", "-Werror")
	for _, env := range [][]string{nil, {"EMUD_RESIDENT_LANES=512"}, {"EMUD_RESIDENT_LANES=64"}} {
		out, report, code := runExample(t, prog, env...)
		require.Equal(t, 0, code, "%v\nstdout:\n%s\nstderr:\n%s", env, out, report)
		assert.Contains(t, out, "wait_last: 8 blocks, PASS", "%v", env)
	}

	out, report, code := runExample(t, prog, "257", "64", "163840")
	require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", out, report)
	assert.NotContains(t, out, "PASS")
	for _, w := range []string{
		"hang (deadlock)",
		`1 of its 257 blocks not started (at most 256 blocks resident at once`,
		"spin on an atomic load",
	} {
		assert.Contains(t, report, w)
	}
	assert.NotContains(t, report, "waitLast/gpu0/b256/", "block 256 never started")

	_, report, code = runExample(t, prog, "EMUD_RESIDENT_LANES=lots")
	assert.NotZero(t, code)
	assert.Contains(t, report, `EMUD_RESIDENT_LANES="lots": want a whole number of lanes over 0`)
}

// Blocks started as others retire are not ordered after them: with one
// block at a time (EMUD_RESIDENT_LANES=64) and EMUD_RACE=1, four blocks'
// unsynchronised stores to one word are three data races
// (cxx/testdata/bounds/late_race.cpp), as with every block at once. A
// block forked from the wave that retired to make room for it, the
// running actor then, was ordered after it and the races went unseen.
func TestLateBlocksRace(t *testing.T) {
	plainLine(t)
	needCxx(t)
	root := setupCxx(t)
	src := filepath.Join(root, "cxx", "testdata", "bounds", "late_race.cpp")
	prog := buildExample(t, src, "-O2", "-Wall", "-Werror")
	for _, env := range [][]string{{"EMUD_RACE=1", "EMUD_RESIDENT_LANES=64"}, {"EMUD_RACE=1"}} {
		out, report, code := runExample(t, prog, env...)
		require.Equal(t, 5, code, "%v\nstdout:\n%s\nstderr:\n%s", env, out, report)
		assert.Contains(t, report, "emud: seed 1: 3 data race(s)", env)
		assert.Contains(t, report, `by kernel "lastWriter" GPU 0 block 3 wave 0 lane 0 (`+src+`:13`, env)
	}
}

// A grid past the lane budget runs the same with its ranks as threads or
// as forked processes: one digest, exact and perturbed, at budgets that
// hold a block a GPU and three (cxx/testdata/procs/grid_budget.cpp: 4
// ranks, 12 blocks of 64 lanes each), and at the default, which holds
// every block.
func TestGridBudgetForkDigest(t *testing.T) {
	needCxx(t)
	prog := buildExample(t, "testdata/procs/grid_budget.cpp", "-O2", "-Wall", "-Werror")
	for _, env := range [][]string{{"EMUD_RESIDENT_LANES=64"}, {"EMUD_RESIDENT_LANES=192", "EMUD_SEED=3", "EMUD_STRATEGY=perturb"}, {"EMUD_SEED=2"}} {
		env := append([]string{"EMUD_SUMMARY=1"}, env...)
		var digests []string
		for _, mode := range []string{"threads", "fork"} {
			args := env
			if mode == "fork" {
				args = append(append([]string{}, env...), "fork")
			}
			out, report, code := runExample(t, prog, args...)
			require.Equal(t, 0, code, "%v %s\nstdout:\n%s\nstderr:\n%s", env, mode, out, report)
			assert.Contains(t, out, "grid_budget: 4/4 ranks passed", "%v %s", env, mode)
			digests = append(digests, digestOf(t, report))
		}
		assert.Equal(t, digests[0], digests[1], "%v: processes give another digest than threads", env)
	}
}
