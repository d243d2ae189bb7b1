package cco_test

// The engine-side calls of the seed document (docs/cco-semantics.md §11),
// chunking (§9), the options rules and SDMA-off no-ops (§2.3).

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// esideUnit decodes the packet at ptr of queue (gpu, peer, q)'s ring, reading
// ringPackets decodes every packet of rg up to its read pointer, NOPs
// left out.
func ringPackets(t *testing.T, rg *ring.Ring) []ring.Packet {
	t.Helper()
	var out []ring.Packet
	var p ring.Packet
	for at := uint64(0); at < rg.Rptr(); {
		n, err := rg.DecodeAt(&p, at, rg.Rptr()-at)
		require.NoError(t, err)
		if p.Kind != ring.KindNop {
			out = append(out, p)
		}
		at += uint64(n)
	}
	return out
}

// ringKinds is the kinds of ringPackets.
func ringKinds(t *testing.T, rg *ring.Ring) []ring.Kind {
	t.Helper()
	var kinds []ring.Kind
	for _, p := range ringPackets(t, rg) {
		kinds = append(kinds, p.Kind)
	}
	return kinds
}

// at most avail bytes.
func esideUnit(t *testing.T, r *rig, gpu, peer, q int, ptr, avail uint64) ring.Packet {
	t.Helper()
	qu, err := r.node.Queue(gpu, peer, q)
	require.NoError(t, err)
	var p ring.Packet
	_, err = qu.Ring().DecodeAt(&p, ptr, avail)
	require.NoError(t, err, "queue (%d, %d, %d) at %#x", gpu, peer, q, ptr)
	return p
}

func esideRing(t *testing.T, r *rig, gpu, peer, q int) *ring.Ring {
	t.Helper()
	qu, err := r.node.Queue(gpu, peer, q)
	require.NoError(t, err)
	return qu.Ring()
}

// esideSlot is the address of rank's slot signalBuf[src × n + q].
func esideSlot(t *testing.T, r *rig, rank, src, q int) uint64 {
	t.Helper()
	a, err := r.dcs[rank].SignalPool().Slot(src, q)
	require.NoError(t, err)
	return a
}

// esidePool asserts every slot of every rank: want(rank, src, q).
func esidePool(t *testing.T, r *rig, ranks int, want func(rank, src, q int) uint64, what string) {
	t.Helper()
	n := r.dcs[0].Sdma.SdmaNumQueue
	for rank := 0; rank < ranks; rank++ {
		for src := 0; src < ranks; src++ {
			for q := 0; q < n; q++ {
				assert.Equal(t, want(rank, src, q), r.signal(rank, src, q), "%s: rank %d slot [%d, %d]", what, rank, src, q)
			}
		}
	}
}

// esidePoll asserts a POLL_REGMEM unit as CCO's engine-side waits write it:
// memory poll, retry forever, interval 4, and 8 B of zero (NOP) fill.
func esidePoll(t *testing.T, r *rig, gpu, peer, q int, ptr uint64, addr uint64, ref, mask uint32, f ring.CompareFunc, what string) {
	t.Helper()
	p := esideUnit(t, r, gpu, peer, q, ptr, cco.Unit)
	if !assert.Equal(t, ring.KindPoll, p.Kind, "%s: unit at %#x", what, ptr) {
		return
	}
	assert.True(t, p.MemPoll, "%s: a memory poll", what)
	assert.Equal(t, f, p.Func, "%s: poll function", what)
	assert.Equal(t, addr, p.Addr, "%s: poll address", what)
	assert.Equal(t, ref, p.Ref, "%s: poll reference", what)
	assert.Equal(t, mask, p.Mask, "%s: poll mask", what)
	assert.Equal(t, uint16(ring.RetryForever), p.Retry, "%s: retry 0xFFF (forever)", what)
	assert.Equal(t, uint16(4), p.Interval, "%s: interval 4 as ROCr", what)
	tail := make([]byte, 8)
	esideRing(t, r, gpu, peer, q).Read(ptr+24, tail)
	assert.Equal(t, make([]byte, 8), tail, "%s: 8 B of NOP fill after the 24 B poll", what)
}

func esideCopy(t *testing.T, r *rig, gpu, peer, q int, ptr, dst, src, n uint64, what string) {
	t.Helper()
	p := esideUnit(t, r, gpu, peer, q, ptr, cco.Unit)
	if !assert.Equal(t, ring.KindCopy, p.Kind, "%s: unit at %#x", what, ptr) {
		return
	}
	assert.Equal(t, dst, p.Dst, "%s: copy destination", what)
	assert.Equal(t, src, p.Src, "%s: copy source", what)
	assert.Equal(t, n, p.CopyBytes(), "%s: copy bytes", what)
}

func esideAtomic(t *testing.T, r *rig, gpu, peer, q int, ptr, addr uint64, what string) {
	t.Helper()
	p := esideUnit(t, r, gpu, peer, q, ptr, cco.Unit)
	if !assert.Equal(t, ring.KindAtomic, p.Kind, "%s: unit at %#x", what, ptr) {
		return
	}
	assert.Equal(t, ring.AtomicOpAdd64, p.AtomicOp, "%s", what)
	assert.Equal(t, addr, p.Addr, "%s: signal slot", what)
	assert.Equal(t, uint64(1), p.Data, "%s: +1", what)
}

func esideFF(n uint64) []byte { return bytes.Repeat([]byte{0xff}, int(n)) }

