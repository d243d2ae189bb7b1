package cco_test

// MORI SDMA acceptance scenario test_sdma_warp_issue.cpp (docs/cco-semantics.md
// §6 and §12): several lanes of one wave issue thread-scope puts of a 256 B
// chunk each; every case ends with quiet<Block> and checks each chunk.

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const moriWarpChunk = 256

// moriWarpSlots is the number of chunk slots checked: every case uses chunk
// indices below 64.
const moriWarpSlots = 64

// moriWarpCase is one warp-issue case: which threads of the single block
// put, which chunk and queue each uses, and what the queues must show.
type moriWarpCase struct {
	name   string
	queues int // reqs.SdmaQueueCount; 0 = default (2)
	block  int // threads in the one block
	active func(tid int) bool
	chunk  func(tid int) int          // chunk index of an active thread
	queue  func(tid, lane, n int) int // queueId of an active thread
	opts   []cco.Option
	// nSeeds overrides seeds (0 = seeds).
	nSeeds uint64
	// committed is the bytes rung on each queue toward the peer afterwards:
	// one COPY unit per active lane, however they were grouped.
	committed func(n int) map[int]uint64
	// doorbells is the number of doorbells rung on each queue: one per
	// group post.
	doorbells func(n int) map[int]float64
}

// nActive counts the case's active threads.
func (c moriWarpCase) nActive() int {
	n := 0
	for tid := 0; tid < c.block; tid++ {
		if c.active(tid) {
			n++
		}
	}
	return n
}

// moriWarpLanes makes threads 0 … lanes−1 the active ones.
func moriWarpLanes(lanes int) func(int) bool { return func(tid int) bool { return tid < lanes } }

// moriWarpOne expects v bytes rung on queue q and none elsewhere.
func moriWarpOne(q int, v uint64) func(int) map[int]uint64 {
	return func(int) map[int]uint64 { return map[int]uint64{q: v} }
}

// moriWarpBells expects v doorbells on queue q and none elsewhere.
func moriWarpBells(q int, v float64) func(int) map[int]float64 {
	return func(int) map[int]float64 { return map[int]float64{q: v} }
}

func moriWarpCases() []moriWarpCase {
	var cs []moriWarpCase
	self := func(tid int) int { return tid }
	q0 := func(int, int, int) int { return 0 }
	// same-queue: all active lanes put to the same peer and queue with the
	// default Independent mode. Before grouping this shape deadlocked; now
	// the lanes form one group: one reservation, one doorbell (§6 step 5).
	for _, lanes := range []int{2, 4, 16, 64} {
		cs = append(cs, moriWarpCase{name: fmt.Sprintf("same-queue/%d", lanes), block: 64,
			active: moriWarpLanes(lanes), chunk: self, queue: q0,
			committed: moriWarpOne(0, uint64(lanes)*cco.Unit), doorbells: moriWarpBells(0, 1)})
	}
	// gapped: 16 active lanes at stride 4; grouping uses the active set.
	cs = append(cs, moriWarpCase{name: "gapped", block: 64,
		active: func(tid int) bool { return tid%4 == 0 }, chunk: self, queue: q0,
		committed: moriWarpOne(0, 16*cco.Unit), doorbells: moriWarpBells(0, 1)})
	// uniform: the SameQueue path, one reservation and one doorbell.
	for _, lanes := range []int{1, 2, 16, 64} {
		cs = append(cs, moriWarpCase{name: fmt.Sprintf("uniform/%d", lanes), block: 64,
			active: moriWarpLanes(lanes), chunk: self, queue: q0, opts: []cco.Option{cco.SdmaThreadSameQueue},
			committed: moriWarpOne(0, uint64(lanes)*cco.Unit), doorbells: moriWarpBells(0, 1)})
	}
	// mixed: lane i uses queue i % n with n = 8, several groups per wave.
	// With 4 lanes no key is shared, so each lane posts solo; otherwise one
	// group per queue. Either way one doorbell per queue used.
	for _, lanes := range []int{4, 16, 64} {
		lanes := lanes
		cs = append(cs, moriWarpCase{name: fmt.Sprintf("mixed/%d", lanes), queues: 8, block: 64, nSeeds: seeds,
			active: moriWarpLanes(lanes), chunk: self, queue: func(tid, lane, n int) int { return lane % n },
			committed: func(n int) map[int]uint64 {
				m := map[int]uint64{}
				for i := 0; i < lanes; i++ {
					m[i%n] += cco.Unit
				}
				return m
			},
			doorbells: func(n int) map[int]float64 {
				m := map[int]float64{}
				for i := 0; i < lanes && i < n; i++ {
					m[i] = 1
				}
				return m
			}})
	}
	// cross-warp: lane 0 of each of w waves posts to queue 0, so the commit
	// chain orders the waves' posts; chunk = wave index.
	for _, cw := range []struct {
		waves  int
		nSeeds uint64
	}{{2, seeds}, {8, seeds}} {
		waves := cw.waves
		cs = append(cs, moriWarpCase{name: fmt.Sprintf("cross-warp/%d", waves), block: 64 * waves, nSeeds: cw.nSeeds,
			active: func(tid int) bool { return tid%64 == 0 }, chunk: func(tid int) int { return tid / 64 }, queue: q0,
			committed: moriWarpOne(0, uint64(waves)*cco.Unit), doorbells: moriWarpBells(0, float64(waves))})
	}
	// legacy per-lane commit chain on distinct queues: lane i on queue i,
	// every lane posts solo and rings its own doorbell; this must work.
	for _, lanes := range []int{8} {
		lanes := lanes
		cs = append(cs, moriWarpCase{name: fmt.Sprintf("legacy-distinct/%d", lanes), queues: 8, block: 64, nSeeds: seeds,
			active: moriWarpLanes(lanes), chunk: self, queue: func(tid, lane, n int) int { return lane },
			opts: []cco.Option{cco.SdmaThreadLegacyPerLane},
			committed: func(int) map[int]uint64 {
				m := map[int]uint64{}
				for i := 0; i < lanes; i++ {
					m[i] = cco.Unit
				}
				return m
			},
			doorbells: func(int) map[int]float64 {
				m := map[int]float64{}
				for i := 0; i < lanes; i++ {
					m[i] = 1
				}
				return m
			}})
	}
	return cs
}

