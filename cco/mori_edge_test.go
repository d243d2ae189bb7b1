package cco_test

// MORI SDMA acceptance scenario test_sdma_edge.cpp (docs/cco-semantics.md §12):
// COUNT 64 floats (256 B per pair), phases wrap, zero, tiny and mixwrap.

import (
	"fmt"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	moriEdgeCount = 64                // floats per pair
	moriEdgeBytes = moriEdgeCount * 4 // 256 B per pair
	// moriEdgeLap is the number of single-COPY puts that fill one lap of the
	// 256 KiB ring: 8192 units of 32 B.
	moriEdgeLap = ring.DefaultSize / cco.Unit
)

// moriEdgeCheck checks the alltoall pattern of COUNT 64 in every slot s ≠ me.
func moriEdgeCheck(t *testing.T, r *rig, ranks int, what string) {
	t.Helper()
	for me := 0; me < ranks; me++ {
		for s := 0; s < ranks; s++ {
			if s == me {
				continue
			}
			require.Equal(t, moriA2AExpect(s, me, moriEdgeCount), r.readF32(r.recv[me], s*moriEdgeCount, moriEdgeCount),
				"%s: rank %d's slot from %d", what, me, s)
		}
	}
}

// moriEdgeWrap is phase "wrap": lane p issues 8192 identical puts of 256 B on
// peer p's queue 0, then quiet(p). That is exactly one lap of 32 B units.
// Under the seed's capacity rule (capacity = size − 32 B) the 8192nd put
// needs rptr ≥ 32, so it must wait for the engine: issuing takes no virtual
// time in the emulator while the engine needs microseconds per packet. At
// most that one reservation per queue waits, and every rank's wave waits at
// least once. (With several lanes in the wave, the lanes spin in lock-step:
// while the first lane's spin waits, the other queues' engines run on, so
// their lanes may find the space already free.)
func moriEdgeWrap(t *testing.T, ranks int, seed uint64) {
	what := fmt.Sprintf("wrap ranks %d seed %d", ranks, seed)
	r := newRig(t, seed, rigOpts{ranks: ranks, freeIssue: true})
	moriA2ASetup(r, ranks, moriEdgeCount, 0xff)
	var ks []*kernel.Kernel
	for me := 0; me < ranks; me++ {
		ks = append(ks, r.launch(me, 1, 64, func(t *kernel.Thread, sdma *cco.Sdma) {
			p := t.ThreadIdx()
			if p >= ranks || p == me {
				return
			}
			for i := 0; i < moriEdgeLap; i++ {
				sdma.Put(p, r.recv[me], uint64(me*moriEdgeBytes), r.send[me], uint64(p*moriEdgeBytes), moriEdgeBytes, 0)
			}
			sdma.Quiet(p)
		}))
	}
	moriRunKernels(t, r, ks, what)
	moriEdgeCheck(t, r, ranks, what)
	full := moriQueueMetrics(t, r, "emud_sdma_ring_full_waits_total")
	dbs := moriDoorbells(t, r)
	for me := 0; me < ranks; me++ {
		waits := 0.0
		for p := 0; p < ranks; p++ {
			if p == me {
				continue
			}
			rg := moriRing(t, r, me, p, 0)
			require.Equal(t, rg.Size()-cco.Unit, rg.Capacity(), "%s: the seed's capacity rule", what)
			assert.Equal(t, rg.Size(), rg.CommittedWptr(), "%s: queue %d→%d: exactly one lap posted and rung", what, me, p)
			assert.Equal(t, rg.Size(), rg.Rptr(), "%s: queue %d→%d: the lap was executed", what, me, p)
			w := full[moriQueueKey{me, p, 0}]
			assert.LessOrEqual(t, w, 1.0, "%s: queue %d→%d: only the last put may wait for ring space", what, me, p)
			waits += w
			assert.Equal(t, float64(moriEdgeLap), dbs[moriQueueKey{me, p, 0}], "%s: queue %d→%d: one doorbell per put", what, me, p)
		}
		assert.GreaterOrEqual(t, waits, 1.0, "%s: rank %d: the last put of a lap waits for the engine", what, me)
	}
}

