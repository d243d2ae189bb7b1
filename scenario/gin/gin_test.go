package gin_test

import (
	"errors"
	"testing"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/scenario"
	_ "github.com/emud-dev/emud/scenario/gin"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func opts(t *testing.T, name string, seed uint64, level sim.Level) (*scenario.Scenario, scenario.Options) {
	t.Helper()
	sc, err := scenario.Lookup(name)
	require.NoError(t, err)
	o := scenario.Defaults(sc)
	o.Ranks, o.LsaSize, o.Bytes, o.Seed, o.Perturb = 4, 2, 16<<10, seed, level
	require.NoError(t, scenario.Admit(sc, o, 0))
	return sc, o
}

// Each planted GIN bug shows in release runs on some seed and is reported
// by the race detector in one run; its fixed twin is clean on every seed
// at every perturbation level, with and without the detector.
func TestPlantedGinBugs(t *testing.T) {
	seeds := uint64(20)
	if testing.Short() {
		seeds = 8
	}
	for _, tc := range []struct{ bug, twin string }{
		{"gin-weak-signal", "gin-halves"},
		{"gin-shared-signal", "gin-blocks"},
		{"gin-reset-after-signal", "gin-reset-barrier"},
	} {
		t.Run(tc.bug, func(t *testing.T) {
			found := 0
			for seed := uint64(1); seed <= seeds; seed++ {
				sc, o := opts(t, tc.bug, seed, 1)
				if _, err := sc.Run(o); err != nil {
					var me *scenario.MismatchError
					var he *sim.HangError
					require.True(t, errors.As(err, &me) || errors.As(err, &he), "seed %d: %v", seed, err)
					found++
				}
			}
			assert.Positive(t, found, "release runs show the bug on some of %d seeds", seeds)
			t.Logf("%s: found on %d of %d seeds (perturbation 1)", tc.bug, found, seeds)

			// The detector reports it in a run that does not hang first (a
			// hang ends the run before the report): at exact timing.
			reported := uint64(0)
			for seed := uint64(1); seed <= seeds && reported == 0; seed++ {
				sc, o := opts(t, tc.bug, seed, 0)
				o.Race = true
				_, err := sc.Run(o)
				var re *race.Error
				if errors.As(err, &re) {
					reported = seed
				}
			}
			require.NotZero(t, reported, "the detector reports the bug")

			for _, level := range []sim.Level{0, 1, 2} {
				for seed := uint64(1); seed <= seeds/2; seed++ {
					for _, rc := range []bool{false, true} {
						sc, o := opts(t, tc.twin, seed, level)
						o.Race = rc
						_, err := sc.Run(o)
						require.NoError(t, err, "twin %s seed %d level %d race %v", tc.twin, seed, level, rc)
					}
				}
			}
		})
	}
}

// The collectives check every byte and are deterministic.
func TestGinCollectives(t *testing.T) {
	for _, name := range []string{"gin-alltoall", "gin-allgather"} {
		sc, o := opts(t, name, 3, 1)
		a, err := sc.Run(o)
		require.NoError(t, err)
		b, err := sc.Run(o)
		require.NoError(t, err)
		require.Equal(t, a.Digest, b.Digest)
		o.Phantom = true
		_, err = sc.Run(o)
		require.NoError(t, err)
	}
	sc, o := opts(t, "gin-alltoall", 1, 0)
	o.Bytes = 12
	require.ErrorContains(t, scenario.Admit(sc, o, 0), "invalid --bytes 12B: need a multiple of 8")
}

// The hierarchical all-reduce sums every rank's input on every rank, race
// clean, on one node, two nodes and uneven chunks; gda-allgather moves
// every block over ccoGda and its planted CROSSNODE twin hangs at the GDA
// barrier with the shared-slot cause.
func TestHierAllReduceAndGda(t *testing.T) {
	for _, tc := range []struct {
		ranks, lsa int
		bytes      uint64
	}{{4, 0, 1 << 10}, {16, 8, 8 << 10}, {12, 4, 1040}} {
		sc, err := scenario.Lookup("gin-hier-allreduce")
		require.NoError(t, err)
		o := scenario.Defaults(sc)
		o.Ranks, o.LsaSize, o.Bytes, o.Seed, o.Race = tc.ranks, tc.lsa, tc.bytes, 2, true
		require.NoError(t, scenario.Admit(sc, o, 0))
		_, err = sc.Run(o)
		require.NoError(t, err, "%+v", tc)
	}
	for _, name := range []string{"gda-allgather", "gda-crossnode-barrier"} {
		sc, o := opts(t, name, 3, sim.Level(1))
		o.Race = true
		_, err := sc.Run(o)
		if name == "gda-allgather" {
			require.NoError(t, err)
			continue
		}
		var he *sim.HangError
		require.True(t, errors.As(err, &he), "%v", err)
		assert.Contains(t, err.Error(), "all of a node's ranks arrive on one slot")
	}
}

// GIN over SDMA: the collectives check every byte, deterministically, on
// both lowerings (mi355x: COPY + ATOMIC; gfx950: the fused packet); the
// planted weak-split shows wrong data and is reported by the detector,
// its twin is clean at every perturbation level.
func TestGinSdmaScenarios(t *testing.T) {
	sdmaOpts := func(name string, seed uint64, level sim.Level, bytes uint64) (*scenario.Scenario, scenario.Options) {
		sc, err := scenario.Lookup(name)
		require.NoError(t, err)
		o := scenario.Defaults(sc)
		o.Ranks, o.Bytes, o.Seed, o.Perturb = 4, bytes, seed, level
		require.NoError(t, scenario.Admit(sc, o, 0))
		return sc, o
	}
	for _, name := range []string{"gin-sdma-alltoall", "gin-sdma-allgather"} {
		for _, m := range []string{"", "gfx950"} {
			sc, o := sdmaOpts(name, 3, 1, 4<<10)
			o.Model, o.Race = m, m == ""
			a, err := sc.Run(o)
			require.NoError(t, err, "%s %s", name, m)
			b, err := sc.Run(o)
			require.NoError(t, err)
			require.Equal(t, a.Digest, b.Digest)
			assert.Contains(t, a.Model, "GIN over SDMA")
		}
	}
	sc, o := sdmaOpts("gin-sdma-alltoall", 1, 0, 16<<10)
	o.LsaSize = 2
	require.ErrorContains(t, scenario.Admit(sc, o, 0), "run on one node")

	const bytes = 320 << 10
	for seed := uint64(1); seed <= 2; seed++ {
		sc, o := sdmaOpts("gin-sdma-weak-split", seed, 1, bytes)
		_, err := sc.Run(o)
		var me *scenario.MismatchError
		require.True(t, errors.As(err, &me), "seed %d: %v", seed, err)
	}
	sc, o = sdmaOpts("gin-sdma-weak-split", 1, 0, bytes)
	o.Race = true
	_, err := sc.Run(o)
	var re *race.Error
	require.True(t, errors.As(err, &re), "%v", err)
	assert.Contains(t, re.Error(), "A weak signal implies only its own put")
	for _, level := range []sim.Level{0, 1, 2} {
		sc, o := sdmaOpts("gin-sdma-split", 2, level, bytes)
		o.Race = level == 1
		_, err := sc.Run(o)
		require.NoError(t, err, "twin level %d", level)
	}
}
