package cco_test

// MORI SDMA acceptance scenarios test_sdma_put.cpp, test_sdma_get.cpp and
// test_sdma_block.cpp (docs/cco-semantics.md §12), plus the helpers the other
// mori_*_test.go files share. Every helper name starts with "mori" so it
// cannot clash with the other test files of the package.

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// moriA2ACount is COUNT of test_sdma_put/get/block: 256 floats, 1 KB per pair.
const moriA2ACount = 256

// moriA2AValue is the alltoall data pattern of §12: what rank sends to peer
// p at index i, send[p × COUNT + i] = rank × 1000 + p × 100 + i.
func moriA2AValue(rank, p, i int) float32 { return float32(rank*1000 + p*100 + i) }

// moriA2ASetup fills every rank's send window with the alltoall pattern for
// count floats per pair and presets every receive window to preset bytes.
func moriA2ASetup(r *rig, ranks, count int, preset byte) {
	for me := 0; me < ranks; me++ {
		r.fillF32(r.send[me], 0, ranks*count, func(i int) float32 { return moriA2AValue(me, i/count, i%count) })
		r.fillBytes(r.recv[me], 0, bytes.Repeat([]byte{preset}, ranks*count*4))
	}
}

// moriA2AExpect is what rank's receive slot from src must hold after an
// alltoall by put or get: recv[s × COUNT + i] == s × 1000 + rank × 100 + i.
func moriA2AExpect(src, rank, count int) []float32 {
	out := make([]float32, count)
	for i := range out {
		out[i] = moriA2AValue(src, rank, i)
	}
	return out
}

// moriCheckNoSignals checks that no signal slot of any rank moved: the
// alltoall tests post no signals, so an ATOMIC would be a stray packet.
func moriCheckNoSignals(t *testing.T, r *rig, ranks int, what string) {
	t.Helper()
	for me := 0; me < ranks; me++ {
		n := r.dcs[me].Sdma.SdmaNumQueue
		for s := 0; s < ranks; s++ {
			for q := 0; q < n; q++ {
				require.Zero(t, r.signal(me, s, q), "%s: rank %d slot [%d × %d + %d]", what, me, s, n, q)
			}
		}
	}
}

// moriReadF32 reads count floats at addr without failing the test, so that
// kernel code (which runs on simulator goroutines) can use it.
func moriReadF32(r *rig, addr uint64, count int) ([]float32, error) {
	buf := make([]byte, 4*count)
	if err := r.mem.Read(addr, buf); err != nil {
		return nil, err
	}
	out := make([]float32, count)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:]))
	}
	return out, nil
}

// moriNotes collects what kernel code observed, to be asserted after the
// run on the test goroutine. The simulator runs one actor at a time, so no
// lock is needed.
type moriNotes struct{ msgs []string }

// moriNotesMax bounds the notes kept, so a systematic failure stays readable.
const moriNotesMax = 8

func (n *moriNotes) addf(format string, args ...any) {
	switch {
	case len(n.msgs) < moriNotesMax:
		n.msgs = append(n.msgs, fmt.Sprintf(format, args...))
	case len(n.msgs) == moriNotesMax:
		n.msgs = append(n.msgs, "… (more notes dropped)")
	}
}

// moriRunKernels runs the simulator to completion and checks that every
// kernel finished without error.
func moriRunKernels(t *testing.T, r *rig, ks []*kernel.Kernel, what string) {
	t.Helper()
	require.NoError(t, r.s.Run(), what)
	for _, k := range ks {
		require.True(t, k.Done(), "%s: kernel %q not done", what, k.Config().Name)
		require.NoError(t, k.Err(), what)
	}
}

// moriRing returns the ring of the engine queue gpu → peer, q.
func moriRing(t *testing.T, r *rig, gpu, peer, q int) *ring.Ring {
	t.Helper()
	qu, err := r.node.Queue(gpu, peer, q)
	require.NoError(t, err)
	return qu.Ring()
}

// moriQueueKey names one queue: gpu → peer, q.
type moriQueueKey struct{ gpu, peer, q int }

