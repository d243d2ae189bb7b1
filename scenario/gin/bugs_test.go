package gin_test

import (
	"errors"
	"os"
	"strconv"
	"testing"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twinSeeds is how many seeds the twins run at each perturbation level:
// EMUD_GIN_TWIN_SEEDS (the full sweep: 50), else a few for CI.
func twinSeeds(t *testing.T) uint64 {
	if v := os.Getenv("EMUD_GIN_TWIN_SEEDS"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err)
		return n
	}
	if testing.Short() {
		return 2
	}
	return 5
}

// Each planted barrier or init bug is found by the hunt's strategies
// within a few seeds with a cause that names the broken rule (a hang
// report, or wrong data and the race detector's report); its fixed twin
// is clean at perturbation 0, 1 and 2, with the detector on at level 1,
// and under PCT.
func TestPlantedGinBarrierAndInitBugs(t *testing.T) {
	for _, tc := range []struct {
		bug   string
		cause string // in the hang report, or in the race report
		hang  bool
	}{
		{"gin-bcast-block-barrier", "the baseline was read too late", true},
		{"gin-barrier-alias", "missing edge", false},
		{"gin-init-unreachable", "is unreachable from node 1 NIC 1 (rank 3) (a rail-only network", true},
		{"gin-hier-no-barrier", "missing edge", false},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			bug, err := scenario.Lookup(tc.bug)
			require.NoError(t, err)
			st, err := scenario.LookupStrategy("pct")
			require.NoError(t, err)
			k := scenario.PCTStepsFor(bug, st, 1, false)
			found := uint64(0)
			for seed := uint64(1); seed <= 20 && found == 0; seed++ {
				o := scenario.HuntOptions(bug, st, seed)
				o.PCT = sim.PCT{Steps: k}
				_, err := bug.Run(o)
				if err == nil {
					continue
				}
				found = seed
				if tc.hang {
					var he *sim.HangError
					require.True(t, errors.As(err, &he), "seed %d: %v", seed, err)
					assert.Contains(t, err.Error(), tc.cause)
				} else {
					var me *scenario.MismatchError
					require.True(t, errors.As(err, &me), "seed %d: %v", seed, err)
				}
			}
			require.NotZero(t, found, "pct finds %s within 20 seeds", tc.bug)
			if !tc.hang {
				reported := false
				for seed := uint64(1); seed <= 20 && !reported; seed++ {
					o := scenario.HuntOptions(bug, st, seed)
					o.PCT, o.Race = sim.PCT{Steps: k}, true
					_, err := bug.Run(o)
					var re *race.Error
					if errors.As(err, &re) {
						reported = true
						// Anywhere in the reports: the first is the cause
						// (gin-barrier-alias's aliased slot), the data race
						// it lets through follows.
						assert.Contains(t, re.Text(), tc.cause)
					}
				}
				assert.True(t, reported, "the detector reports %s", tc.bug)
			}

			twin, err := scenario.Twin(bug)
			require.NoError(t, err)
			n := twinSeeds(t)
			for _, level := range []sim.Level{0, 1, 2} {
				for seed := uint64(1); seed <= n; seed++ {
					o := scenario.HuntOptions(bug, st, seed)
					o.Perturb, o.Strategy, o.Race = level, sim.StrategyRandom, level == 1
					_, err := twin.Run(o)
					require.NoError(t, err, "twin %s seed %d level %d", twin.Name, seed, level)
				}
			}
			// And under PCT as the hunt runs it (gin-hier-allreduce's seed 7
			// once completed a CFT red before a PCT-deferred delivery).
			kt := scenario.PCTStepsFor(bug, st, 1, true)
			for seed := uint64(1); seed <= max(n, 8); seed++ {
				o := scenario.HuntOptions(bug, st, seed)
				o.PCT = sim.PCT{Steps: kt}
				_, err := twin.Run(o)
				require.NoError(t, err, "twin %s seed %d under pct", twin.Name, seed)
			}
		})
	}
}

// In debug mode the second barrier instance of gin-barrier-alias stops at
// its wait with the rule it breaks; its twin runs clean in debug mode.
func TestBarrierAliasDebug(t *testing.T) {
	bug, err := scenario.Lookup("gin-barrier-alias")
	require.NoError(t, err)
	st, err := scenario.LookupStrategy("ties")
	require.NoError(t, err)
	o := scenario.HuntOptions(bug, st, 1)
	o.Debug = true
	_, err = bug.Run(o)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "Two barrier instances (or epochs) on one signal slot see each other's counts")
	twin, err := scenario.Twin(bug)
	require.NoError(t, err)
	_, err = twin.Run(o)
	require.NoError(t, err)
}
