package fabric

import (
	"encoding/binary"
	"fmt"

	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// barKey names one rank's barrier slot.
type barKey struct {
	rank, index int
	multimem    bool
}

// barState is the emulator's bookkeeping of a slot, for hang reports and
// poisoning (the epochs and inboxes themselves are in device memory).
type barState struct {
	arrivals int    // arrive calls by this rank's thread 0
	poisoned string // why later use is refused (a timed-out wait)
}

func (sys *System) bar(k barKey) *barState {
	b := sys.bars[k]
	if b == nil {
		b = &barState{}
		sys.bars[k] = b
	}
	return b
}

// BarrierSession is ncclCftBarrierSession<Coop> as one thread sees it
// (spec §10). Build it in every thread of coop. Its epoch is loaded from the
// barrier buffer at construction and stored back by thread 0 after each
// completed wait, which is what the C++ destructor's store gives the next
// launch: epochs persist across kernels.
type BarrierSession struct {
	t        *kernel.Thread
	coop     kernel.Group
	dc       DevComm
	sys      *System
	index    int
	multimem bool
	team     Team
	nB       int
	base     uint64 // big-VA offset of the barrier buffer
	epoch    uint32
	a        barArgs
}

type barArgs struct {
	b       *BarrierSession
	timeout sim.Time // < 0: none
	res     Result
}

// NewCftBarrierSession is the ncclCftBarrierSession(coop, devComm, index,
// multimem) constructor. It fails the kernel for an index not below the
// dev comm's cftBarrierCount (NCCL does not check; it reads other slots),
// a multimem session without NCCL_CFT_MULTIMEM, and a slot poisoned by an
// earlier timeout.
func NewCftBarrierSession(coop kernel.Group, dc DevComm, index uint32, multimem bool) *BarrierSession {
	const call = "ncclCftBarrierSession"
	t := coop.Thread()
	if dc.st == nil || dc.CftCaps&CapCft == 0 {
		t.Fail(call, fmt.Errorf("rank %d: the dev comm has no CFT resources (cftCaps %v)", dc.Rank, dc.CftCaps))
	}
	h := dc.CftBarrier
	team := Team{NRanks: dc.CftSize, Rank: dc.CftRank, Stride: 1}
	if multimem {
		if dc.CftCaps&CapCftMultimem == 0 {
			t.Fail(call, fmt.Errorf("rank %d: a multimem barrier needs NCCL_CFT_MULTIMEM in cftCaps (got %v)", dc.Rank, dc.CftCaps))
		}
		h = dc.CftMultimemBarrier
		team = TeamCftMultimem(dc)
	}
	if int(index) >= h.NBarriers {
		t.Fail(call, fmt.Errorf("rank %d: barrier index %d is not below cftBarrierCount %d: NCCL does not check and would use other barriers' slots; request more barriers", dc.Rank, index, h.NBarriers))
	}
	sys := dc.st.sys
	k := barKey{dc.Rank, int(index), multimem}
	if p := sys.bar(k).poisoned; p != "" {
		t.Fail(call, fmt.Errorf("rank %d: barrier %s is poisoned: %s; its epoch may disagree with the peers'", dc.Rank, barName(int(index), multimem), p))
	}
	b := &BarrierSession{t: t, coop: coop, dc: dc, sys: sys, index: int(index), multimem: multimem, team: team, nB: h.NBarriers,
		base: dc.st.resOff + uint64(h.BufHandle)*128}
	b.a.b = b
	b.epoch = sys.load32(dc.Rank, b.epochOff())
	return b
}

func barName(index int, multimem bool) string {
	if multimem {
		return fmt.Sprintf("index %d (multimem)", index)
	}
	return fmt.Sprintf("index %d (unicast)", index)
}

func (b *BarrierSession) granule(g int) uint64 { return b.base + uint64(g)*16 }

func (b *BarrierSession) epochOff() uint64 {
	if b.multimem {
		return b.granule(b.index)
	}
	return b.granule(b.nB + b.index)
}

func (b *BarrierSession) mcInbox() uint64 { return b.granule(2*b.nB + b.index) }

func (b *BarrierSession) ucInbox(from int) uint64 {
	return b.granule(3*b.nB + b.index*b.team.NRanks + from)
}

// peer is the i-th peer other than self, as the NCCL loops visit them.
func (b *BarrierSession) peer(i int) int {
	if i < b.team.Rank {
		return i
	}
	return i + 1
}

func (sys *System) load32(rank int, off uint64) uint32 {
	return binary.LittleEndian.Uint32(sys.ranks[rank].bytes(off, 4))
}

func (sys *System) store32(rank int, off uint64, v uint32) {
	binary.LittleEndian.PutUint32(sys.ranks[rank].bytes(off, 4), v)
}

// rollingReached is NCCL's 32-bit rolling compare: got − target ≤ 2^31 − 1.
func rollingReached(got, target uint32) bool { return got-target <= 0x7FFFFFFF }

// Arrive is ncclCftBarrierSession::arrive: after coop syncs, thread 0
// releases (producer → consumer at Sys scope) and signals every peer: one
// 16-byte put of epoch + 1 into each peer's inbox (unicast), or a multimem
// add of 1 into every member's inbox (multimem), then submit and flush.
func (b *BarrierSession) Arrive(coop kernel.Group, order MemoryOrder, producer, consumer ProxyType) {
	b.check("arrive", coop, order, producer, consumer)
	coop.Sync()
	if coop.ThreadRank() != 0 {
		return
	}
	b.sys.fence(b.dc.Rank, ReleaseOrderOf(order), producer, consumer, FenceScopeSys)
	b.sys.raceFence(b.t, b.dc.Rank, ReleaseOrderOf(order), producer, consumer, FenceScopeSys)
	kernel.Converge(b.t, barArriveCall, &b.a)
}

func (b *BarrierSession) check(call string, coop kernel.Group, order MemoryOrder, p, c ProxyType) {
	if coop.Thread() != b.t {
		b.t.Fail("ncclCftBarrierSession::"+call, fmt.Errorf("coop belongs to %v, not to this session's thread", coop.Thread()))
	}
	if err := checkFenceArgs(order, p, c, FenceScopeSys); err != nil {
		b.t.Fail("ncclCftBarrierSession::"+call, err)
	}
}

var barArriveCall = &kernel.Call[*barArgs]{Name: "ncclCftBarrierSession::arrive", Run: func(g *kernel.Active, args []*barArgs) error {
	for _, a := range args {
		a.b.arrive(g)
	}
	return nil
}}

func (b *BarrierSession) arrive(g *kernel.Active) {
	sys, me := b.sys, b.dc.Rank
	k := barKey{me, b.index, b.multimem}
	sys.bar(k).arrivals++
	drop := sys.faults.dropped(me, b.index, b.multimem)
	mb := newMbar(sys, me, -1, "barrier's internal ncclCftSmem")
	payload := make([]byte, 16)
	var ops []*fop
	if b.multimem {
		payload[0] = 1
		members := sys.teamMembers(me-b.team.Rank*b.team.Stride, b.team.NRanks, b.team.Stride)
		ops = append(ops, &fop{kind: opRedMC, tg: leTarget{multicast: true, members: members},
			leOff: b.mcInbox(), red: RedOp{Op: redop.Sum, Type: redop.U32}})
	} else {
		binary.LittleEndian.PutUint32(payload, b.epoch+1)
		for i := 0; i < b.team.NRanks-1; i++ {
			p := b.peer(i)
			ops = append(ops, &fop{kind: opPut, tg: leTarget{rank: me + (p-b.team.Rank)*b.team.Stride},
				leOff: b.ucInbox(b.team.Rank)})
		}
	}
	if len(ops) == 0 {
		return
	}
	for _, o := range ops {
		o.rank, o.bytes, o.mask, o.units, o.mb = me, 16, FullMask, 1, mb
		o.internal, o.data, o.fail = true, payload, drop
		mb.tx += o.units
		sys.start(o)
	}
	mb.pending = 0
	wi := sys.diag.enterFlush(g, mb, "barrier arrive")
	defer sys.diag.leave(g.Wave())
	g.Actor().Await(sim.Wait{List: mb.wl, Lo: 0, Hi: 1, Pred: func() bool { return mb.phase > 0 }, Text: wi.text})
}

var barWaitCall = &kernel.Call[*barArgs]{Name: "ncclCftBarrierSession::wait", Run: func(g *kernel.Active, args []*barArgs) error {
	lanes := g.Lanes()
	b0 := args[0].b
	sys, me := b0.sys, b0.dc.Rank
	var deadline sim.Time = -1
	if d := args[0].timeout; d >= 0 {
		deadline = sys.s.Now() + d
	}
	// Every lane's inbox slots: thread t of a unicast session polls peers
	// t, t + size, …; thread 0 of a multimem session polls its multicast
	// inbox. The wave waits once for all of them (its lanes poll in
	// lock-step), then each lane's result is its own.
	per := make([][]slotWait, len(lanes))
	var all []slotWait
	for i := range lanes {
		b := args[i].b
		if b.multimem {
			if b.coop.ThreadRank() == 0 {
				per[i] = []slotWait{{b.mcInbox(), b.epoch + uint32(b.team.NRanks)}}
			}
		} else {
			for p := b.coop.ThreadRank(); p < b.team.NRanks-1; p += b.coop.Size() {
				per[i] = append(per[i], slotWait{b.ucInbox(b.peer(p)), b.epoch + 1})
			}
		}
		all = append(all, per[i]...)
	}
	reached := func(ws []slotWait) bool {
		for _, w := range ws {
			if !rollingReached(sys.load32(me, w.off), w.target) {
				return false
			}
		}
		return true
	}
	if len(all) > 0 {
		lo, hi := all[0].off, all[0].off+4
		for _, w := range all {
			lo, hi = min(lo, w.off), max(hi, w.off+4)
		}
		wi := sys.diag.enterBarrier(g, b0, all)
		w := sim.Wait{List: sys.ranks[me].wl, Lo: lo, Hi: hi, Pred: func() bool { return reached(all) }, Text: wi.text}
		if deadline < 0 {
			g.Actor().Await(w)
		} else {
			g.Actor().AwaitTimeout(w, deadline-sys.s.Now())
		}
		sys.diag.leave(g.Wave())
	}
	for i, t := range lanes {
		a := args[i]
		b := a.b
		a.res = Success
		if reached(per[i]) {
			sys.raceInboxes(g, me, per[i])
		}
		if !reached(per[i]) {
			a.res = Timeout // skips the epoch update
			sys.bar(barKey{me, b.index, b.multimem}).poisoned = fmt.Sprintf("a wait by %v timed out at epoch %d", t, b.epoch)
			continue
		}
		if b.multimem {
			if b.coop.ThreadRank() == 0 {
				b.epoch += uint32(b.team.NRanks)
			}
		} else {
			b.epoch++
		}
		if b.coop.ThreadRank() == 0 {
			sys.store32(me, b.epochOff(), b.epoch) // the destructor's store
		}
	}
	return nil
}}

// slotWait is one polled inbox granule and the value it must reach.
type slotWait struct {
	off    uint64
	target uint32
}

func (b *BarrierSession) wait(coop kernel.Group, order MemoryOrder, producer, consumer ProxyType, timeout sim.Time) Result {
	b.a.timeout = timeout
	kernel.Converge(b.t, barWaitCall, &b.a)
	res := b.a.res
	coop.Sync()
	MemFence(coop, b.dc, AcquireOrderOf(order), producer, consumer, FenceScopeSys)
	return res
}

// Wait is ncclCftBarrierSession::wait: unicast, thread t polls the inboxes
// of peers t, t + size, … until each reaches epoch + 1, then every thread's
// epoch advances; multimem, thread 0 polls its inbox until epoch + nRanks.
// Then coop syncs and acquires (producer → consumer at Sys scope).
func (b *BarrierSession) Wait(coop kernel.Group, order MemoryOrder, producer, consumer ProxyType) {
	b.check("wait", coop, order, producer, consumer)
	b.wait(coop, order, producer, consumer, -1)
}

// WaitTimeout is the ncclResult_t wait(…, timeoutCycles) overload: a thread
// whose polling passes timeoutCycles SM cycles (Model.ClockGHz) returns
// Timeout without advancing its epoch; the result is per thread. A timed-out
// slot is poisoned: later sessions on it fail (spec §10.3 [inferred]).
func (b *BarrierSession) WaitTimeout(coop kernel.Group, order MemoryOrder, producer, consumer ProxyType, timeoutCycles uint64) Result {
	b.check("wait", coop, order, producer, consumer)
	return b.wait(coop, order, producer, consumer, b.sys.model.cycles(timeoutCycles))
}

// Sync is arrive + wait.
func (b *BarrierSession) Sync(coop kernel.Group, order MemoryOrder, producer, consumer ProxyType) {
	b.Arrive(coop, order, producer, consumer)
	b.Wait(coop, order, producer, consumer)
}

// SyncTimeout is arrive + the timeout wait.
func (b *BarrierSession) SyncTimeout(coop kernel.Group, order MemoryOrder, producer, consumer ProxyType, timeoutCycles uint64) Result {
	b.Arrive(coop, order, producer, consumer)
	return b.WaitTimeout(coop, order, producer, consumer, timeoutCycles)
}

// Epoch is the session's epoch as this thread holds it.
func (b *BarrierSession) Epoch() uint32 { return b.epoch }
