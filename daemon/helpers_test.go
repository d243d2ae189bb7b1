package daemon

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/scenario"
	_ "github.com/emud-dev/emud/scenario/all"
)

// withScenario registers sc for one test.
func withScenario(t *testing.T, sc *scenario.Scenario) {
	t.Helper()
	scenario.Register(sc)
	t.Cleanup(func() { scenario.Unregister(sc.Name) })
}

// mustScenario is the registered scenario called name.
func mustScenario(t *testing.T, name string) *scenario.Scenario {
	t.Helper()
	sc, err := scenario.Lookup(name)
	require.NoError(t, err)
	return sc
}

// runDigest is the digest of the run "emud run" makes with o (the
// library call it makes, without the daemon).
func runDigest(t *testing.T, name string, o scenario.Options) string {
	t.Helper()
	rep := scenario.RunOnce(mustScenario(t, name), o)
	require.NotEmpty(t, rep.Digest(), rep.Error)
	return rep.Digest()
}

// hangingSeed is a seed that hangs the planted bug at 4 ranks × 4 KiB.
func hangingSeed(t *testing.T) uint64 {
	t.Helper()
	for s := uint64(1); s <= 200; s++ {
		if scenario.RunOnce(mustScenario(t, "alltoall-shared-expected"), scenario.Options{Ranks: 4, Bytes: 4 << 10, Queues: 2, Seed: s}).Status == scenario.StatusHang {
			return s
		}
	}
	require.Fail(t, "no seed in 1..200 hangs the planted bug")
	return 0
}