// TestMoriSdmaEdgeWrap is test_sdma_edge.cpp phase "wrap" with 2 ranks, for
// every seed.
func TestMoriSdmaEdgeWrap(t *testing.T) {
	for seed := uint64(1); seed <= seeds; seed++ {
		moriEdgeWrap(t, 2, seed)
	}
}

// TestMoriSdmaEdgeWrapMultiLane is phase "wrap" with several lanes per
// wave: at 4 ranks 12 queues each take one lap with three lanes of a wave
// spinning in lock-step, under every seed. MORI's CI shape, 8 ranks, runs
// one seed: it posts 8192 × 56 puts, about 6 s under -race on a 2-core
// machine, and seeds only reorder events due at the same instant.
func TestMoriSdmaEdgeWrapMultiLane(t *testing.T) {
	t.Run("ranks4", func(t *testing.T) { moriEdgeWrap(t, 4, seeds) })
	t.Run("ranks8", func(t *testing.T) { moriEdgeWrap(t, 8, 1) })
}

// TestMoriSdmaEdgeZero is phase "zero": a transfer of 0 bytes then quiet must
// not hang, the receive memory preset to 7.0f stays untouched, and nothing
// is posted: every ring's reservation pointer stays 0 and no doorbell rings
// (§2.3: bytes == 0 is a silent no-op before any ballot). It runs put at
// thread and warp scope and get at thread scope, each with 2 and 4 ranks.
func TestMoriSdmaEdgeZero(t *testing.T) {
	cases := []struct {
		name string
		sc   moriScope
		get  bool
	}{
		{"put/thread", moriThreadScope, false},
		{"put/warp", moriWarpScope, false},
		{"get/thread", moriThreadScope, true},
	}
	for _, c := range cases {
		for _, rs := range []struct {
			ranks  int
			nSeeds uint64
		}{{2, seeds}, {4, seeds}} {
			ranks := rs.ranks
			t.Run(fmt.Sprintf("%s/ranks%d", c.name, ranks), func(t *testing.T) {
				for seed := uint64(1); seed <= rs.nSeeds; seed++ {
					what := fmt.Sprintf("seed %d", seed)
					r := newRig(t, seed, rigOpts{ranks: ranks})
					for me := 0; me < ranks; me++ {
						r.fillF32(r.send[me], 0, ranks*moriEdgeCount, func(i int) float32 { return moriA2AValue(me, i/moriEdgeCount, i%moriEdgeCount) })
						r.fillF32(r.recv[me], 0, ranks*moriEdgeCount, func(int) float32 { return 7.0 })
					}
					var ks []*kernel.Kernel
					for me := 0; me < ranks; me++ {
						ks = append(ks, r.launch(me, c.sc.grid(ranks), c.sc.block, func(t *kernel.Thread, sdma *cco.Sdma) {
							p := c.sc.peerOf(t)
							if p >= ranks || p == me {
								return
							}
							if c.get {
								sdma.Get(p, r.recv[me], uint64(p*moriEdgeBytes), r.send[me], uint64(me*moriEdgeBytes), 0, 0, c.sc.coop)
							} else {
								sdma.Put(p, r.recv[me], uint64(me*moriEdgeBytes), r.send[me], uint64(p*moriEdgeBytes), 0, 0, c.sc.coop)
							}
							sdma.Quiet(p, c.sc.coop)
						}))
					}
					moriRunKernels(t, r, ks, what)
					for me := 0; me < ranks; me++ {
						for _, v := range r.readF32(r.recv[me], 0, ranks*moriEdgeCount) {
							require.Equal(t, float32(7.0), v, "%s: rank %d's receive memory must stay 7.0f", what, me)
						}
						for p := 0; p < ranks; p++ {
							if p == me {
								continue
							}
							for q := 0; q < r.dcs[me].Sdma.SdmaNumQueue; q++ {
								assert.Zero(t, moriRing(t, r, me, p, q).CachedWptr(), "%s: queue %d→%d q%d: nothing reserved", what, me, p, q)
							}
						}
					}
					assert.Zero(t, moriSum(moriDoorbells(t, r)), "%s: no doorbell", what)
					moriCheckNoSignals(t, r, ranks, what)
				}
			})
		}
	}
}

