package cft_test

import (
	"errors"
	"testing"

	"github.com/emud-dev/emud/scenario"
	_ "github.com/emud-dev/emud/scenario/cft"
	"github.com/stretchr/testify/require"
)

// The counted all-gather moves every block; its planted twin, waiting for
// one producer's bytes fewer, copies a block before it landed (wrong data
// in release runs, a race under the detector).
func TestCountedAllGather(t *testing.T) {
	ok, err := scenario.Lookup("cft-counted-allgather")
	require.NoError(t, err)
	for _, n := range []int{2, 8, 40} {
		o := scenario.Defaults(ok)
		o.Ranks, o.Seed, o.Race = n, 3, true
		_, err := ok.Run(o)
		require.NoError(t, err, "%d ranks", n)
	}
	// With the fence checker on (--debug) too: a counted write is
	// released by its counter, and the receiver's waitCounted acquires it
	// (before, every seed failed asking the producer for a release fence).
	for seed := uint64(1); seed <= 3; seed++ {
		o := scenario.Defaults(ok)
		o.Ranks, o.Seed, o.Debug = 4, seed, true
		_, err := ok.Run(o)
		require.NoError(t, err, "seed %d", seed)
	}
	sc, err := scenario.Lookup("cft-counted-short")
	require.NoError(t, err)
	o := scenario.Defaults(sc)
	o.Ranks, o.Seed = 4, 3
	_, err = sc.Run(o)
	var me *scenario.MismatchError
	require.True(t, errors.As(err, &me), "%v", err)
	o.Phantom = true
	require.ErrorContains(t, sc.Check(o), "counted writes count into real bytes")
}
