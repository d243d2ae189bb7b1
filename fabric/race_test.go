package fabric_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/scenario/cft"
)

// A put's shared-memory source reused before flushSmem: the detector
// reports the lane's store against the fabric's read of the source,
// whichever came first. After flushSmem the reuse is ordered.
func TestRaceSmemReuseBeforeFlushSmem(t *testing.T) {
	for _, flushFirst := range []bool{false, true} {
		for seed := uint64(1); seed <= 3; seed++ {
			r := newRig(t, seed, job.FabricConfig{Race: true}, !flushFirst)
			r.launch(t, 0, 32, 16+8192, func(th *kernel.Thread, dc fabric.DevComm) {
				w := th.WarpGroup()
				if th.Lane() == 0 {
					th.SharedStore(16, pattern(1, 8192))
				}
				cft := fabric.NewCft(w, dc, 0)
				le, off := fabric.GetPeerLeInfo(r.W[0], 0, 1, dc)
				cft.Put(w, le, off, 16, 8192)
				cft.Submit(w)
				if flushFirst {
					cft.FlushSmem(w)
				}
				if th.Lane() == 0 {
					th.SharedStore(16+4096, pattern(2, 64)) // reuse the source
				}
				cft.Flush(w)
			})
			err := r.Sim.Run()
			if flushFirst {
				require.NoError(t, err, "seed %d", seed)
				continue
			}
			var re *race.Error
			require.True(t, errors.As(err, &re), "seed %d: %v", seed, err)
			rep := re.Reports[0]
			ops := []string{rep.First.Op, rep.Second.Op}
			assert.Contains(t, ops, "put source read (shared memory)")
			assert.Contains(t, ops, "shared store")
			assert.Contains(t, rep.Space, "shared memory of kernel")
			assert.Contains(t, rep.String(), "fabric/race_test.go:")
		}
	}
}

// The collectives run clean with the detector on, and a load made while a
// put is landing sees the granules landed so far (torn).
func TestRaceCollectivesClean(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		_, err := cft.RunAllReduce(cft.AllReduceConfig{Seed: seed, Topology: fabric.Topology{NRanks: 4}, Race: true})
		require.NoError(t, err)
		_, err = cft.RunAllToAll(cft.AllToAllConfig{Seed: seed, Topology: fabric.Topology{NRanks: 4}, Block: 4096, Race: true})
		require.NoError(t, err)
	}
}

func TestPutLandsGranuleByGranule(t *testing.T) {
	const n = 4 * fabric.Granule
	r := newRig(t, 1, job.FabricConfig{}, true)
	var seen []byte
	r.launch(t, 0, 32, 16+n, func(th *kernel.Thread, dc fabric.DevComm) {
		w := th.WarpGroup()
		if th.Lane() == 0 {
			th.SharedStore(16, pattern(3, n))
		}
		cft := fabric.NewCft(w, dc, 0)
		le, off := fabric.GetPeerLeInfo(r.W[0], 0, 1, dc)
		cft.Put(w, le, off, 16, n)
		cft.Submit(w)
		cft.Flush(w)
	})
	r.launch(t, 1, 32, 64, func(th *kernel.Thread, dc fabric.DevComm) {
		// Poll (relaxed) until the first granule's first word has landed.
		want := pattern(3, 16)
		got := make([]byte, 16)
		for i := 0; i < 1<<20; i++ {
			dc.LoadRelaxed(th, r.W[1], 0, got)
			if string(got) == string(want) {
				break
			}
			th.SyncWarp()
			th.Wave().Actor().Sleep(10)
		}
		if th.Lane() == 0 {
			seen = make([]byte, n)
			dc.LoadRelaxed(th, r.W[1], 0, seen)
		}
	})
	require.NoError(t, r.Sim.Run())
	full := pattern(3, n)
	landed := 0
	for landed < n && seen[landed] == full[landed] {
		landed++
	}
	assert.GreaterOrEqual(t, landed, fabric.Granule)
	assert.Less(t, landed, n, "the load mid-put is torn")
	assert.Zero(t, landed%fabric.Granule, "whole granules land")
}