// TestMoriSdmaEdgeTiny is phase "tiny" (runs only if n ≥ 2): a warp-scope put
// of n − 1 bytes, a leftover from the old per-queue split. The receive memory
// is preset to 0; exactly those bytes ((src × 17 + i) & 0xff) land and the
// rest of the 256 B slot stays 0. Warp scope posts the whole transfer as one
// COPY on queueId (§5.1), so queue 0 holds one unit and the other queues
// none. It runs with the default 2 queues (1 byte) and with 8 (7 bytes).
func TestMoriSdmaEdgeTiny(t *testing.T) {
	for _, c := range []struct {
		queues, n, ranks int
		nSeeds           uint64
	}{{0, 2, 2, seeds}, {8, 8, 2, seeds}, {8, 8, 4, seeds}} {
		ranks := c.ranks
		t.Run(fmt.Sprintf("queues%d/ranks%d", c.n, ranks), func(t *testing.T) {
			for seed := uint64(1); seed <= c.nSeeds; seed++ {
				what := fmt.Sprintf("seed %d", seed)
				r := newRig(t, seed, rigOpts{ranks: ranks, queues: c.queues})
				require.Equal(t, c.n, r.dcs[0].Sdma.SdmaNumQueue, what)
				for me := 0; me < ranks; me++ {
					src := make([]byte, ranks*moriEdgeBytes)
					for p := 0; p < ranks; p++ {
						for i := 0; i < moriEdgeBytes; i++ {
							src[p*moriEdgeBytes+i] = byte((me*17 + i) & 0xff)
						}
					}
					r.fillBytes(r.send[me], 0, src)
					r.fillBytes(r.recv[me], 0, make([]byte, ranks*moriEdgeBytes))
				}
				var ks []*kernel.Kernel
				for me := 0; me < ranks; me++ {
					ks = append(ks, r.launch(me, ranks, 64, func(t *kernel.Thread, sdma *cco.Sdma) {
						p := t.BlockIdx()
						n := sdma.DevComm().Sdma.SdmaNumQueue
						if p == me || n < 2 {
							return
						}
						sdma.Put(p, r.recv[me], uint64(me*moriEdgeBytes), r.send[me], uint64(p*moriEdgeBytes), uint64(n-1), 0, cco.CoopWarp)
						sdma.Quiet(p, cco.CoopWarp)
					}))
				}
				moriRunKernels(t, r, ks, what)
				for me := 0; me < ranks; me++ {
					for s := 0; s < ranks; s++ {
						want := make([]byte, moriEdgeBytes)
						if s != me {
							for i := 0; i < c.n-1; i++ {
								want[i] = byte((s*17 + i) & 0xff)
							}
						}
						require.Equal(t, want, r.readBytes(r.recv[me], uint64(s*moriEdgeBytes), moriEdgeBytes),
							"%s: rank %d's slot from %d", what, me, s)
					}
					for p := 0; p < ranks; p++ {
						if p == me {
							continue
						}
						assert.Equal(t, uint64(cco.Unit), moriRing(t, r, me, p, 0).CommittedWptr(), "%s: queue %d→%d q0: one COPY", what, me, p)
						for q := 1; q < c.n; q++ {
							assert.Zero(t, moriRing(t, r, me, p, q).CachedWptr(), "%s: queue %d→%d q%d: the transfer is not split across queues", what, me, p, q)
						}
					}
				}
			}
		})
	}
}

