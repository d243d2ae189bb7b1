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

// A grid-wide wait across more blocks than run at once hangs, as on a GPU
// whose CUs hold fewer blocks than the grid, and the report says the
// grid's later blocks have not started and what bounds the resident ones
// (cxx/testdata/bounds/wait_last.cpp: 8 blocks of 256 lanes wait for the
// last; EMUD_RESIDENT_LANES=512 holds two). With the default it passes.
func TestGridWideWaitReported(t *testing.T) {
	plainLine(t)
	needCxx(t)
	root := setupCxx(t)
	prog := buildExample(t, filepath.Join(root, "cxx", "testdata", "bounds", "wait_last.cpp"), "-O2", "-Wall", "-Werror")
	out, report, code := runExample(t, prog)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out, report)
	assert.Contains(t, out, "wait_last: 8 blocks, PASS")

	out, report, code = runExample(t, prog, "EMUD_RESIDENT_LANES=512")
	require.Equal(t, 2, code, "stdout:\n%s\nstderr:\n%s", out, report)
	assert.NotContains(t, out, "PASS")
	for _, w := range []string{
		"hang (deadlock)",
		`kernel "waitLast" on GPU 0: 8 waves still running, 6 of its 8 blocks not started (2 resident; the launches share 512 lanes alive at once, 512 alive now (EMUD_RESIDENT_LANES sets it; a GPU's CUs may hold more); a block starts when a resident one retires: a wait of resident blocks on later ones hangs on a GPU too)`,
		"waitLast/gpu0/b1/w3",
		"spin on an atomic load",
	} {
		assert.Contains(t, report, w)
	}
	assert.NotContains(t, report, "waitLast/gpu0/b2/", "block 2 never started")

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