// ---- relay chain: postWaitSignal + put ----

func TestEngineSideRelayChain(t *testing.T) {
	const (
		bytes  = 4096
		hopQ   = 0 // rank 0's put
		relayQ = 1 // every relay's put
	)
	cases := []struct {
		name     string
		ranks    int
		expected uint64
	}{
		{"4 ranks", 4, 1},
		{"8 ranks", 8, 1},
		// §11.2: the engine compares low32(expected); 2^32+1 waits for 1.
		{"4 ranks, expected 2^32+1 truncated to 1", 4, 1<<32 | 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= seeds; seed++ {
				esideRelay(t, seed, tc.ranks, tc.expected, bytes, hopQ, relayQ)
			}
		})
	}
}

func esideRelay(t *testing.T, seed uint64, ranks int, expected uint64, n uint64, hopQ, relayQ int) {
	what := fmt.Sprintf("seed %d ranks %d", seed, ranks)
	r := newRig(t, seed, rigOpts{ranks: ranks})
	data := patterned(int(seed), n)
	r.fillBytes(r.send[0], 0, data)
	for me := 0; me < ranks; me++ {
		r.fillBytes(r.recv[me], 0, esideFF(n))
	}
	// sigQ(r) is the queue of the hop that reaches rank r.
	sigQ := func(r int) int {
		if r == 1 {
			return hopQ
		}
		return relayQ
	}
	var ks []*kernel.Kernel
	exited := make([]bool, ranks)
	ks = append(ks, r.launch(0, 1, 1, func(t *kernel.Thread, s *cco.Sdma) {
		s.Put(1, r.recv[0], 0, r.send[0], 0, n, hopQ, cco.RemoteSignal)
		exited[0] = true
	}))
	for me := 1; me < ranks; me++ {
		next, prev := (me+1)%ranks, me-1
		ks = append(ks, r.launch(me, 1, 1, func(t *kernel.Thread, s *cco.Sdma) {
			s.PostWaitSignal(next, relayQ, prev, sigQ(me), expected)
			s.Put(next, r.recv[me], 0, r.recv[me], 0, n, relayQ, cco.RemoteSignal)
			exited[me] = true // no CU waits: the engine forwards
		}))
	}
	var atExit []byte
	var exitSignal uint64
	r.s.Spawn("host", func(a *sim.Actor) {
		assert.NoError(t, kernel.WaitAll(a, ks...), what)
		// Every kernel has returned; the chain is still in flight: rank
		// 0's own receive buffer (the last hop) has not been written.
		atExit = msigRead(r, r.recv[0].LocalPtr(0), n)
		exitSignal = msigLoad64(r, msigSlot(r, 0, ranks-1, relayQ))
	})
	require.NoError(t, r.s.Run(), what)
	assert.Equal(t, esideFF(n), atExit, "%s: the kernels exited before the chain ran", what)
	assert.Equal(t, uint64(0), exitSignal, "%s: the last hop's signal before the chain ran", what)
	for me := 0; me < ranks; me++ {
		assert.True(t, exited[me], "%s: rank %d's kernel returned", what, me)
		assert.True(t, bytes.Equal(data, r.readBytes(r.recv[me], 0, n)), "%s: rank %d holds rank 0's data", what, me)
	}
	// Each rank got exactly one hop, from its predecessor on that hop's
	// queue; nothing else was signalled.
	esidePool(t, r, ranks, func(rank, src, q int) uint64 {
		if src == (rank-1+ranks)%ranks && q == sigQ(rank) {
			return 1
		}
		return 0
	}, what)
	// Layout of each relay queue: one POLL unit (GE on low32(expected) of
	// the previous hop's slot), then the COPY and the remote ATOMIC.
	for me := 1; me < ranks; me++ {
		next := (me + 1) % ranks
		w := fmt.Sprintf("%s: relay rank %d", what, me)
		rg := esideRing(t, r, me, next, relayQ)
		assert.Equal(t, uint64(3*cco.Unit), rg.CachedWptr(), "%s: units posted", w)
		esidePoll(t, r, me, next, relayQ, 0, esideSlot(t, r, me, me-1, sigQ(me)), uint32(expected), 0xFFFFFFFF, cco.SdmaCmpGe, w)
		esideCopy(t, r, me, next, relayQ, cco.Unit, r.recv[me].LsaPtr(next, 0), r.recv[me].LocalPtr(0), n, w)
		esideAtomic(t, r, me, next, relayQ, 2*cco.Unit, esideSlot(t, r, next, me, relayQ), w)
	}
}

// ---- postWaitMem: a queue parked on a local flag ----

