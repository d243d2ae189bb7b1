package cco_test

// The "aggregate" and "nosignal" cases of MORI's
// tests/python/cco/test_sdma_api.py (docs/cco-semantics.md §7 and §12):
// sdma_queue_count = 8, thread scope, one lane per peer.

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moriAggWords are the chunks of the aggregate case, in 32-bit words: 256
// words (1 KiB) per pair in three puts.
var moriAggWords = []int{85, 85, 86}

// moriAggSeen is what a lane saw of its queue between the Aggregate puts
// and the commit.
type moriAggSeen struct {
	cached, committed uint64
	done              bool
}

// TestMoriSdmaAggregate is the python "aggregate" case: lane p puts three
// chunks of 85/85/86 words to peer p with ccoSdmaOptFlagsAggregate, then one
// commit(p, q) and quietQueue(p, q). Before the commit the three COPY units
// are reserved but nothing is rung (the lane reads the ring pointers in the
// kernel); afterwards the data has landed, exactly one doorbell was rung on
// (me → p, q), and no other queue rang.
func TestMoriSdmaAggregate(t *testing.T) {
	for _, c := range []struct {
		ranks, q int
		nSeeds   uint64
	}{{2, 0, seeds}, {2, 7, seeds}, {4, 3, seeds}, {8, 0, seeds}} {
		t.Run(fmt.Sprintf("ranks%d/q%d", c.ranks, c.q), func(t *testing.T) {
			ranks, q := c.ranks, c.q
			const bytesPer = 256 * 4
			for seed := uint64(1); seed <= c.nSeeds; seed++ {
				what := fmt.Sprintf("seed %d", seed)
				r := newRig(t, seed, rigOpts{ranks: ranks, queues: 8})
				require.Equal(t, 8, r.dcs[0].Sdma.SdmaNumQueue, what)
				for me := 0; me < ranks; me++ {
					r.fillBytes(r.send[me], 0, patterned(me+1, uint64(ranks*bytesPer)))
					r.fillBytes(r.recv[me], 0, bytes.Repeat([]byte{0xff}, ranks*bytesPer))
				}
				seen := make([][]moriAggSeen, ranks)
				notes := &moriNotes{}
				var ks []*kernel.Kernel
				for me := 0; me < ranks; me++ {
					seen[me] = make([]moriAggSeen, ranks)
					ks = append(ks, r.launch(me, 1, 64, func(t *kernel.Thread, sdma *cco.Sdma) {
						p := t.ThreadIdx()
						if p >= ranks || p == me {
							return
						}
						off := uint64(0)
						for _, w := range moriAggWords {
							n := uint64(4 * w)
							sdma.Put(p, r.recv[me], uint64(me*bytesPer)+off, r.send[me], uint64(p*bytesPer)+off, n, q,
								cco.SdmaOptFlagsAggregate)
							off += n
						}
						qu, err := r.node.Queue(me, p, q)
						if err != nil {
							notes.addf("rank %d: queue: %v", me, err)
							return
						}
						seen[me][p] = moriAggSeen{cached: qu.Ring().CachedWptr(), committed: qu.Ring().CommittedWptr(), done: true}
						sdma.Commit(p, q)
						sdma.QuietQueue(p, q)
					}))
				}
				moriRunKernels(t, r, ks, what)
				require.Empty(t, notes.msgs, what)
				dbs := moriDoorbells(t, r)
				assert.Equal(t, float64(ranks*(ranks-1)), moriSum(dbs), "%s: one doorbell per pair in all", what)
				for me := 0; me < ranks; me++ {
					for p := 0; p < ranks; p++ {
						if p == me {
							continue
						}
						s := seen[me][p]
						require.True(t, s.done, "%s: rank %d lane %d ran", what, me, p)
						assert.Equal(t, uint64(len(moriAggWords))*cco.Unit, s.cached, "%s: %d→%d: three COPY units reserved before commit", what, me, p)
						assert.Zero(t, s.committed, "%s: %d→%d: nothing rung before commit", what, me, p)
						assert.Equal(t, 1.0, dbs[moriQueueKey{me, p, q}], "%s: %d→%d q%d: exactly one doorbell", what, me, p, q)
						rg := moriRing(t, r, me, p, q)
						assert.Equal(t, uint64(len(moriAggWords))*cco.Unit, rg.CommittedWptr(), "%s: %d→%d: the commit rang the batch", what, me, p)
						assert.Equal(t, rg.CommittedWptr(), rg.Rptr(), "%s: %d→%d: drained", what, me, p)
						want := patterned(me+1, uint64(ranks*bytesPer))[p*bytesPer : (p+1)*bytesPer]
						require.Equal(t, want, r.readBytes(r.recv[p], uint64(me*bytesPer), bytesPer), "%s: %d→%d data", what, me, p)
					}
					require.Equal(t, bytes.Repeat([]byte{0xff}, bytesPer), r.readBytes(r.recv[me], uint64(me*bytesPer), bytesPer),
						"%s: rank %d's own slot stays preset", what, me)
				}
				moriCheckNoSignals(t, r, ranks, what)
			}
		})
	}
}