// moriQueueMetrics gathers one counter of the node's registry once and
// returns its value per queue (labels gpu, peer, queue).
func moriQueueMetrics(t *testing.T, r *rig, name string) map[moriQueueKey]float64 {
	t.Helper()
	mfs, err := r.node.Registry().Gather()
	require.NoError(t, err)
	out := map[moriQueueKey]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			var k moriQueueKey
			for _, lp := range m.GetLabel() {
				v, err := strconv.Atoi(lp.GetValue())
				switch lp.GetName() {
				case "gpu":
					require.NoError(t, err)
					k.gpu = v
				case "peer":
					require.NoError(t, err)
					k.peer = v
				case "queue":
					require.NoError(t, err)
					k.q = v
				}
			}
			out[k] += m.GetCounter().GetValue()
		}
	}
	return out
}

// moriSum is the total of a per-queue metric.
func moriSum(m map[moriQueueKey]float64) float64 {
	sum := 0.0
	for _, v := range m {
		sum += v
	}
	return sum
}

// moriDoorbells is emud_sdma_doorbells_total per queue.
func moriDoorbells(t *testing.T, r *rig) map[moriQueueKey]float64 {
	t.Helper()
	return moriQueueMetrics(t, r, "emud_sdma_doorbells_total")
}

// moriHost runs steps on a host actor, one after another, and records the
// first error of a kernel wait: the host side of a MORI test binary, which
// brackets each kernel with a barrier.
func moriHost(r *rig, notes *moriNotes, steps ...func() []*kernel.Kernel) {
	r.s.Spawn("host", func(a *sim.Actor) {
		for i, step := range steps {
			if err := kernel.WaitAll(a, step()...); err != nil {
				notes.addf("host step %d: %v", i, err)
				return
			}
		}
	})
}

// moriScope is one of the kernel shapes of the alltoall tests.
type moriScope struct {
	name  string
	coop  cco.Coop
	block int
	// grid returns the number of blocks for ranks ranks.
	grid func(ranks int) int
	// peerOf is the peer thread t serves, before the peer == me check.
	peerOf func(t *kernel.Thread) int
}

var (
	// Thread <<<1,64>>>: lane p serves peer p.
	moriThreadScope = moriScope{name: "thread", coop: cco.CoopThread, block: 64,
		grid: func(int) int { return 1 }, peerOf: func(t *kernel.Thread) int { return t.ThreadIdx() }}
	// Warp <<<nranks,64>>>: block b serves peer b with ccoCoopWarp.
	moriWarpScope = moriScope{name: "warp", coop: cco.CoopWarp, block: 64,
		grid: func(n int) int { return n }, peerOf: func(t *kernel.Thread) int { return t.BlockIdx() }}
	// Block <<<nranks,128>>> (two waves): block b serves peer b with
	// ccoCoopBlock.
	moriBlockScope = moriScope{name: "block", coop: cco.CoopBlock, block: 128,
		grid: func(n int) int { return n }, peerOf: func(t *kernel.Thread) int { return t.BlockIdx() }}
)

// moriPoster reports whether thread t posts for its scope: the lane itself
// at thread scope, lane 0 of the wave at warp scope, thread 0 at block
// scope.
func moriPoster(t *kernel.Thread, c cco.Coop) bool {
	switch c {
	case cco.CoopWarp:
		return t.Lane() == 0
	case cco.CoopBlock:
		return t.ThreadIdx() == 0
	}
	return true
}

// moriA2APhase is one kernel of an alltoall test binary: a scope and a
// direction.
type moriA2APhase struct {
	sc  moriScope
	get bool
}

func (p moriA2APhase) String() string {
	if p.get {
		return "get/" + p.sc.name
	}
	return "put/" + p.sc.name
}