func TestEngineSidePostWaitMem(t *testing.T) {
	const (
		n       = 4096
		q       = 1
		flagOff = 32 << 10 // in rank 0's receive window, which receives nothing
		settle  = 50 * sim.Microsecond
	)
	cases := []struct {
		name    string
		initial uint32   // the flag before the run
		value   uint32   // postWaitMem's value
		cmp     cco.Cmp  // and compare
		mask    uint32   // and mask
		misses  []uint32 // stores that must not release the queue
		hit     uint32   // the store that releases it
		agg     bool     // postWaitMem<Aggregate> + put<Aggregate> + commit
	}{
		{name: "eq", value: 1, cmp: cco.SdmaCmpEq, mask: 0xFFFFFFFF, hit: 1},
		{name: "eq after wrong values", value: 7, cmp: cco.SdmaCmpEq, mask: 0xFFFFFFFF, misses: []uint32{3, 8}, hit: 7},
		{name: "eq aggregate", value: 1, cmp: cco.SdmaCmpEq, mask: 0xFFFFFFFF, misses: []uint32{2}, hit: 1, agg: true},
		{name: "masked eq", value: 0x10, cmp: cco.SdmaCmpEq, mask: 0xF0, misses: []uint32{0x0F, 0x20}, hit: 0x1F},
		{name: "ge", value: 5, cmp: cco.SdmaCmpGe, mask: 0xFFFFFFFF, misses: []uint32{4}, hit: 5},
		{name: "gt unsigned", value: 9, cmp: cco.SdmaCmpGt, mask: 0xFFFFFFFF, misses: []uint32{9}, hit: 0x80000000},
		{name: "lt", initial: 100, value: 10, cmp: cco.SdmaCmpLt, mask: 0xFFFFFFFF, misses: []uint32{10, 0xFFFFFFFF}, hit: 9},
		{name: "ne", initial: 3, value: 3, cmp: cco.SdmaCmpNe, mask: 0xFFFFFFFF, hit: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= seeds; seed++ {
				what := fmt.Sprintf("seed %d", seed)
				r := newRig(t, seed, rigOpts{ranks: 2})
				data := patterned(int(seed)+7, n)
				r.fillBytes(r.send[0], 0, data)
				r.fillBytes(r.recv[1], 0, esideFF(n))
				flag := r.recv[0].LocalPtr(flagOff)
				require.NoError(t, r.mem.Store32(flag, tc.initial))
				var o []cco.Option
				if tc.agg {
					o = append(o, cco.SdmaOptFlagsAggregate)
				}
				k := r.launch(0, 1, 1, func(t *kernel.Thread, s *cco.Sdma) {
					s.PostWaitMem(1, q, r.recv[0], flagOff, tc.value, tc.cmp, tc.mask, o...)
					s.Put(1, r.recv[1], 0, r.send[0], 0, n, q, o...)
					if tc.agg {
						s.Commit(1, q)
					}
				})
				var early [][]byte
				var earlyRptr []uint64
				var storeErr []error
				r.s.Spawn("cu", func(a *sim.Actor) {
					storeErr = append(storeErr, k.Wait(a))
					for _, v := range append([]uint32{tc.initial}, tc.misses...) {
						if v != tc.initial {
							storeErr = append(storeErr, r.mem.Store32(flag, v))
						}
						a.Sleep(settle)
						early = append(early, msigRead(r, r.recv[1].LocalPtr(0), n))
						earlyRptr = append(earlyRptr, esideRing(t, r, 0, 1, q).Rptr())
					}
					storeErr = append(storeErr, r.mem.Store32(flag, tc.hit))
				})
				require.NoError(t, r.s.Run(), what)
				for _, err := range storeErr {
					require.NoError(t, err, what)
				}
				for i, b := range early {
					assert.Equal(t, esideFF(n), b, "%s: data landed while the flag did not match (step %d)", what, i)
					assert.Equal(t, uint64(0), earlyRptr[i], "%s: the queue is parked on its POLL (step %d)", what, i)
				}
				assert.Equal(t, data, r.readBytes(r.recv[1], 0, n), "%s: data after the flag was set", what)
				rg := esideRing(t, r, 0, 1, q)
				assert.Equal(t, uint64(2*cco.Unit), rg.CachedWptr(), "%s: [POLL][COPY]", what)
				assert.Equal(t, rg.CachedWptr(), rg.Rptr(), "%s: the queue drained", what)
				esidePoll(t, r, 0, 1, q, 0, flag, tc.value, tc.mask, tc.cmp, what)
				esideCopy(t, r, 0, 1, q, cco.Unit, r.recv[1].LsaPtr(1, 0), r.send[0].LocalPtr(0), n, what)
			}
		})
	}
}

// ---- epoch-gated alltoall with postWaitMemPutPtr ----

