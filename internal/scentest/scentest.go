// Package scentest holds the test helpers that more than one package's
// tests of the scenario registry share (cmd/emud and daemon): registering
// a throwaway scenario for one test, looking one up, and finding a seed
// that hangs the planted all-to-all bug.
package scentest

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/scenario"
)

// Register registers sc for the rest of test t.
func Register(t testing.TB, sc *scenario.Scenario) {
	t.Helper()
	scenario.Register(sc)
	t.Cleanup(func() { scenario.Unregister(sc.Name) })
}

// Lookup is the registered scenario called name; t fails without it.
func Lookup(t testing.TB, name string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Lookup(name)
	require.NoError(t, err)
	return sc
}

// HangingSeed is the first seed in 1..200 that hangs the planted bug
// alltoall-shared-expected at 4 ranks × 4 KiB (it must be registered).
func HangingSeed(t testing.TB) uint64 {
	t.Helper()
	sc := Lookup(t, "alltoall-shared-expected")
	for s := uint64(1); s <= 200; s++ {
		if scenario.RunOnce(sc, scenario.Options{Ranks: 4, Bytes: 4 << 10, Queues: 2, Seed: s}).Status == scenario.StatusHang {
			return s
		}
	}
	require.Fail(t, "no seed in 1..200 hangs the planted bug")
	return 0
}