// moriA2AKernel is one rank's alltoall kernel of COUNT floats per pair by
// put or get in the phase's scope on queue 0, then quiet<Coop>(peer). Right
// after quiet returns, the posting lane reads the destination slot: quiet
// means the engine consumed the COPY, so the data must already be there.
func moriA2AKernel(r *rig, notes *moriNotes, ranks, me int, ph moriA2APhase) func(*kernel.Thread, *cco.Sdma) {
	const count = moriA2ACount
	const pairBytes = count * 4
	sc := ph.sc
	return func(t *kernel.Thread, sdma *cco.Sdma) {
		p := sc.peerOf(t)
		if p >= ranks || p == me {
			return
		}
		var check uint64 // where the data must be once quiet returns
		src, dst := me, p
		if ph.get {
			// lane p gets peer p's send[myRank × COUNT …] into recv[p × COUNT …]
			sdma.Get(p, r.recv[me], uint64(p*pairBytes), r.send[me], uint64(me*pairBytes), pairBytes, 0, sc.coop)
			check = r.recv[me].LocalPtr(uint64(p * pairBytes))
			src, dst = p, me
		} else {
			// lane p puts send[p × COUNT …] to peer p's slot myRank
			sdma.Put(p, r.recv[me], uint64(me*pairBytes), r.send[me], uint64(p*pairBytes), pairBytes, 0, sc.coop)
			check = r.recv[me].LsaPtr(p, uint64(me*pairBytes))
		}
		sdma.Quiet(p, sc.coop)
		if !moriPoster(t, sc.coop) {
			return
		}
		got, err := moriReadF32(r, check, count)
		if err != nil {
			notes.addf("%v rank %d peer %d: read after quiet: %v", ph, me, p, err)
		} else if !slices.Equal(got, moriA2AExpect(src, dst, count)) {
			notes.addf("%v rank %d peer %d: data not there when quiet returned: got %v…", ph, me, p, got[:4])
		}
	}
}

// moriAlltoall runs the phases of one alltoall test binary for nSeeds seeds:
// per phase the host presets every receive window to 0xff, launches the
// kernel on every rank and waits for all of them (the host barrier), then
// snapshots the receive windows. The snapshots are checked against the
// pattern afterwards, and so are the queues: each phase posts exactly one
// COPY unit and rings one doorbell on queue 0 of every pair (warp and block
// scope never split a transfer across queues, §5.1), and queue 1 of the
// default two stays unused.
func moriAlltoall(t *testing.T, ranks int, nSeeds uint64, phases ...moriA2APhase) {
	const count = moriA2ACount
	for seed := uint64(1); seed <= nSeeds; seed++ {
		what := fmt.Sprintf("ranks %d seed %d", ranks, seed)
		r := newRig(t, seed, rigOpts{ranks: ranks})
		moriA2ASetup(r, ranks, count, 0xff)
		notes := &moriNotes{}
		snaps := make([][][]byte, len(phases)) // [phase][rank] receive window
		var all []*kernel.Kernel
		var steps []func() []*kernel.Kernel
		for i, ph := range phases {
			steps = append(steps, func() []*kernel.Kernel {
				var ks []*kernel.Kernel
				for me := 0; me < ranks; me++ {
					if err := r.mem.Write(r.recv[me].LocalPtr(0), bytes.Repeat([]byte{0xff}, ranks*count*4)); err != nil {
						notes.addf("preset rank %d: %v", me, err)
					}
				}
				for me := 0; me < ranks; me++ {
					ks = append(ks, r.launch(me, ph.sc.grid(ranks), ph.sc.block, moriA2AKernel(r, notes, ranks, me, ph)))
				}
				all = append(all, ks...)
				return ks
			}, func() []*kernel.Kernel {
				for me := 0; me < ranks; me++ {
					b := make([]byte, ranks*count*4)
					if err := r.mem.Read(r.recv[me].LocalPtr(0), b); err != nil {
						notes.addf("snapshot rank %d: %v", me, err)
					}
					snaps[i] = append(snaps[i], b)
				}
				return nil
			})
		}
		moriHost(r, notes, steps...)
		moriRunKernels(t, r, nil, what)
		require.Empty(t, notes.msgs, what)
		require.Len(t, all, ranks*len(phases), what)
		for _, k := range all {
			require.True(t, k.Done(), what)
			require.NoError(t, k.Err(), what)
		}
		for i, ph := range phases {
			what := fmt.Sprintf("%s %v", what, ph)
			require.Len(t, snaps[i], ranks, what)
			for me := 0; me < ranks; me++ {
				for s := 0; s < ranks; s++ {
					got := snaps[i][me][s*count*4 : (s+1)*count*4]
					if s == me {
						require.Equal(t, bytes.Repeat([]byte{0xff}, count*4), got, "%s: rank %d's own slot must stay preset", what, me)
						continue
					}
					want := make([]byte, 0, count*4)
					for _, v := range moriA2AExpect(s, me, count) {
						want = binary.LittleEndian.AppendUint32(want, math.Float32bits(v))
					}
					require.Equal(t, want, got, "%s: rank %d's slot from %d", what, me, s)
				}
			}
		}
		moriCheckNoSignals(t, r, ranks, what)
		dbs := moriDoorbells(t, r)
		n := uint64(len(phases))
		assert.Equal(t, float64(n)*float64(ranks*(ranks-1)), moriSum(dbs), "%s: one doorbell per pair and phase in all", what)
		for me := 0; me < ranks; me++ {
			for p := 0; p < ranks; p++ {
				if p == me {
					continue
				}
				rg := moriRing(t, r, me, p, 0)
				assert.Equal(t, n*cco.Unit, rg.CommittedWptr(), "%s: queue %d→%d q0 committed", what, me, p)
				assert.Equal(t, n*cco.Unit, rg.Rptr(), "%s: queue %d→%d q0 rptr", what, me, p)
				assert.Zero(t, moriRing(t, r, me, p, 1).CachedWptr(), "%s: queue %d→%d q1 must stay unused", what, me, p)
				assert.Equal(t, float64(n), dbs[moriQueueKey{me, p, 0}], "%s: doorbells %d→%d q0", what, me, p)
			}
		}
		r.j.Close() // the next seed's node need not wait for the GC to free this one's rings
	}
}

