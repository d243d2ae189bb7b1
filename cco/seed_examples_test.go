package cco_test

import (
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// metric sums a counter of the node's registry over all its label sets.
func (r *rig) metric(name string) float64 {
	mfs, err := r.node.Registry().Gather()
	require.NoError(r.t, err)
	sum := 0.0
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// ship is the seed's first worked example, line for line: each lane of the
// warp ships its own chunk to the same peer with SameQueue.
func ship(t *kernel.Thread, sendWin, recvWin cco.Window, chunk uint64, devComm cco.DevComm, peer int) {
	sdma := cco.NewSdma(t, devComm)
	lane := t.ThreadIdx() // one queue per warp
	q := (t.ThreadIdx() / 64) % devComm.Sdma.SdmaNumQueue

	sdma.Put(peer, recvWin, uint64(lane)*chunk, sendWin, uint64(lane)*chunk, chunk, q,
		cco.CoopThread, cco.SdmaOptFlagsDefault, cco.SdmaThreadSameQueue)

	sdma.QuietQueue(peer, q)
}

func TestSeedExampleShip(t *testing.T) {
	const chunk = 256
	for seed := uint64(1); seed <= seeds; seed++ {
		r := newRig(t, seed, rigOpts{ranks: 2, queues: 2})
		data := patterned(int(seed), 128*chunk)
		r.fillBytes(r.send[0], 0, data)
		_, err := kernel.Launch(r.s, kernel.Config{Name: "ship", GPU: 0, Grid: 1, Block: 128}, func(t *kernel.Thread) {
			ship(t, r.send[0], r.recv[0], chunk, r.dcs[0], 1)
		})
		require.NoError(t, err)
		require.NoError(t, r.s.Run(), "seed %d", seed)
		assert.Equal(t, data, r.readBytes(r.recv[1], 0, 128*chunk), "seed %d", seed)
		// One reservation and one doorbell per wave: two waves, two queues.
		assert.Equal(t, 2.0, r.metric("emud_sdma_doorbells_total"), "seed %d", seed)
		for q := 0; q < 2; q++ {
			qu, err := r.node.Queue(0, 1, q)
			require.NoError(t, err)
			assert.Equal(t, uint64(64*cco.Unit), qu.Ring().CommittedWptr(), "queue %d holds the wave's 64 COPY units", q)
		}
	}
}

// alltoall is the seed's second worked example, line for line: one lane per
// peer, one remote signal to the peer, no barrier on the receive side.
func alltoall(t *kernel.Thread, sendWin, recvWin cco.Window, bytes uint64, devComm cco.DevComm, expected uint64) {
	sdma := cco.NewSdma(t, devComm)
	me, n := devComm.LsaRank, devComm.LsaSize
	p := t.ThreadIdx()
	if p >= n || p == me {
		return
	}

	// lanes target distinct peers -> distinct queues -> posted in parallel
	sdma.Put(p, recvWin, uint64(me)*bytes, sendWin, uint64(p)*bytes, bytes, 0,
		cco.CoopThread, cco.RemoteSignal)

	sdma.Quiet(p)                   // our sends are out
	sdma.WaitSignal(p, 0, expected) // peer p's data has landed
}

func TestSeedExampleAlltoall(t *testing.T) {
	const bytes = 1024
	for _, ranks := range []int{2, 4, 8} {
		for seed := uint64(1); seed <= seeds; seed++ {
			r := newRig(t, seed, rigOpts{ranks: ranks})
			for me := 0; me < ranks; me++ {
				for p := 0; p < ranks; p++ {
					r.fillBytes(r.send[me], uint64(p*bytes), patterned(me*16+p, bytes))
				}
			}
			// Two rounds: expected is a running total per (src, queue).
			ks := []*kernel.Kernel{}
			for me := 0; me < ranks; me++ {
				me := me
				ks = append(ks, r.launch(me, 1, 64, func(t *kernel.Thread, _ *cco.Sdma) {
					alltoall(t, r.send[me], r.recv[me], bytes, r.dcs[me], 1)
				}))
			}
			r.s.Spawn("host", func(a *sim.Actor) {
				require.NoError(t, kernel.WaitAll(a, ks...))
				for me := 0; me < ranks; me++ {
					me := me
					r.launch(me, 1, 64, func(t *kernel.Thread, _ *cco.Sdma) {
						alltoall(t, r.send[me], r.recv[me], bytes, r.dcs[me], 2)
					})
				}
			})
			require.NoError(t, r.s.Run(), "ranks %d seed %d", ranks, seed)
			for me := 0; me < ranks; me++ {
				for src := 0; src < ranks; src++ {
					if src == me {
						continue
					}
					require.Equal(t, patterned(src*16+me, bytes), r.readBytes(r.recv[me], uint64(src*bytes), bytes),
						"ranks %d seed %d: rank %d's slot from %d", ranks, seed, me, src)
					require.Equal(t, uint64(2), r.signal(me, src, 0), "ranks %d seed %d: signal [%d,0] on rank %d", ranks, seed, src, me)
				}
			}
		}
	}
}
