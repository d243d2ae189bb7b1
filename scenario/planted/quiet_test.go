package planted_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/racebuild"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// quietShapes are the correct shapes every check must stay quiet on (issue
// 37): each is the fixed twin of a corpus bug, the same program with the
// fix. A check that flags any of them is a false alarm.
var quietShapes = []struct{ bug, shape string }{
	{"reset-lane-unordered", "reset between epochs by a lane store, ordered after the last wait and before the next signal"},
	{"reset-host-unordered", "reset between epochs by a host store"},
	{"reset-memset-unordered", "reset between epochs by an asynchronous memset, synchronised"},
	{"zero-after-signal", "reset by the host before the kernels"},
	{"stale-epoch-across-calls", "a running total across calls and kernels"},
	{"aliased-slot", "per-CTA slots"},
	{"shared-slot-across-kernels", "a slot per kernel"},
	{"async-memset-before-put", "an async memset waited for before the peer's put"},
	{"no-quiet-across-kernels", "barrier-separated reuse: quiet before the next kernel reuses the buffer"},
	{"destroy-before-quiet", "destroy after quiet"},
}

// quietSeeds is the seeds per level, strategy and mode: the 50 in a
// plain build, fewer under Go's race detector (each run's detector history
// stays in the test binary's memory; any seed shows a Go data race).
func quietSeeds() uint64 {
	if racebuild.Enabled || testing.Short() {
		return 3
	}
	return 50
}

// The correct shapes give no report on 50 seeds × levels 0-2 × {seeded
// ties, PCT}, with the race detector and with MORI_CCO_SDMA_DEBUG's checks.
func TestQuietShapesStayQuiet(t *testing.T) {
	seeds := quietSeeds()
	for _, q := range quietShapes {
		t.Run(q.bug, func(t *testing.T) {
			b, err := scenario.Lookup(q.bug)
			require.NoError(t, err)
			twin, err := scenario.Twin(b)
			require.NoError(t, err)
			for _, sched := range []sim.Strategy{sim.StrategyRandom, sim.StrategyPCT} {
				for lvl := sim.LevelExact; lvl <= sim.MaxLevel; lvl++ {
					for _, mode := range []string{"race", "debug"} {
						for seed := uint64(1); seed <= seeds; seed++ {
							o := scenario.HuntOptions(b, scenario.Strategy{Perturb: lvl, Schedule: sched}, seed)
							o.Race, o.Debug = mode == "race", mode == "debug"
							rep := scenario.RunOnce(twin, o)
							if !assert.Equal(t, scenario.StatusOK, rep.Status, "%s (%s), %v level %d, %s, seed %d: %v", twin.Name, q.shape, sched, lvl, mode, seed, rep.Err) {
								return
							}
						}
					}
				}
			}
		})
	}
}

// Each quiet shape's bug is still found with the detector on.
func TestQuietShapesBugsFound(t *testing.T) {
	for _, q := range quietShapes {
		t.Run(q.bug, func(t *testing.T) {
			b, err := scenario.Lookup(q.bug)
			require.NoError(t, err)
			found := false
			for seed := uint64(1); seed <= 20 && !found; seed++ {
				for _, lvl := range []sim.Level{sim.LevelExact, 1} {
					o := scenario.HuntOptions(b, scenario.Strategy{Perturb: lvl, Schedule: sim.StrategyRandom, Race: true}, seed)
					if rep := scenario.RunOnce(b, o); rep.Status != scenario.StatusOK {
						found = true
						break
					}
				}
			}
			assert.True(t, found, fmt.Sprintf("%s: no detection in 20 seeds at levels 0-1", q.bug))
		})
	}
}
