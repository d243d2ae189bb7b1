package cco_test

import (
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/require"
)

// FuzzDevCommEnv feeds arbitrary environment strings and requested queue
// counts to the host setup: it never panics, the count is 0 exactly when
// SDMA is off and otherwise within 1..8, and a later dev comm keeps the
// first one's count.
func FuzzDevCommEnv(f *testing.F) {
	f.Add("1", "4", 0, 0)
	f.Add("yes", "12", 9, 3)
	f.Add("off", "2", 2, 2)
	f.Add("", "x", -1, 0)
	f.Add(" TRUE ", "-3", 8, 100)
	f.Fuzz(func(t *testing.T, enable, channels string, first, second int) {
		node, err := engine.NewNode(sim.New(sim.Config{Seed: 1}), cco.MI355X(2))
		require.NoError(t, err)
		h := cco.NewEmulatedHost(node, cco.Env{"MORI_ENABLE_SDMA": enable, "MORI_SDMA_NUM_CHANNELS": channels})
		cs, err := cco.CommCreateAll(h, 2, 0)
		require.NoError(t, err)
		reqs := cco.DevCommRequirementsInitializer()
		reqs.SdmaQueueCount = first
		dc, err := cco.DevCommCreate(cs[0], &reqs)
		if first < 0 {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		n := dc.Sdma.SdmaNumQueue
		if !cco.Truthy(enable) {
			require.Zero(t, n)
			return
		}
		require.True(t, n >= 1 && n <= cco.MaxSdmaQueues, "n = %d", n)
		if first > 0 {
			require.Equal(t, min(first, cco.MaxSdmaQueues), n)
		}
		reqs.SdmaQueueCount = second
		dc2, err := cco.DevCommCreate(cs[0], &reqs)
		if second < 0 {
			require.Error(t, err)
			return
		}
		require.NoError(t, err)
		require.Equal(t, n, dc2.Sdma.SdmaNumQueue, "the first dev comm fixes the count")
	})
}