// moriWarpRanks: every rank of a 2-rank job runs the case toward the other.
const moriWarpRanks = 2

// moriWarpLaunch fills the windows and launches the case's kernel on every
// rank toward peer (me + 1) % ranks: each active thread puts its chunk,
// then every thread calls quiet<Block>(peer).
func moriWarpLaunch(r *rig, c moriWarpCase) []*kernel.Kernel {
	const ranks = moriWarpRanks
	const nChunks = moriWarpSlots
	var ks []*kernel.Kernel
	for me := 0; me < ranks; me++ {
		r.fillBytes(r.send[me], 0, patterned(me+1, uint64(nChunks*moriWarpChunk)))
		r.fillBytes(r.recv[me], 0, bytes.Repeat([]byte{0xff}, nChunks*moriWarpChunk))
	}
	for me := 0; me < ranks; me++ {
		peer := (me + 1) % ranks
		ks = append(ks, r.launch(me, 1, c.block, func(t *kernel.Thread, sdma *cco.Sdma) {
			if tid := t.ThreadIdx(); c.active(tid) {
				off := uint64(c.chunk(tid) * moriWarpChunk)
				q := c.queue(tid, t.Lane(), sdma.DevComm().Sdma.SdmaNumQueue)
				sdma.Put(peer, r.recv[me], off, r.send[me], off, moriWarpChunk, q, c.opts...)
			}
			sdma.Quiet(peer, cco.CoopBlock)
		}))
	}
	return ks
}