func TestEngineSideEpochAlltoall(t *testing.T) {
	const (
		ranks    = 4
		n        = 1024
		dataQ    = 0
		flagQ    = 1        // announcing puts
		readyOff = 16 << 10 // ready[p] in the receive window
		epochOff = 32 << 10 // the epoch word in the send window, source of announcing puts
		stagger  = 7 * sim.Microsecond
	)
	for _, announce := range []string{"store", "put"} {
		t.Run("announce by "+announce, func(t *testing.T) {
			for seed := uint64(1); seed <= seeds; seed++ {
				what := fmt.Sprintf("seed %d", seed)
				r := newRig(t, seed, rigOpts{ranks: ranks})
				tag := func(epoch, from, to int) int { return epoch*64 + from*8 + to }
				// ok[epoch-1][me][p]: rank me's lane p saw p's data for the
				// epoch, right after its signal, with no barrier.
				var ok [2][ranks][ranks]bool
				var errs []error
				rng := r.s.Rand(1)
				r.s.Spawn("host", func(a *sim.Actor) {
					for epoch := 1; epoch <= 2; epoch++ {
						e := uint32(epoch)
						for me := 0; me < ranks; me++ {
							for p := 0; p < ranks; p++ {
								errs = append(errs, r.mem.Write(r.send[me].LocalPtr(uint64(p*n)), patterned(tag(epoch, me, p), n)))
							}
							errs = append(errs, r.mem.Store32(r.send[me].LocalPtr(epochOff), e))
						}
						// Ranks start in a seeded order, apart: a rank's copy
						// to p must wait until p has started and announced.
						var ks []*kernel.Kernel
						for _, me := range rng.Perm(ranks) {
							k, err := msigLaunch(r, me, 1, ranks, fmt.Sprintf("epoch%d", epoch), func(t *kernel.Thread, s *cco.Sdma) {
								p := t.ThreadIdx()
								if p >= ranks || p == me {
									return
								}
								// My slot for p's data is about to be
								// rewritten: clear it, then tell p.
								m := cco.NewMem(t, s.DevComm())
								m.Write(r.recv[me].LocalPtr(uint64(p*n)), esideFF(n))
								if announce == "store" {
									// A release store: p's POLL on it orders p's COPY
									// after the clearing above.
									m.StoreRelease32(r.recv[me].LsaPtr(p, readyOff+uint64(4*me)), e)
								} else {
									s.Put(p, r.recv[me], readyOff+uint64(4*me), r.send[me], epochOff, 4, flagQ)
								}
								s.PostWaitMemPutPtr(p, dataQ, r.recv[me], readyOff+uint64(4*p), e, cco.SdmaCmpEq, 0xFFFFFFFF,
									r.recv[me].LsaPtr(p, uint64(me*n)), r.send[me].LocalPtr(uint64(p*n)), n, cco.RemoteSignal)
								s.WaitSignal(p, dataQ, uint64(epoch))
								ok[epoch-1][me][p] = bytes.Equal(patterned(tag(epoch, p, me), n), laneRead(t, r, r.recv[me].LocalPtr(uint64(p*n)), n))
							})
							errs = append(errs, err)
							if k != nil {
								ks = append(ks, k)
							}
							a.Sleep(stagger)
						}
						errs = append(errs, kernel.WaitAll(a, ks...))
					}
				})
				require.NoError(t, r.s.Run(), what)
				for _, err := range errs {
					require.NoError(t, err, what)
				}
				for epoch := 1; epoch <= 2; epoch++ {
					for me := 0; me < ranks; me++ {
						for p := 0; p < ranks; p++ {
							if p == me {
								continue
							}
							assert.True(t, ok[epoch-1][me][p], "%s epoch %d: rank %d's data from %d", what, epoch, me, p)
						}
					}
				}
				esidePool(t, r, ranks, func(rank, src, q int) uint64 {
					if src != rank && q == dataQ {
						return 2 // one remote signal per epoch per pair
					}
					return 0
				}, what)
				// Each (me, p) queue holds two posts of [POLL][COPY][ATOMIC
				// remote], each in one reservation and rung by one doorbell.
				for me := 0; me < ranks; me++ {
					for p := 0; p < ranks; p++ {
						if p == me {
							continue
						}
						w := fmt.Sprintf("%s: rank %d → %d", what, me, p)
						rg := esideRing(t, r, me, p, dataQ)
						assert.Equal(t, uint64(6*cco.Unit), rg.CachedWptr(), "%s: units posted", w)
						for epoch := 1; epoch <= 2; epoch++ {
							base := uint64(3*(epoch-1)) * cco.Unit
							we := fmt.Sprintf("%s epoch %d", w, epoch)
							esidePoll(t, r, me, p, dataQ, base, r.recv[me].LocalPtr(readyOff+uint64(4*p)), uint32(epoch), 0xFFFFFFFF, cco.SdmaCmpEq, we)
							esideCopy(t, r, me, p, dataQ, base+cco.Unit, r.recv[me].LsaPtr(p, uint64(me*n)), r.send[me].LocalPtr(uint64(p*n)), n, we)
							esideAtomic(t, r, me, p, dataQ, base+2*cco.Unit, esideSlot(t, r, p, me, dataQ), we)
						}
					}
				}
				posts := 2 * ranks * (ranks - 1)
				if announce == "put" {
					posts *= 2
				}
				assert.Equal(t, float64(posts), r.metric("emud_sdma_doorbells_total"), "%s: one doorbell per post", what)
			}
		})
	}
}