// moriMixwrapRounds is the number of rounds of phase "mixwrap".
const moriMixwrapRounds = 8192

// moriMixwrapSeeds is how many seeds phase "mixwrap" runs: all of them. One
// seed posts 2 ranks × 8192 rounds × 4 = 65536 puts and executes 8192 × 7 =
// 57344 packets per queue (7 laps of the ring): about 2.5 s under -race on a
// 2-core machine.
const moriMixwrapSeeds = seeds

// TestMoriSdmaEdgeMixwrap is phase "mixwrap" with 2 ranks: 8192 rounds of four
// puts on queue 0 with signals {none, none, local, local + remote}. The runs
// are 32/32/64/96 B, 224 B per round, so 7 full laps of the 256 KiB ring
// with wrap and rptr back-pressure. The signals are not awaited in the
// kernel; after the run the data holds the normal pattern, the local slot
// [me, 0] advanced by 2 × 8192 per peer, and the peer's slot [me, 0] by
// 8192.
func TestMoriSdmaEdgeMixwrap(t *testing.T) {
	const ranks = 2
	for seed := uint64(1); seed <= moriMixwrapSeeds; seed++ {
		what := fmt.Sprintf("seed %d", seed)
		r := newRig(t, seed, rigOpts{ranks: ranks})
		moriA2ASetup(r, ranks, moriEdgeCount, 0xff)
		var ks []*kernel.Kernel
		for me := 0; me < ranks; me++ {
			ks = append(ks, r.launch(me, 1, 64, func(t *kernel.Thread, sdma *cco.Sdma) {
				p := t.ThreadIdx()
				if p >= ranks || p == me {
					return
				}
				dst, src := uint64(me*moriEdgeBytes), uint64(p*moriEdgeBytes)
				for i := 0; i < moriMixwrapRounds; i++ {
					sdma.Put(p, r.recv[me], dst, r.send[me], src, moriEdgeBytes, 0)
					sdma.Put(p, r.recv[me], dst, r.send[me], src, moriEdgeBytes, 0)
					sdma.Put(p, r.recv[me], dst, r.send[me], src, moriEdgeBytes, 0, cco.LocalSignal)
					sdma.Put(p, r.recv[me], dst, r.send[me], src, moriEdgeBytes, 0, cco.LocalSignal, cco.RemoteSignal)
				}
				sdma.Quiet(p)
			}))
		}
		moriRunKernels(t, r, ks, what)
		moriEdgeCheck(t, r, ranks, what)
		full := moriQueueMetrics(t, r, "emud_sdma_ring_full_waits_total")
		for me := 0; me < ranks; me++ {
			peers := uint64(ranks - 1)
			assert.Equal(t, 2*moriMixwrapRounds*peers, r.signal(me, me, 0), "%s: rank %d local slot [%d, 0]", what, me, me)
			for s := 0; s < ranks; s++ {
				if s != me {
					assert.Equal(t, uint64(moriMixwrapRounds), r.signal(me, s, 0), "%s: rank %d remote slot [%d, 0]", what, me, s)
				}
				assert.Zero(t, r.signal(me, s, 1), "%s: rank %d slot [%d, 1]", what, me, s)
			}
			for p := 0; p < ranks; p++ {
				if p == me {
					continue
				}
				rg := moriRing(t, r, me, p, 0)
				assert.Equal(t, 7*rg.Size(), rg.CommittedWptr(), "%s: queue %d→%d: 7 full laps", what, me, p)
				assert.Equal(t, 7*rg.Size(), rg.Rptr(), "%s: queue %d→%d: all executed", what, me, p)
				assert.Positive(t, full[moriQueueKey{me, p, 0}], "%s: queue %d→%d: the issuer waited on rptr", what, me, p)
			}
		}
	}
}
