package fabric_test

import (
	"fmt"
	"testing"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/fabric/redop"
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
					res, err := fabric.RunAllReduce(fabric.AllReduceConfig{Seed: seed, Topology: fabric.Topology{NRanks: n}, Chunk: 32, Type: typ, Debug: true})
					require.NoError(t, err, "seed %d", seed)
					require.Len(t, res.Out, n)
					require.Empty(t, res.Reports)
					if seed == 1 {
						first = res.Digest
					}
				}
				again, err := fabric.RunAllReduce(fabric.AllReduceConfig{Seed: 1, Topology: fabric.Topology{NRanks: n}, Chunk: 32, Type: typ, Debug: true})
				require.NoError(t, err)
				require.Equal(t, first, again.Digest, "same seed, same run")
			})
		}
	}
}

func TestAllReduceHierarchical(t *testing.T) {
	// 16 ranks in multicast groups of 4: each group reduces on its own.
	for seed := uint64(1); seed <= 5; seed++ {
		_, err := fabric.RunAllReduce(fabric.AllReduceConfig{Seed: seed, Topology: fabric.Topology{NRanks: 16, LsaSize: 8, CftSize: 16, CftMcSize: 4}, Chunk: 16})
		require.NoError(t, err, "seed %d", seed)
	}
}

func TestAllToAll(t *testing.T) {
	for _, n := range []int{4, 8, 72} {
		t.Run(fmt.Sprintf("%dranks", n), func(t *testing.T) {
			t.Parallel()
			for seed := uint64(1); seed <= seeds; seed++ {
				res, err := fabric.RunAllToAll(fabric.AllToAllConfig{Seed: seed, Topology: fabric.Topology{NRanks: n}, Block: 16, Debug: true})
				require.NoError(t, err, "seed %d", seed)
				require.Len(t, res.Out, n)
				require.Empty(t, res.Reports)
			}
		})
	}
}