// bytes == 0: wait + signals only; with no signal, nothing at all.
func TestEngineSidePostWaitMemPutPtrZeroBytes(t *testing.T) {
	const (
		q       = 1
		flagOff = 32 << 10
		settle  = 50 * sim.Microsecond
	)
	cases := []struct {
		name          string
		local, remote bool
	}{
		{"no signal", false, false},
		{"local", true, false},
		{"remote", false, true},
		{"local and remote", true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= seeds; seed++ {
				what := fmt.Sprintf("seed %d", seed)
				r := newRig(t, seed, rigOpts{ranks: 2})
				r.fillBytes(r.send[0], 0, patterned(int(seed), 64))
				r.fillBytes(r.recv[1], 0, esideFF(64))
				var o []cco.Option
				sig := 0
				if tc.local {
					o = append(o, cco.LocalSignal)
					sig++
				}
				if tc.remote {
					o = append(o, cco.RemoteSignal)
					sig++
				}
				flag := r.recv[0].LocalPtr(flagOff)
				k := r.launch(0, 1, 1, func(t *kernel.Thread, s *cco.Sdma) {
					s.PostWaitMemPutPtr(1, q, r.recv[0], flagOff, 1, cco.SdmaCmpEq, 0xFFFFFFFF,
						r.recv[1].LsaPtr(1, 0), r.send[0].LocalPtr(0), 0, o...)
				})
				var early [2]uint64
				var errs []error
				r.s.Spawn("cu", func(a *sim.Actor) {
					errs = append(errs, k.Wait(a))
					a.Sleep(settle)
					early = [2]uint64{msigLoad64(r, msigSlot(r, 0, 0, q)), msigLoad64(r, msigSlot(r, 1, 0, q))}
					errs = append(errs, r.mem.Store32(flag, 1))
				})
				require.NoError(t, r.s.Run(), what)
				for _, err := range errs {
					require.NoError(t, err, what)
				}
				assert.Equal(t, [2]uint64{}, early, "%s: signals before the flag was set", what)
				rg := esideRing(t, r, 0, 1, q)
				assert.Equal(t, 0.0, r.metric("emud_sdma_bytes_copied_total"), "%s: no copy", what)
				assert.Equal(t, esideFF(64), r.readBytes(r.recv[1], 0, 64), "%s: nothing lands", what)
				if sig == 0 {
					assert.Equal(t, uint64(0), rg.CachedWptr(), "%s: nothing posted", what)
					assert.Equal(t, 0.0, r.metric("emud_sdma_doorbells_total"), "%s: no doorbell", what)
				} else {
					assert.Equal(t, uint64(1+sig)*cco.Unit, rg.CachedWptr(), "%s: [POLL] and the signals", what)
					assert.Equal(t, 1.0, r.metric("emud_sdma_doorbells_total"), "%s: one doorbell", what)
					esidePoll(t, r, 0, 1, q, 0, flag, 1, 0xFFFFFFFF, cco.SdmaCmpEq, what)
					at := uint64(cco.Unit)
					if tc.local {
						esideAtomic(t, r, 0, 1, q, at, esideSlot(t, r, 0, 0, q), what+": local")
						at += cco.Unit
					}
					if tc.remote {
						esideAtomic(t, r, 0, 1, q, at, esideSlot(t, r, 1, 0, q), what+": remote")
					}
				}
				esidePool(t, r, 2, func(rank, src, qq int) uint64 {
					if src == 0 && qq == q && ((rank == 0 && tc.local) || (rank == 1 && tc.remote)) {
						return 1
					}
					return 0
				}, what)
			}
		})
	}
}

// ---- putBroadcast ----

func TestEngineSidePutBroadcast(t *testing.T) {
	const (
		ranks = 4
		n     = 4096 + 100
		q     = 1
		off2  = 8192 // dst2 offset: congruent with 0 mod 32
	)
	cases := []struct {
		name          string
		peer, peer2   int
		local, remote bool
		coop          cco.Coop
		block         int
		remotes       []int // pools the remote signal bumps, in ring order
	}{
		{name: "peer + self, remote", peer: 1, peer2: 0, remote: true, remotes: []int{1}},
		{name: "peer + self, local", peer: 1, peer2: 0, local: true},
		{name: "peer + self, local and remote", peer: 1, peer2: 0, local: true, remote: true, remotes: []int{1}},
		{name: "peer + self, no signal", peer: 1, peer2: 0},
		{name: "two remote peers", peer: 1, peer2: 2, remote: true, remotes: []int{1, 2}},
		{name: "two remote peers, local and remote", peer: 3, peer2: 2, local: true, remote: true, remotes: []int{3, 2}},
		{name: "peer == peer2", peer: 2, peer2: 2, remote: true, remotes: []int{2}},
		{name: "self + peer", peer: 0, peer2: 3, remote: true, remotes: []int{3}},
		{name: "self + self, remote bumps nobody", peer: 0, peer2: 0, remote: true},
		{name: "warp scope", peer: 1, peer2: 0, local: true, remote: true, coop: cco.CoopWarp, block: 64, remotes: []int{1}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= seeds; seed++ {
				what := fmt.Sprintf("seed %d", seed)
				r := newRig(t, seed, rigOpts{ranks: ranks})
				data := patterned(int(seed)+3, n)
				r.fillBytes(r.send[0], 0, data)
				for me := 0; me < ranks; me++ {
					r.fillBytes(r.recv[me], 0, esideFF(off2+n+64))
				}
				o := []cco.Option{tc.coop}
				sig := len(tc.remotes)
				if tc.local {
					o = append(o, cco.LocalSignal)
					sig++
				}
				if tc.remote {
					o = append(o, cco.RemoteSignal)
				}
				block := tc.block
				if block == 0 {
					block = 1
				}
				r.launch(0, 1, block, func(t *kernel.Thread, s *cco.Sdma) {
					s.PutBroadcast(tc.peer, r.recv[0], 0, tc.peer2, r.recv[0], off2, r.send[0], 0, n, q, o...)
					s.Quiet(tc.peer, tc.coop)
				})
				require.NoError(t, r.s.Run(), what)
				// Data at both destinations, nothing around them.
				for me := 0; me < ranks; me++ {
					want := esideFF(off2 + n + 64)
					if me == tc.peer {
						copy(want, data)
					}
					if me == tc.peer2 {
						copy(want[off2:], data)
					}
					assert.True(t, bytes.Equal(want, r.readBytes(r.recv[me], 0, off2+n+64)), "%s: rank %d's receive window", what, me)
				}
				// Signals: local once into my [0, q]; remote once per
				// distinct destination peer other than me.
				esidePool(t, r, ranks, func(rank, src, qq int) uint64 {
					if src != 0 || qq != q {
						return 0
					}
					v := uint64(0)
					if rank == 0 && tc.local {
						v++
					}
					for _, p := range tc.remotes {
						if p == rank {
							v++
						}
					}
					return v
				}, what)
				// Ring of (0, peer, q): the packet in units 1–2, NOP slack
				// in unit 3, then local, peer, peer2 ATOMICs.
				rg := esideRing(t, r, 0, tc.peer, q)
				assert.Equal(t, uint64(3+sig)*cco.Unit, rg.CachedWptr(), "%s: 3 units + %d signals", what, sig)
				p := esideUnit(t, r, 0, tc.peer, q, 0, 3*cco.Unit)
				if assert.Equal(t, ring.KindBroadcastCopy, p.Kind, what) {
					assert.Equal(t, r.recv[0].LsaPtr(tc.peer, 0), p.Dst, "%s: dst1", what)
					assert.Equal(t, r.recv[0].LsaPtr(tc.peer2, off2), p.Dst2, "%s: dst2", what)
					assert.Equal(t, r.send[0].LocalPtr(0), p.Src, "%s: src", what)
					assert.Equal(t, uint64(n), p.CopyBytes(), "%s: bytes", what)
				}
				slack := make([]byte, 3*cco.Unit-36)
				rg.Read(36, slack)
				assert.Equal(t, make([]byte, len(slack)), slack, "%s: NOP fill after the 36 B packet", what)
				at := uint64(3 * cco.Unit)
				if tc.local {
					esideAtomic(t, r, 0, tc.peer, q, at, esideSlot(t, r, 0, 0, q), what+": local")
					at += cco.Unit
				}
				for _, pr := range tc.remotes {
					esideAtomic(t, r, 0, tc.peer, q, at, esideSlot(t, r, pr, 0, q), fmt.Sprintf("%s: remote to %d", what, pr))
					at += cco.Unit
				}
				if tc.peer2 != tc.peer {
					assert.Equal(t, uint64(0), esideRing(t, r, 0, tc.peer2, q).CachedWptr(), "%s: peer2's queue is not used", what)
				}
			}
		})
	}
}

