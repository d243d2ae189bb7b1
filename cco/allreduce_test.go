package cco_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/require"
)

// MORI's examples/cco/python/07_flydsl_sdma: an all-reduce for world size
// 2 over 1 MiB of f32 with 8 queues. Thread 0 of each rank puts its input to
// every peer's gather slot (itself included, through the loopback queue),
// quiets each peer; after a host barrier a second kernel reduces locally.
// out[i] == 3 × (i + 1) everywhere, since rank r contributes (r+1)(i+1).
func TestFlyDSLAllReduce(t *testing.T) {
	const world, n = 2, 1 << 18 // 1 MiB of float32
	const bytes = 4 * n
	for seed := uint64(1); seed <= seeds; seed++ {
		r := newRig(t, seed, rigOpts{ranks: world, queues: 8, winBytes: world * bytes})
		// send[r] holds the input; recv[r] is the gather buffer, slot s for
		// rank s's input.
		for me := 0; me < world; me++ {
			in := make([]byte, bytes)
			for i := 0; i < n; i++ {
				binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(float32((me+1)*(i+1))))
			}
			r.fillBytes(r.send[me], 0, in)
		}
		gather := func(me int) []*kernel.Kernel {
			return []*kernel.Kernel{r.launch(me, 1, 64, func(t *kernel.Thread, sdma *cco.Sdma) {
				if t.ThreadIdx() != 0 {
					return
				}
				for p := 0; p < world; p++ {
					sdma.Put(p, r.recv[me], uint64(me*bytes), r.send[me], 0, bytes, p%8)
				}
				for p := 0; p < world; p++ {
					sdma.Quiet(p)
				}
			})}
		}
		var ks []*kernel.Kernel
		for me := 0; me < world; me++ {
			ks = append(ks, gather(me)...)
		}
		out := make([][]float32, world)
		r.s.Spawn("host", func(a *sim.Actor) {
			require.NoError(t, kernel.WaitAll(a, ks...)) // host barrier
			var red []*kernel.Kernel
			for me := 0; me < world; me++ {
				me := me
				out[me] = make([]float32, n)
				red = append(red, r.launch(me, 1, 64, func(t *kernel.Thread, _ *cco.Sdma) {
					// Each lane reduces its own contiguous share.
					lo, cnt := t.ThreadIdx()*(n/64), n/64
					for s := 0; s < world; s++ {
						for i, v := range r.readF32(r.recv[me], s*n+lo, cnt) {
							out[me][lo+i] += v
						}
					}
				}))
			}
			require.NoError(t, kernel.WaitAll(a, red...))
		})
		require.NoError(t, r.s.Run(), "seed %d", seed)
		for me := 0; me < world; me++ {
			for _, i := range []int{0, 1, n / 2, n - 1} {
				require.Equal(t, float32(3*(i+1)), out[me][i], "seed %d rank %d out[%d]", seed, me, i)
			}
			for i := range out[me] {
				if out[me][i] != float32(3*(i+1)) {
					t.Fatalf("seed %d rank %d out[%d] = %v, want %v", seed, me, i, out[me][i], float32(3*(i+1)))
				}
			}
		}
	}
}