// TestMoriSdmaWarpIssue is test_sdma_warp_issue.cpp: chunk 256 B, queue 0
// and Independent mode unless noted, quiet<Block>, every chunk checked (the
// chunks of inactive threads must stay preset). It also checks how the
// lanes were grouped: the bytes rung and the doorbells on each queue.
func TestMoriSdmaWarpIssue(t *testing.T) {
	const ranks = moriWarpRanks
	for _, c := range moriWarpCases() {
		t.Run(c.name, func(t *testing.T) {
			nSeeds := c.nSeeds
			if nSeeds == 0 {
				nSeeds = seeds
			}
			for seed := uint64(1); seed <= nSeeds; seed++ {
				what := fmt.Sprintf("seed %d", seed)
				r := newRig(t, seed, rigOpts{ranks: ranks, queues: c.queues})
				n := r.dcs[0].Sdma.SdmaNumQueue
				ks := moriWarpLaunch(r, c)
				moriRunKernels(t, r, ks, what)
				dbs := moriDoorbells(t, r)
				wantC, wantD := c.committed(n), c.doorbells(n)
				for me := 0; me < ranks; me++ {
					src, peer := me, (me+1)%ranks
					sent := patterned(src+1, moriWarpSlots*moriWarpChunk)
					got := r.readBytes(r.recv[peer], 0, moriWarpSlots*moriWarpChunk)
					landed := map[int]bool{}
					for tid := 0; tid < c.block; tid++ {
						if c.active(tid) {
							landed[c.chunk(tid)] = true
						}
					}
					require.Len(t, landed, c.nActive(), "%s: distinct chunk per active thread", what)
					for k := 0; k < moriWarpSlots; k++ {
						lo, hi := k*moriWarpChunk, (k+1)*moriWarpChunk
						if landed[k] {
							require.Equal(t, sent[lo:hi], got[lo:hi], "%s: rank %d → %d chunk %d", what, src, peer, k)
						} else {
							require.Equal(t, bytes.Repeat([]byte{0xff}, moriWarpChunk), got[lo:hi], "%s: rank %d → %d chunk %d must stay preset", what, src, peer, k)
						}
					}
					for q := 0; q < n; q++ {
						rg := moriRing(t, r, me, peer, q)
						assert.Equal(t, wantC[q], rg.CommittedWptr(), "%s: queue %d→%d q%d: bytes rung", what, me, peer, q)
						assert.Equal(t, wantC[q], rg.CachedWptr(), "%s: queue %d→%d q%d: bytes reserved", what, me, peer, q)
						assert.Equal(t, wantC[q], rg.Rptr(), "%s: queue %d→%d q%d: drained", what, me, peer, q)
						assert.Equal(t, wantD[q], dbs[moriQueueKey{me, peer, q}], "%s: queue %d→%d q%d: doorbells", what, me, peer, q)
					}
				}
				moriCheckNoSignals(t, r, ranks, what)
			}
		})
	}
}

// TestMoriSdmaWarpIssueLegacyDeadlock is the regression behind the
// same-queue case: with the pre-grouping per-lane commit chain
// (SdmaThreadLegacyPerLane), two or more lanes of one wave on one queue
// deadlock (§6: the lane that must publish committedWptr can never leave its
// spin while lanes in lock-step wait on it). The run must end in a
// *sim.HangError whose report names the commit chain, and nothing may be
// rung on the queue.
func TestMoriSdmaWarpIssueLegacyDeadlock(t *testing.T) {
	const ranks = moriWarpRanks
	for _, lanes := range []int{2, 16, 64} {
		t.Run(fmt.Sprintf("lanes%d", lanes), func(t *testing.T) {
			c := moriWarpCase{block: 64, active: moriWarpLanes(lanes), chunk: func(tid int) int { return tid },
				queue: func(int, int, int) int { return 0 }, opts: []cco.Option{cco.SdmaThreadLegacyPerLane}}
			for seed := uint64(1); seed <= seeds; seed++ {
				what := fmt.Sprintf("seed %d", seed)
				r := newRig(t, seed, rigOpts{ranks: ranks})
				ks := moriWarpLaunch(r, c)
				err := r.s.Run()
				require.Error(t, err, what)
				var hang *sim.HangError
				require.True(t, errors.As(err, &hang), "%s: want a *sim.HangError, got %T: %v", what, err, err)
				assert.Contains(t, hang.Text(), "commit chain", "%s: the hang report must name the commit chain", what)
				for me, k := range ks {
					assert.False(t, k.Done(), "%s: rank %d's kernel cannot finish", what, me)
					peer := (me + 1) % ranks
					rg := moriRing(t, r, me, peer, 0)
					assert.Equal(t, uint64(lanes)*cco.Unit, rg.CachedWptr(), "%s: queue %d→%d: every lane reserved", what, me, peer)
					assert.Zero(t, rg.CommittedWptr(), "%s: queue %d→%d: nothing rung", what, me, peer)
					assert.Equal(t, bytes.Repeat([]byte{0xff}, lanes*moriWarpChunk), r.readBytes(r.recv[peer], 0, uint64(lanes*moriWarpChunk)),
						"%s: rank %d → %d: nothing landed", what, me, peer)
				}
			}
		})
	}
}