// ---- chunking (§9) ----

func TestEngineSideChunkedPut(t *testing.T) {
	const (
		q     = 1
		total = 2*cco.MaxCopyBytes + 100
	)
	cases := []struct {
		name  string
		coop  cco.Coop
		block int
	}{
		{"thread", cco.CoopThread, 1},
		{"warp", cco.CoopWarp, 64},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= seeds; seed++ {
				what := fmt.Sprintf("seed %d", seed)
				r := newRig(t, seed, rigOpts{ranks: 2})
				var wins []cco.Window
				for _, c := range r.comms {
					buf, err := cco.MemAllocPhantom(c, total)
					require.NoError(t, err)
					w, err := cco.WindowRegister(c, buf, total)
					require.NoError(t, err)
					wins = append(wins, w)
				}
				r.launch(0, 1, tc.block, func(t *kernel.Thread, s *cco.Sdma) {
					s.Put(1, wins[0], 0, wins[0], 0, total, q, tc.coop, cco.RemoteSignal)
					s.Quiet(1, tc.coop)
				})
				require.NoError(t, r.s.Run(), what)
				rg := esideRing(t, r, 0, 1, q)
				assert.Equal(t, uint64(4*cco.Unit), rg.CachedWptr(), "%s: 3 COPY units and one ATOMIC", what)
				dst, src := wins[0].LsaPtr(1, 0), wins[0].LocalPtr(0)
				for i, sz := range []uint64{cco.MaxCopyBytes, cco.MaxCopyBytes, 100} {
					off := uint64(i) * cco.MaxCopyBytes
					esideCopy(t, r, 0, 1, q, uint64(i)*cco.Unit, dst+off, src+off, sz, fmt.Sprintf("%s: chunk %d", what, i))
				}
				esideAtomic(t, r, 0, 1, q, 3*cco.Unit, esideSlot(t, r, 1, 0, q), what+": after the last chunk")
				assert.Equal(t, rg.CachedWptr(), rg.Rptr(), "%s: drained", what)
				esidePool(t, r, 2, func(rank, src, qq int) uint64 {
					if rank == 1 && src == 0 && qq == q {
						return 1 // one signal per call, not per chunk
					}
					return 0
				}, what)
				assert.Equal(t, 3.0, r.metric("emud_sdma_doorbells_total"), "%s: each chunk is its own post", what)
			}
		})
	}
}

// ---- options rules and misuse that stops the kernel ----

