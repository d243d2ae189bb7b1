package planted_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/golden"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// classes returns the lifecycle classes of a run's race reports.
func classes(err error) map[string]bool {
	out := map[string]bool{}
	var re *race.Error
	if errors.As(err, &re) {
		for _, r := range re.Reports {
			if r.Class != "" {
				out[r.Class] = true
			}
		}
	}
	return out
}

// lifecycleCases are the bugs each signal-lifecycle check is pinned on,
// with words its report must have.
var lifecycleCases = []struct {
	bug, class, words string
	big               bool // a 16-rank scenario: one seed at level 0 unless the sweep asks for more
}{
	{"ge-u32-wrap", race.ClassWrap, "a wrap past 2^32", false},
	{"u64-counter-wrap", race.ClassWrap, "a wrap past 2^64", false},
	{"zero-after-signal", race.ClassStoreOverSignal, "erases the signal", false},
	{"stale-epoch-across-calls", race.ClassStaleEpoch, `released the earlier epoch's waitSignal by kernel "recv-call1"`, false},
	{"shared-slot-across-kernels", race.ClassSharedSlot, "two producers the waits cannot tell apart (two kernels)", false},
	{"bcast-per-queue", race.ClassSharedSlot, "two producers the waits cannot tell apart (two queues, posted by one poster)", false},
	{"aliased-slot", race.ClassSharedSlot, "two producers the waits cannot tell apart (two thread blocks)", false},
	{"gin-shared-signal", race.ClassSharedSlot, "two producers the waits cannot tell apart", true},
	{"gin-bcast-block-barrier", race.ClassBaselineRead, "a baseline read racing a signal: the ncclGin::waitSignal", false},
}

// Each signal-lifecycle check fires on its bug under the detector on some
// seed of every perturbation level, with words naming the case, and never
// on the fixed twin, which has no race report at all (the note's sweep:
// -planted.sound-seeds 50).
func TestLifecycleChecks(t *testing.T) {
	for _, tc := range lifecycleCases {
		t.Run(tc.bug, func(t *testing.T) {
			b, err := scenario.Lookup(tc.bug)
			require.NoError(t, err)
			seeds, maxLvl := uint64(*soundSeeds), sim.MaxLevel
			if tc.big && seeds <= 3 {
				seeds, maxLvl = 1, sim.LevelExact // 20 s under -race otherwise
			}
			for lvl := sim.LevelExact; lvl <= maxLvl; lvl++ {
				found := false
				for seed := uint64(1); seed <= seeds; seed++ {
					err := exec(t, b, seed, lvl, true, false).Err
					if classes(err)[tc.class] {
						found = true
						var re *race.Error
						require.True(t, errors.As(err, &re))
						assert.Contains(t, re.Text(), tc.words)
					}
					err = exec(t, b, seed, lvl, true, true).Err
					var re *race.Error
					assert.False(t, errors.As(err, &re), "fixed twin, level %d seed %d: %v", lvl, seed, err)
				}
				assert.True(t, found, "level %d: no %s report", lvl, tc.class)
			}
		})
	}
}

// Debug mode (MORI_CCO_SDMA_DEBUG) runs the lifecycle checks without the
// race detector being asked for: the bug's report has its class and no
// plain data race, and the twin runs clean.
func TestLifecycleChecksInDebug(t *testing.T) {
	for _, tc := range lifecycleCases[1:5] {
		t.Run(tc.bug, func(t *testing.T) {
			b, err := scenario.Lookup(tc.bug)
			require.NoError(t, err)
			run := func(fixed bool) error {
				r, err := scenario.Target(b, fixed)
				require.NoError(t, err)
				o := scenario.Defaults(b)
				o.Seed, o.Debug = 1, true
				return scenario.RunOnce(r, o).Err
			}
			var re *race.Error
			require.True(t, errors.As(run(false), &re), "the bug in debug mode")
			for _, r := range re.Reports {
				assert.NotEmpty(t, r.Class, "debug mode keeps only lifecycle findings: %v", r)
			}
			assert.True(t, classes(re)[tc.class])
			assert.NoError(t, run(true), "the twin in debug mode")
		})
	}
}

// The whole report of each lifecycle case, at the first seed (level 0)
// whose run has the case's class, pinned (go test -run
// TestLifecycleReportsGolden -update rewrites them when a change is meant).
func TestLifecycleReportsGolden(t *testing.T) {
	for _, tc := range lifecycleCases[:5] {
		t.Run(tc.bug, func(t *testing.T) {
			b, err := scenario.Lookup(tc.bug)
			require.NoError(t, err)
			for seed := uint64(1); seed <= 10; seed++ {
				err := exec(t, b, seed, sim.LevelExact, true, false).Err
				if !classes(err)[tc.class] {
					continue
				}
				var re *race.Error
				require.True(t, errors.As(err, &re))
				golden.Check(t, "lifecycle-"+tc.bug+".txt", fmt.Sprintf("%s, seed %d, perturbation level 0, race detector on:\n\n%s", tc.bug, seed, re.Text()))
				return
			}
			t.Fatalf("no %s report on seeds 1..10", tc.class)
		})
	}
}