// moriNosignalCalls is the number of puts per pair in the nosignal case:
// the first half without a signal, the second half with localSignal.
const moriNosignalCalls = 4

// TestMoriSdmaNosignal is the python "nosignal" case: lane p splits a 256 B
// transfer to peer p into four 64 B puts on one queue, the first half with
// signal=False, the second half with signal=True (python's default, which
// means localSignal), then quietQueue. Both halves land; the local slot
// [me × n + q] advanced by the number of signalling calls (two per peer);
// no remote slot and no other queue's slot moved.
func TestMoriSdmaNosignal(t *testing.T) {
	for _, c := range []struct{ ranks, q int }{{2, 0}, {2, 5}, {4, 1}} {
		t.Run(fmt.Sprintf("ranks%d/q%d", c.ranks, c.q), func(t *testing.T) {
			ranks, q := c.ranks, c.q
			const bytesPer = 256
			const piece = bytesPer / moriNosignalCalls
			for seed := uint64(1); seed <= seeds; seed++ {
				what := fmt.Sprintf("seed %d", seed)
				r := newRig(t, seed, rigOpts{ranks: ranks, queues: 8})
				n := r.dcs[0].Sdma.SdmaNumQueue
				require.Equal(t, 8, n, what)
				for me := 0; me < ranks; me++ {
					r.fillBytes(r.send[me], 0, patterned(me+1, uint64(ranks*bytesPer)))
					r.fillBytes(r.recv[me], 0, bytes.Repeat([]byte{0xff}, ranks*bytesPer))
				}
				var ks []*kernel.Kernel
				for me := 0; me < ranks; me++ {
					ks = append(ks, r.launch(me, 1, 64, func(t *kernel.Thread, sdma *cco.Sdma) {
						p := t.ThreadIdx()
						if p >= ranks || p == me {
							return
						}
						for i := 0; i < moriNosignalCalls; i++ {
							dst, src := uint64(me*bytesPer+i*piece), uint64(p*bytesPer+i*piece)
							if i < moriNosignalCalls/2 {
								sdma.Put(p, r.recv[me], dst, r.send[me], src, piece, q)
							} else {
								sdma.Put(p, r.recv[me], dst, r.send[me], src, piece, q, cco.LocalSignal)
							}
						}
						sdma.QuietQueue(p, q)
					}))
				}
				moriRunKernels(t, r, ks, what)
				for me := 0; me < ranks; me++ {
					for p := 0; p < ranks; p++ {
						if p == me {
							continue
						}
						want := patterned(me+1, uint64(ranks*bytesPer))[p*bytesPer : (p+1)*bytesPer]
						require.Equal(t, want, r.readBytes(r.recv[p], uint64(me*bytesPer), bytesPer), "%s: %d→%d: both halves land", what, me, p)
						rg := moriRing(t, r, me, p, q)
						// Two plain COPY units, then two COPY + local ATOMIC pairs.
						assert.Equal(t, uint64(moriNosignalCalls+moriNosignalCalls/2)*cco.Unit, rg.CommittedWptr(), "%s: %d→%d q%d: units rung", what, me, p, q)
						assert.Equal(t, rg.CommittedWptr(), rg.Rptr(), "%s: %d→%d: drained", what, me, p)
					}
					signalling := uint64(moriNosignalCalls/2) * uint64(ranks-1)
					for s := 0; s < ranks; s++ {
						for qq := 0; qq < n; qq++ {
							want := uint64(0)
							if s == me && qq == q {
								want = signalling
							}
							assert.Equal(t, want, r.signal(me, s, qq), "%s: rank %d slot [%d × %d + %d]", what, me, s, n, qq)
						}
					}
				}
			}
		})
	}
}
