package cco_test

// test_sdma_signal.cpp (docs/cco-semantics.md §12) parts A–E: a ring of ranks,
// peer = (me+1) % n, src = (me−1+n) % n, data owner<<20 | (i & 0xfffff) as
// u32 words. Every rank both sends (to peer) and receives (from src).

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	msigNPut     = 4       // NPUT of test_sdma_signal.cpp
	msigMaxChunk = 1 << 20 // MAX_CHUNK
	msigTail     = 64      // bytes past a transfer that must stay preset
)

// msigWord is the spec's pattern: word i of owner's send buffer.
func msigWord(owner, i int) uint32 { return uint32(owner)<<20 | uint32(i&0xfffff) }

var (
	msigMu       sync.Mutex
	msigPatterns = map[int][]byte{}
	msigFFBuf    []byte
)

// msigPattern is owner's send buffer: the first n bytes of owner<<20 |
// (i & 0xfffff). Built once per owner (the race detector makes the loop
// costly) and shared read-only.
func msigPattern(owner int, n uint64) []byte {
	const max = msigNPut * msigMaxChunk
	msigMu.Lock()
	defer msigMu.Unlock()
	b, ok := msigPatterns[owner]
	if !ok {
		b = make([]byte, max)
		for i := 0; i < max/4; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], msigWord(owner, i))
		}
		msigPatterns[owner] = b
	}
	return b[:n:n]
}

// msigFF is n bytes of 0xff, the preset of receive buffers.
func msigFF(n uint64) []byte {
	msigMu.Lock()
	defer msigMu.Unlock()
	if uint64(len(msigFFBuf)) < n {
		msigFFBuf = bytes.Repeat([]byte{0xff}, int(n))
	}
	return msigFFBuf[:n:n]
}

func msigPeer(me, n int) int { return (me + 1) % n }
func msigSrc(me, n int) int  { return (me - 1 + n) % n }

// msigLaunch is rig.launch without require, for host actors: a failed
// require inside an actor would leave the simulator waiting on it.
func msigLaunch(r *rig, rank, grid, block int, name string, fn func(t *kernel.Thread, s *cco.Sdma)) (*kernel.Kernel, error) {
	dc := r.dcs[rank]
	return kernel.Launch(r.s, kernel.Config{Name: fmt.Sprintf("%s/rank%d", name, rank), GPU: rank, Grid: grid, Block: block},
		func(t *kernel.Thread) { fn(t, cco.NewSdma(t, dc)) })
}

// msigLaunchAll launches fn on every rank and waits for all of them.
func msigLaunchAll(a *sim.Actor, r *rig, ranks, block int, name string, fn func(me int, t *kernel.Thread, s *cco.Sdma)) error {
	var ks []*kernel.Kernel
	for me := 0; me < ranks; me++ {
		k, err := msigLaunch(r, me, 1, block, name, func(t *kernel.Thread, s *cco.Sdma) { fn(me, t, s) })
		if err != nil {
			return err
		}
		ks = append(ks, k)
	}
	return kernel.WaitAll(a, ks...)
}

// msigRead reads memory from a host actor or a lane (no require: an error
// is returned as a nil slice, which compares unequal to any pattern).
func msigRead(r *rig, addr, n uint64) []byte {
	b := make([]byte, n)
	if err := r.mem.Read(addr, b); err != nil {
		return nil
	}
	return b
}

// msigEqual reports whether memory at addr holds want, reading it in
// pieces: the 4 MiB comparisons of parts B–D ran 20 seeds × 24 times, and
// allocating a fresh 4 MiB buffer each time was most of this file's time
// under -race.
func msigEqual(r *rig, addr uint64, want []byte) bool {
	buf := make([]byte, 64<<10)
	for off := 0; off < len(want); off += len(buf) {
		n := min(len(buf), len(want)-off)
		if err := r.mem.Read(addr+uint64(off), buf[:n]); err != nil || !bytes.Equal(buf[:n], want[off:off+n]) {
			return false
		}
	}
	return true
}

// laneRead, laneEqual and laneLoad64 are msigRead, msigEqual and
// msigLoad64 for lane code: through cco.Mem, the accesses the race
// detector sees.
func laneRead(th *kernel.Thread, r *rig, addr, n uint64) []byte {
	b := make([]byte, n)
	cco.NewMem(th, r.dcs[th.GPU()]).Read(addr, b)
	return b
}