// TestMoriSdmaPut is test_sdma_put.cpp: alltoall by put, thread <<<1,64>>>
// (lane p puts to peer p's slot myRank on queue 0, then quiet(p)), then warp
// <<<nranks,64>>> (block b handles peer b with ccoCoopWarp), for 2, 4 and 8
// ranks.
func TestMoriSdmaPut(t *testing.T) {
	for _, ranks := range []int{2, 4, 8} {
		t.Run(fmt.Sprintf("ranks%d", ranks), func(t *testing.T) {
			moriAlltoall(t, ranks, seeds,
				moriA2APhase{sc: moriThreadScope}, moriA2APhase{sc: moriWarpScope})
		})
	}
}

// TestMoriSdmaGet is test_sdma_get.cpp: alltoall by get (lane p gets peer
// p's send[myRank × COUNT …] into recv[p × COUNT …]), thread then warp, for
// 2, 4 and 8 ranks.
func TestMoriSdmaGet(t *testing.T) {
	for _, ranks := range []int{2, 4, 8} {
		t.Run(fmt.Sprintf("ranks%d", ranks), func(t *testing.T) {
			moriAlltoall(t, ranks, seeds,
				moriA2APhase{sc: moriThreadScope, get: true}, moriA2APhase{sc: moriWarpScope, get: true})
		})
	}
}

// TestMoriSdmaBlock is test_sdma_block.cpp: put then get with ccoCoopBlock,
// <<<nranks,128>>> (two waves per block), quiet<Block>, for 2, 4 and 8
// ranks.
func TestMoriSdmaBlock(t *testing.T) {
	for _, ranks := range []int{2, 4, 8} {
		t.Run(fmt.Sprintf("ranks%d", ranks), func(t *testing.T) {
			moriAlltoall(t, ranks, seeds,
				moriA2APhase{sc: moriBlockScope}, moriA2APhase{sc: moriBlockScope, get: true})
		})
	}
}