func TestEngineSideOptionRules(t *testing.T) {
	const ranks = 2
	type call func(r *rig, s *cco.Sdma)
	cases := []struct {
		name  string
		block int
		call  string // the call the LaneError names
		also  string // another substring of the message
		fn    call
	}{
		{"postWaitMem SignalPerCopy", 1, "postWaitMem", "Aggregate", func(r *rig, s *cco.Sdma) {
			s.PostWaitMem(1, 0, r.recv[0], 0, 1, cco.SdmaCmpEq, 0xFFFFFFFF, cco.SdmaOptFlagsSignalPerCopy)
		}},
		{"postWaitSignal SignalPerCopy", 1, "postWaitSignal", "Aggregate", func(r *rig, s *cco.Sdma) {
			s.PostWaitSignal(1, 0, 1, 0, 1, cco.SdmaOptFlagsSignalPerCopy)
		}},
		{"putBroadcast SignalPerCopy", 1, "putBroadcast", "Aggregate", func(r *rig, s *cco.Sdma) {
			s.PutBroadcast(1, r.recv[0], 0, 0, r.recv[0], 0, r.send[0], 0, 64, 0, cco.SdmaOptFlagsSignalPerCopy)
		}},
		{"postWaitMemPutPtr SignalPerCopy", 1, "postWaitMemPutPtr", "Aggregate", func(r *rig, s *cco.Sdma) {
			s.PostWaitMemPutPtr(1, 0, r.recv[0], 0, 1, cco.SdmaCmpEq, 0xFFFFFFFF, r.recv[0].LsaPtr(1, 0), r.send[0].LocalPtr(0), 64,
				cco.SdmaOptFlagsSignalPerCopy)
		}},
		{"postWaitMem SameQueue", 1, "postWaitMem", "", func(r *rig, s *cco.Sdma) {
			s.PostWaitMem(1, 0, r.recv[0], 0, 1, cco.SdmaCmpEq, 0xFFFFFFFF, cco.SdmaThreadSameQueue)
		}},
		{"put SameQueue at warp scope", 64, "put", "ccoCoopThread", func(r *rig, s *cco.Sdma) {
			s.Put(1, r.recv[0], 0, r.send[0], 0, 64, 0, cco.CoopWarp, cco.SdmaThreadSameQueue)
		}},
		{"put SameQueue at block scope", 64, "put", "ccoCoopThread", func(r *rig, s *cco.Sdma) {
			s.Put(1, r.recv[0], 0, r.send[0], 0, 64, 0, cco.CoopBlock, cco.SdmaThreadSameQueue)
		}},
		{"get SameQueue at warp scope", 64, "get", "ccoCoopThread", func(r *rig, s *cco.Sdma) {
			s.Get(1, r.recv[0], 0, r.send[0], 0, 64, 0, cco.SdmaThreadSameQueue, cco.CoopWarp)
		}},
		{"put unknown optFlags bit", 1, "put", "0x4", func(r *rig, s *cco.Sdma) {
			s.Put(1, r.recv[0], 0, r.send[0], 0, 64, 0, cco.OptFlags(4))
		}},
		{"get unknown optFlags bit", 1, "get", "0x81", func(r *rig, s *cco.Sdma) {
			s.Get(1, r.recv[0], 0, r.send[0], 0, 64, 0, cco.OptFlags(0x80|1))
		}},
		{"putBroadcast unknown optFlags bit", 1, "putBroadcast", "", func(r *rig, s *cco.Sdma) {
			s.PutBroadcast(1, r.recv[0], 0, 0, r.recv[0], 0, r.send[0], 0, 64, 0, cco.OptFlags(4))
		}},
		{"postWaitMemPutPtr at warp scope", 64, "postWaitMemPutPtr", "thread scope", func(r *rig, s *cco.Sdma) {
			s.PostWaitMemPutPtr(1, 0, r.recv[0], 0, 1, cco.SdmaCmpEq, 0xFFFFFFFF, r.recv[0].LsaPtr(1, 0), r.send[0].LocalPtr(0), 64, cco.CoopWarp)
		}},
		{"put peer out of range", 1, "put", "peer 2", func(r *rig, s *cco.Sdma) {
			s.Put(ranks, r.recv[0], 0, r.send[0], 0, 64, 0)
		}},
		{"get negative peer", 1, "get", "peer -1", func(r *rig, s *cco.Sdma) {
			s.Get(-1, r.recv[0], 0, r.send[0], 0, 64, 0)
		}},
		{"putPtr peer out of range", 1, "putPtr", "peer 5", func(r *rig, s *cco.Sdma) {
			s.PutPtr(5, r.recv[0].LsaPtr(1, 0), r.send[0].LocalPtr(0), 64, 0)
		}},
		{"putBroadcast peer2 out of range", 1, "putBroadcast", "peer 2", func(r *rig, s *cco.Sdma) {
			s.PutBroadcast(1, r.recv[0], 0, ranks, r.recv[0], 0, r.send[0], 0, 64, 0)
		}},
		{"postWaitMem peer out of range", 1, "postWaitMem", "peer 2", func(r *rig, s *cco.Sdma) {
			s.PostWaitMem(ranks, 0, r.recv[0], 0, 1, cco.SdmaCmpEq, 0xFFFFFFFF)
		}},
		{"postWaitSignal peer out of range", 1, "postWaitSignal", "peer 2", func(r *rig, s *cco.Sdma) {
			s.PostWaitSignal(ranks, 0, 1, 0, 1)
		}},
		{"postWaitMemPutPtr peer out of range", 1, "postWaitMemPutPtr", "peer 2", func(r *rig, s *cco.Sdma) {
			s.PostWaitMemPutPtr(ranks, 0, r.recv[0], 0, 1, cco.SdmaCmpEq, 0xFFFFFFFF, r.recv[0].LsaPtr(1, 0), r.send[0].LocalPtr(0), 64)
		}},
		{"commit peer out of range", 1, "commit", "peer 2", func(r *rig, s *cco.Sdma) { s.Commit(ranks, 0) }},
		{"quiet peer out of range", 1, "quiet", "peer 2", func(r *rig, s *cco.Sdma) { s.Quiet(ranks) }},
		{"quietQueue peer out of range", 1, "quietQueue", "peer 2", func(r *rig, s *cco.Sdma) { s.QuietQueue(ranks, 0) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= seeds; seed++ {
				what := fmt.Sprintf("seed %d", seed)
				r := newRig(t, seed, rigOpts{ranks: ranks})
				after := false
				k := r.launch(0, 1, tc.block, func(t *kernel.Thread, s *cco.Sdma) {
					tc.fn(r, s)
					after = true
				})
				err := r.s.Run()
				require.Error(t, err, what)
				var le *kernel.LaneError
				require.True(t, errors.As(err, &le), "%s: want a *kernel.LaneError, got %T: %v", what, err, err)
				assert.Equal(t, tc.call, le.Call, "%s: the failing call", what)
				assert.Contains(t, err.Error(), tc.call, "%s: the message names the call", what)
				if tc.also != "" {
					assert.Contains(t, err.Error(), tc.also, "%s", what)
				}
				assert.Equal(t, 0, le.GPU, "%s", what)
				assert.Same(t, le, errorsAsLane(k.Err()), "%s: the kernel's error", what)
				assert.False(t, after, "%s: the lane did not go on past the call", what)
				for _, qu := range r.node.Queues() {
					assert.Equal(t, uint64(0), qu.Ring().CachedWptr(), "%s: %v: nothing posted", what, qu.ID())
				}
			}
		})
	}
}