func laneEqual(th *kernel.Thread, r *rig, addr uint64, want []byte) bool {
	m := cco.NewMem(th, r.dcs[th.GPU()])
	buf := make([]byte, 64<<10)
	for off := 0; off < len(want); off += len(buf) {
		n := min(len(buf), len(want)-off)
		if m.Read(addr+uint64(off), buf[:n]); !bytes.Equal(buf[:n], want[off:off+n]) {
			return false
		}
	}
	return true
}

func laneLoad64(th *kernel.Thread, r *rig, addr uint64) uint64 {
	return cco.NewMem(th, r.dcs[th.GPU()]).Load64(addr)
}

func msigLoad64(r *rig, addr uint64) uint64 {
	v, err := r.mem.Load64(addr)
	if err != nil {
		return ^uint64(0)
	}
	return v
}

// msigSlot is the address of rank's own slot signalBuf[src × n + q].
func msigSlot(r *rig, rank, src, q int) uint64 {
	a, err := r.dcs[rank].SignalPool().Slot(src, q)
	if err != nil {
		return 0
	}
	return a
}

// msigCheckPool asserts every slot of every rank's pool: want(rank, src, q).
func msigCheckPool(t *testing.T, r *rig, ranks, queues int, want func(rank, src, q int) uint64, what string) bool {
	ok := true
	for rank := 0; rank < ranks; rank++ {
		for src := 0; src < ranks; src++ {
			for q := 0; q < queues; q++ {
				v, err := r.dcs[rank].Signal(src, q)
				ok = assert.NoError(t, err, what) && ok
				ok = assert.Equal(t, want(rank, src, q), v, "%s: rank %d slot [%d, %d]", what, rank, src, q) && ok
			}
		}
	}
	return ok
}

// ---- part A: the matrix ----

type msigScope struct {
	name  string
	coop  cco.Coop
	block int
}

var msigScopes = []msigScope{
	{"thread", cco.CoopThread, 1},
	{"warp", cco.CoopWarp, 64},
	{"block", cco.CoopBlock, 256},
}

var msigMatrixBytes = []uint64{8, 64, 1024, 4096, 65536, 262144, msigMaxChunk}

// Every seed runs the whole part A matrix (3 scopes × 2 queues × 2
// aggregate × 7 sizes = 84 rounds) and parts B–D at every size; under -race
// one seed of the matrix takes about 3 s on a 2-core machine. Part A runs a
// ring of 3 ranks (still peer ≠ src).

const msigRanks = 4

func TestMoriSignalMatrix(t *testing.T) {
	for seed := uint64(1); seed <= seeds; seed++ {
		msigMatrix(t, seed)
	}
}

type msigRound struct {
	scope msigScope
	q     int
	agg   bool
	bytes uint64
}

func (c msigRound) String() string {
	return fmt.Sprintf("scope %s queue %d aggregate %v bytes %d", c.scope.name, c.q, c.agg, c.bytes)
}

