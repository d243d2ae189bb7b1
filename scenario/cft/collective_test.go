package cft_test

import (
	"fmt"
	"testing"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/scenario/cft"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/require"
)

// seeds is how many seeds each acceptance collective runs under.
const seeds = 20

func TestAllReduce(t *testing.T) {
	for _, n := range []int{4, 8, 72} {
		for _, typ := range []redop.Type{redop.U32, redop.F32} {
			if n == 72 && typ == redop.F32 {
				continue // f32 at 72 ranks adds race-detector time, not coverage
			}
			t.Run(fmt.Sprintf("%dranks/%v", n, typ), func(t *testing.T) {
				t.Parallel()
				var first string
				for seed := uint64(1); seed <= seeds; seed++ {
					res, err := cft.RunAllReduce(cft.AllReduceConfig{Seed: seed, Topology: fabric.Topology{NRanks: n}, Chunk: 32, Type: typ, Debug: true})
					require.NoError(t, err, "seed %d", seed)
					require.Len(t, res.Out, n)
					require.Empty(t, res.Reports)
					if seed == 1 {
						first = res.Digest
					}
				}
				again, err := cft.RunAllReduce(cft.AllReduceConfig{Seed: 1, Topology: fabric.Topology{NRanks: n}, Chunk: 32, Type: typ, Debug: true})
				require.NoError(t, err)
				require.Equal(t, first, again.Digest, "same seed, same run")
			})
		}
	}
}

func TestAllReduceHierarchical(t *testing.T) {
	// 16 ranks in multicast groups of 4: each group reduces on its own.
	for seed := uint64(1); seed <= 5; seed++ {
		_, err := cft.RunAllReduce(cft.AllReduceConfig{Seed: seed, Topology: fabric.Topology{NRanks: 16, LsaSize: 8, CftSize: 16, CftMcSize: 4}, Chunk: 16})
		require.NoError(t, err, "seed %d", seed)
	}
}

func TestAllToAll(t *testing.T) {
	for _, n := range []int{4, 8, 72} {
		t.Run(fmt.Sprintf("%dranks", n), func(t *testing.T) {
			t.Parallel()
			for seed := uint64(1); seed <= seeds; seed++ {
				res, err := cft.RunAllToAll(cft.AllToAllConfig{Seed: seed, Topology: fabric.Topology{NRanks: n}, Block: 16, Debug: true})
				require.NoError(t, err, "seed %d", seed)
				require.Len(t, res.Out, n)
				require.Empty(t, res.Reports)
			}
		})
	}
}

// A buffer that does not split evenly over the team, moved in staged
// pieces smaller than a chunk: every byte still checks (with the fence
// checker on).
func TestAllReduceUnevenChunksInPieces(t *testing.T) {
	for _, tc := range []struct{ ranks, bytes, stage int }{
		{6, 112, 16},      // chunks of 32 B: 32, 32, 32, 16, 0, 0
		{4, 4096 + 48, 0}, // chunks of 1040 B, one piece each
		{3, 3 * 4096, 1024},
	} {
		t.Run(fmt.Sprintf("%d ranks %d B stage %d", tc.ranks, tc.bytes, tc.stage), func(t *testing.T) {
			res, err := cft.RunAllReduce(cft.AllReduceConfig{Seed: 3, Topology: fabric.Topology{NRanks: tc.ranks},
				Bytes: tc.bytes, Stage: tc.stage, Debug: true})
			require.NoError(t, err)
			require.Len(t, res.Out, tc.ranks)
			require.Len(t, res.Want, tc.bytes)
		})
	}
	_, err := cft.RunAllReduce(cft.AllReduceConfig{Topology: fabric.Topology{NRanks: 2}, Bytes: 100})
	require.ErrorContains(t, err, "multiple of 16")
	_, err = cft.RunAllReduce(cft.AllReduceConfig{Topology: fabric.Topology{NRanks: 2}, Bytes: 1 << 20, Stage: 1 << 20})
	require.ErrorContains(t, err, "does not fit shared memory")
}

// Phantom runs time the same operations without bytes: the same virtual
// end time as the run that moves and checks them, and with operations of
// one granule the same digest (larger ones land in one step instead of
// granule by granule: fewer events, other tie-breaks).
func TestPhantomCollectivesTimeLikeRealOnes(t *testing.T) {
	topo := fabric.Topology{NRanks: 8, CftMcSize: 4}
	for _, stage := range []int{512, 32 << 10} {
		real, err := cft.RunAllReduce(cft.AllReduceConfig{Seed: 5, Topology: topo, Bytes: 256 << 10, Stage: stage})
		require.NoError(t, err)
		ph, err := cft.RunAllReduce(cft.AllReduceConfig{Seed: 5, Topology: topo, Bytes: 256 << 10, Stage: stage, Phantom: true})
		require.NoError(t, err)
		require.Equal(t, real.Elapsed, ph.Elapsed, "stage %d", stage)
		if stage <= fabric.Granule {
			require.Equal(t, real.Digest, ph.Digest)
		}
		require.Nil(t, ph.Out, "nothing to read back")
	}

	a, err := cft.RunAllToAll(cft.AllToAllConfig{Seed: 5, Topology: fabric.Topology{NRanks: 8}, Block: 64})
	require.NoError(t, err)
	b, err := cft.RunAllToAll(cft.AllToAllConfig{Seed: 5, Topology: fabric.Topology{NRanks: 8}, Block: 64, Phantom: true})
	require.NoError(t, err)
	require.Equal(t, a.Elapsed, b.Elapsed)
	require.Equal(t, a.Digest, b.Digest)

	_, err = cft.RunAllReduce(cft.AllReduceConfig{Topology: topo, Phantom: true, Debug: true})
	require.ErrorContains(t, err, "Phantom with Debug")
}

// A PCT change point defers the event due then by up to 50 µs, a
// granule's landing of a pullRed among them. The op completed when
// granule k-1 landed, before the deferred one had, so the rank went on
// to redMultimem shared memory that granule had not reached and every
// member's output got zeros there (emud explore cft-allreduce at 8 ranks
// × 1 MiB: seed 4 at --pct-depth 10, seed 8 at --perturb 2). It
// completes when every granule has landed.
func TestAllReducePCTDeferredGranule(t *testing.T) {
	for _, tc := range []struct {
		seed    uint64
		perturb sim.Level
		depth   int
	}{
		{4, sim.LevelRealistic, 10},
		{8, sim.LevelRealistic + 1, 3},
	} {
		t.Run(fmt.Sprintf("seed %d perturb %d depth %d", tc.seed, tc.perturb, tc.depth), func(t *testing.T) {
			_, err := cft.RunAllReduce(cft.AllReduceConfig{Seed: tc.seed, Topology: fabric.Topology{NRanks: 8}, Bytes: 1 << 20, Type: redop.U32, NoOut: true,
				Sched: job.Sched{Perturb: tc.perturb, Strategy: sim.StrategyPCT, PCT: sim.PCT{Depth: tc.depth, Steps: 20000}}})
			require.NoError(t, err)
		})
	}
}