func errorsAsLane(err error) *kernel.LaneError {
	var le *kernel.LaneError
	if errors.As(err, &le) {
		return le
	}
	return nil
}

// ---- SDMA disabled: every call is a no-op ----

func TestEngineSideSdmaDisabled(t *testing.T) {
	const (
		ranks = 2
		n     = 256
	)
	envs := []struct {
		name string
		env  cco.Env
	}{
		{"unset", cco.Env{}},
		{"empty", cco.Env{"MORI_ENABLE_SDMA": ""}},
		{"0", cco.Env{"MORI_ENABLE_SDMA": "0"}},
		{"off", cco.Env{"MORI_ENABLE_SDMA": "off"}},
		{"No, with channels set", cco.Env{"MORI_ENABLE_SDMA": "No", "MORI_SDMA_NUM_CHANNELS": "4"}},
	}
	for _, tc := range envs {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= seeds; seed++ {
				what := fmt.Sprintf("seed %d", seed)
				r := newRig(t, seed, rigOpts{ranks: ranks, env: tc.env, queues: 2})
				for me := 0; me < ranks; me++ {
					assert.Equal(t, 0, r.dcs[me].Sdma.SdmaNumQueue, "%s: rank %d", what, me)
					r.fillBytes(r.send[me], 0, patterned(me, n))
					r.fillBytes(r.recv[me], 0, esideFF(4*n))
				}
				reached := make([]int, ranks)
				for me := 0; me < ranks; me++ {
					peer := 1 - me
					r.launch(me, 1, 64, func(t *kernel.Thread, s *cco.Sdma) {
						l := []cco.Option{cco.LocalSignal, cco.RemoteSignal}
						s.Put(peer, r.recv[me], 0, r.send[me], 0, n, 0, l...)
						s.Put(peer, r.recv[me], 0, r.send[me], 0, n, 0, cco.CoopWarp)
						s.Put(peer, r.recv[me], 0, r.send[me], 0, n, 0, cco.SdmaOptFlagsAggregate, cco.SdmaThreadSameQueue)
						s.Get(peer, r.recv[me], uint64(n), r.send[me], 0, n, 0, l...)
						s.PutPtr(peer, r.recv[me].LsaPtr(peer, 2*n), r.send[me].LocalPtr(0), n, 0, l...)
						s.PutBroadcast(peer, r.recv[me], 3*n, me, r.recv[me], 3*n, r.send[me], 0, n, 0, l...)
						s.PostWaitMem(peer, 0, r.recv[me], 0, 12345, cco.SdmaCmpEq, 0xFFFFFFFF)
						s.PostWaitSignal(peer, 0, peer, 0, 1)
						s.PostWaitMemPutPtr(peer, 0, r.recv[me], 0, 12345, cco.SdmaCmpEq, 0xFFFFFFFF,
							r.recv[me].LsaPtr(peer, 0), r.send[me].LocalPtr(0), n, cco.RemoteSignal)
						s.Commit(peer, 0)
						s.Commit(peer, 0, cco.CoopWarp)
						s.Quiet(peer)
						s.Quiet(peer, cco.CoopWarp)
						s.QuietQueue(peer, 0)
						s.WaitSignal(peer, 0, 1) // would never return if it waited
						s.WaitSignal(me, 0, 1)
						if t.ThreadIdx() == 0 {
							reached[me]++
						}
					})
				}
				require.NoError(t, r.s.Run(), what)
				assert.Equal(t, []int{1, 1}, reached, "%s: every kernel ran to its end", what)
				assert.Empty(t, r.node.Queues(), "%s: no queue was ever touched", what)
				assert.Equal(t, 0.0, r.metric("emud_sdma_doorbells_total"), "%s", what)
				for me := 0; me < ranks; me++ {
					assert.Equal(t, esideFF(4*n), r.readBytes(r.recv[me], 0, 4*n), "%s: rank %d: nothing landed", what, me)
					_, err := r.dcs[me].Signal(1-me, 0)
					assert.Error(t, err, "%s: rank %d has no signal pool", what, me)
					assert.Equal(t, uint64(0), r.dcs[me].SignalPool().Base, "%s", what)
				}
			}
		})
	}
}