func msigMatrix(t *testing.T, seed uint64) {
	const ranks = 3
	n := cco.DefaultSdmaQueues // the CI setup's queue count
	var rounds []msigRound
	for _, sc := range msigScopes {
		for q := 0; q < n; q++ {
			for _, agg := range []bool{false, true} {
				for _, b := range msigMatrixBytes {
					rounds = append(rounds, msigRound{sc, q, agg, b})
				}
			}
		}
	}
	most := uint64(0)
	for _, c := range rounds {
		most = max(most, c.bytes)
	}
	r := newRig(t, seed, rigOpts{ranks: ranks, winBytes: most + msigTail})
	require.Equal(t, n, r.dcs[0].Sdma.SdmaNumQueue)
	for me := 0; me < ranks; me++ {
		r.fillBytes(r.send[me], 0, msigPattern(me, most))
	}
	units := map[[2]int]uint64{} // (rank, q) → units posted so far
	done := 0
	r.s.Spawn("host", func(a *sim.Actor) {
		for _, c := range rounds {
			what := fmt.Sprintf("seed %d %v", seed, c)
			for me := 0; me < ranks; me++ {
				if !assert.NoError(t, r.mem.Write(r.recv[me].LocalPtr(0), msigFF(c.bytes+msigTail)), what) {
					return
				}
			}
			err := msigLaunchAll(a, r, ranks, c.scope.block, "signalA", func(me int, th *kernel.Thread, s *cco.Sdma) {
				peer := msigPeer(me, ranks)
				o := []cco.Option{c.scope.coop}
				if c.agg {
					o = append(o, cco.SdmaOptFlagsAggregate)
				}
				s.Put(peer, r.recv[me], 0, r.send[me], 0, c.bytes, c.q, o...)
				if c.agg {
					s.Commit(peer, c.q, c.scope.coop)
				}
				s.Quiet(peer, c.scope.coop)
			})
			if !assert.NoError(t, err, what) {
				return
			}
			ok := true
			for me := 0; me < ranks; me++ {
				src := msigSrc(me, ranks)
				ok = assert.True(t, msigEqual(r, r.recv[me].LocalPtr(0), msigPattern(src, c.bytes)),
					"%s: rank %d did not receive rank %d's %d B", what, me, src, c.bytes) && ok
				tail := msigRead(r, r.recv[me].LocalPtr(c.bytes), msigTail)
				ok = assert.Equal(t, msigFF(msigTail), tail, "%s: rank %d: bytes past the transfer changed", what, me) && ok
				// One COPY unit per call whatever the scope: warp and block
				// scope post from the leader only; quiet drained it all.
				qu, err := r.node.Queue(me, msigPeer(me, ranks), c.q)
				if !assert.NoError(t, err) {
					return
				}
				key := [2]int{me, c.q}
				units[key]++
				rg := qu.Ring()
				ok = assert.Equal(t, units[key]*cco.Unit, rg.CachedWptr(), "%s: rank %d queue %d holds one COPY unit per put", what, me, c.q) && ok
				ok = assert.Equal(t, rg.CachedWptr(), rg.CommittedWptr(), "%s: rank %d: everything rung", what, me) && ok
				ok = assert.Equal(t, rg.CachedWptr(), rg.Rptr(), "%s: rank %d: quiet returned before the queue drained", what, me) && ok
			}
			if !ok {
				return
			}
			done++
		}
	})
	require.NoError(t, r.s.Run(), "seed %d", seed)
	require.Equal(t, len(rounds), done, "seed %d: rounds completed", seed)
	msigCheckPool(t, r, ranks, n, func(int, int, int) uint64 { return 0 }, fmt.Sprintf("seed %d: part A posts no signals", seed))
}

// ---- parts B–D: remote, local, both ----

type msigPart struct {
	name          string
	local, remote bool
}

var msigParts = []msigPart{
	{"B remote", false, true},
	{"C local", true, false},
	{"D both", true, true},
}

var msigSignalBytes = []uint64{8, 4096, msigMaxChunk}

// msigSeen is what one rank's kernel observed, recorded in the kernel and
// asserted after the round.
type msigSeen struct {
	dataOK     bool   // the data checked in the kernel after waitSignal
	local      uint64 // signalBuf[me × n + q] read in the kernel
	remote     uint64 // signalBuf[src × n + q] read in the kernel
	quietDone  bool   // quiet(peer) returned
	peerDataOK bool   // part C: my data at the peer, read after my local signal
}

func TestMoriSignalRemoteLocalBoth(t *testing.T) {
	const ranks = msigRanks
	for seed := uint64(1); seed <= seeds; seed++ {
		sizes := msigSignalBytes
		span := msigNPut * sizes[len(sizes)-1]
		r := newRig(t, seed, rigOpts{ranks: ranks, winBytes: span})
		n := r.dcs[0].Sdma.SdmaNumQueue
		for me := 0; me < ranks; me++ {
			r.fillBytes(r.send[me], 0, msigPattern(me, span))
		}
		// Running totals per queue, never reset: the same on every rank
		// (the ring is symmetric). expR counts remote signals from src in
		// my slot [src, q], expL my own local signals in [me, q].
		expR := make([]uint64, n)
		expL := make([]uint64, n)
		done, want := 0, 0
		r.s.Spawn("host", func(a *sim.Actor) {
			for _, part := range msigParts {
				for _, b := range sizes {
					for q := 0; q < n; q++ {
						want++
						what := fmt.Sprintf("seed %d part %s queue %d bytes %d", seed, part.name, q, b)
						total := msigNPut * b
						for me := 0; me < ranks; me++ {
							if !assert.NoError(t, r.mem.Write(r.recv[me].LocalPtr(0), msigFF(total)), what) {
								return
							}
						}
						if part.remote {
							expR[q] += msigNPut
						}
						if part.local {
							expL[q] += msigNPut
						}
						eR, eL := expR[q], expL[q]
						seen := make([]msigSeen, ranks)
						var o []cco.Option
						if part.local {
							o = append(o, cco.LocalSignal)
						}
						if part.remote {
							o = append(o, cco.RemoteSignal)
						}
						err := msigLaunchAll(a, r, ranks, 1, "signalBCD", func(me int, th *kernel.Thread, s *cco.Sdma) {
							peer, src := msigPeer(me, ranks), msigSrc(me, ranks)
							for k := uint64(0); k < msigNPut; k++ {
								s.Put(peer, r.recv[me], k*b, r.send[me], k*b, b, q, o...)
							}
							if part.remote {
								// No barrier: the signal alone says src's data is here.
								s.WaitSignal(src, q, eR)
								seen[me].dataOK = laneEqual(th, r, r.recv[me].LocalPtr(0), msigPattern(src, total))
							}
							if part.local {
								// My local signal follows my copies on the same
								// queue: they have landed at the peer.
								s.WaitSignal(me, q, eL)
								seen[me].peerDataOK = laneEqual(th, r, r.recv[me].LsaPtr(peer, 0), msigPattern(me, total))
							}
							seen[me].local = laneLoad64(th, r, msigSlot(r, me, me, q))
							seen[me].remote = laneLoad64(th, r, msigSlot(r, me, src, q))
							s.Quiet(peer)
							seen[me].quietDone = true
						})
						if !assert.NoError(t, err, what) {
							return
						}
						ok := true
						for me := 0; me < ranks; me++ {
							src := msigSrc(me, ranks)
							sn := seen[me]
							if part.remote {
								ok = assert.True(t, sn.dataOK, "%s: rank %d saw signal %d from %d but not its data", what, me, eR, src) && ok
							}
							if part.local {
								ok = assert.True(t, sn.peerDataOK, "%s: rank %d saw its local signal %d before its data landed at the peer", what, me, eL) && ok
							}
							// Exactly the running totals: a slot a part does
							// not signal is untouched.
							ok = assert.Equal(t, eL, sn.local, "%s: rank %d's local slot [%d, %d] in the kernel", what, me, me, q) && ok
							ok = assert.Equal(t, eR, sn.remote, "%s: rank %d's slot [%d, %d] from src in the kernel", what, me, src, q) && ok
							ok = assert.True(t, sn.quietDone, "%s: rank %d: quiet(peer) returned", what, me) && ok
						}
						ok = msigCheckPool(t, r, ranks, n, func(rank, s, qq int) uint64 {
							switch s {
							case msigSrc(rank, ranks):
								return expR[qq]
							case rank:
								return expL[qq]
							}
							return 0
						}, what) && ok
						if !ok {
							return
						}
						done++
					}
				}
			}
		})
		require.NoError(t, r.s.Run(), "seed %d", seed)
		require.Equal(t, want, done, "seed %d: rounds completed", seed)
	}
}

// ---- part E: group signal ----

const msigEChunk = 256

func TestMoriSignalGroup(t *testing.T) {
	type tc struct {
		lanes   int
		perCopy bool
	}
	var cases []tc
	for _, perCopy := range []bool{false, true} {
		for _, lanes := range []int{1, 2, 8, 64} {
			cases = append(cases, tc{lanes, perCopy})
		}
	}
	const ranks = msigRanks
	for seed := uint64(1); seed <= seeds; seed++ {
		r := newRig(t, seed, rigOpts{ranks: ranks})
		for me := 0; me < ranks; me++ {
			r.fillBytes(r.send[me], 0, msigPattern(me, 64*msigEChunk))
		}
		exp := uint64(0) // my [me, 0] slot: the same running total on every rank
		done := 0
		r.s.Spawn("host", func(a *sim.Actor) {
			for _, c := range cases {
				what := fmt.Sprintf("seed %d lanes %d perCopy %v", seed, c.lanes, c.perCopy)
				total := uint64(c.lanes * msigEChunk)
				bases := make([]uint64, ranks)
				for me := 0; me < ranks; me++ {
					if !assert.NoError(t, r.mem.Write(r.recv[me].LocalPtr(0), msigFF(total+msigTail)), what) {
						return
					}
					qu, err := r.node.Queue(me, msigPeer(me, ranks), 0)
					if !assert.NoError(t, err) {
						return
					}
					bases[me] = qu.Ring().CachedWptr()
				}
				o := []cco.Option{cco.CoopThread, cco.LocalSignal, cco.SdmaThreadSameQueue}
				if c.perCopy {
					o = append(o, cco.SdmaOptFlagsSignalPerCopy)
					exp += uint64(c.lanes)
				} else {
					exp++ // one signal per put() call, however many lanes joined
				}
				e := exp
				seen := make([]uint64, ranks)
				err := msigLaunchAll(a, r, ranks, c.lanes, "signalE", func(me int, th *kernel.Thread, s *cco.Sdma) {
					peer := msigPeer(me, ranks)
					off := uint64(th.ThreadIdx() * msigEChunk)
					s.Put(peer, r.recv[me], off, r.send[me], off, msigEChunk, 0, o...)
					s.WaitSignal(me, 0, e)
					if th.ThreadIdx() == 0 {
						seen[me] = laneLoad64(th, r, msigSlot(r, me, me, 0))
					}
				})
				if !assert.NoError(t, err, what) {
					return
				}
				ok := true
				for me := 0; me < ranks; me++ {
					src := msigSrc(me, ranks)
					got := msigRead(r, r.recv[me].LocalPtr(0), total+msigTail)
					if !assert.NotNil(t, got, "%s: rank %d: receive window readable", what, me) {
						return
					}
					for l := 0; l < c.lanes; l++ {
						lo := uint64(l * msigEChunk)
						ok = assert.True(t, bytes.Equal(msigPattern(src, total)[lo:lo+msigEChunk], got[lo:lo+msigEChunk]),
							"%s: rank %d: lane %d's chunk from %d", what, me, l, src) && ok
					}
					ok = assert.Equal(t, msigFF(msigTail), got[total:], "%s: rank %d: bytes past the chunks", what, me) && ok
					ok = assert.Equal(t, e, seen[me], "%s: rank %d's local slot in the kernel", what, me) && ok
					ok = msigCheckGroupRing(t, r, me, msigPeer(me, ranks), bases[me], c.lanes, c.perCopy, what) && ok
				}
				ok = msigCheckPool(t, r, ranks, r.dcs[0].Sdma.SdmaNumQueue, func(rank, s, q int) uint64 {
					if s == rank && q == 0 {
						return e
					}
					return 0
				}, what) && ok
				if !ok {
					return
				}
				done++
			}
		})
		require.NoError(t, r.s.Run(), "seed %d", seed)
		require.Equal(t, len(cases), done, "seed %d: rounds completed", seed)
	}
}

// msigCheckGroupRing decodes the k lanes' post on queue (me, peer, 0) from
// base (docs/cco-semantics.md §4): default [COPY] × k then [ATOMIC local];
// SignalPerCopy ([COPY][ATOMIC local]) × k.
func msigCheckGroupRing(t *testing.T, r *rig, me, peer int, base uint64, k int, perCopy bool, what string) bool {
	qu, err := r.node.Queue(me, peer, 0)
	if !assert.NoError(t, err) {
		return false
	}
	rg := qu.Ring()
	units := k + 1
	if perCopy {
		units = 2 * k
	}
	ok := assert.Equal(t, base+uint64(units)*cco.Unit, rg.CachedWptr(), "%s: rank %d: units posted", what, me)
	slot := msigSlot(r, me, me, 0)
	var kinds []ring.Kind
	for u := 0; u < units; u++ {
		var p ring.Packet
		_, err := rg.DecodeAt(&p, base+uint64(u)*cco.Unit, cco.Unit)
		if !assert.NoError(t, err, "%s: rank %d unit %d", what, me, u) {
			return false
		}
		kinds = append(kinds, p.Kind)
		lane, isCopy := u, u < k
		if perCopy {
			lane, isCopy = u/2, u%2 == 0
		}
		if isCopy {
			off := uint64(lane * msigEChunk)
			ok = assert.Equal(t, ring.KindCopy, p.Kind, "%s: rank %d unit %d", what, me, u) && ok
			ok = assert.Equal(t, r.recv[me].LsaPtr(peer, off), p.Dst, "%s: rank %d unit %d: lane %d's destination", what, me, u, lane) && ok
			ok = assert.Equal(t, r.send[me].LocalPtr(off), p.Src, "%s: rank %d unit %d: lane %d's source", what, me, u, lane) && ok
			ok = assert.Equal(t, uint64(msigEChunk), p.CopyBytes(), "%s: rank %d unit %d", what, me, u) && ok
		} else {
			ok = assert.Equal(t, ring.KindAtomic, p.Kind, "%s: rank %d unit %d", what, me, u) && ok
			ok = assert.Equal(t, ring.AtomicOpAdd64, p.AtomicOp, "%s: rank %d unit %d", what, me, u) && ok
			ok = assert.Equal(t, slot, p.Addr, "%s: rank %d unit %d: the local slot [me, 0]", what, me, u) && ok
			ok = assert.Equal(t, uint64(1), p.Data, "%s: rank %d unit %d", what, me, u) && ok
		}
	}
	if !ok {
		t.Logf("%s: rank %d ring kinds from %#x: %v", what, me, base, kinds)
	}
	return ok
}
