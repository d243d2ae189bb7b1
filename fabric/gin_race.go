package fabric

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
)

// The race detector's view of GIN. Every operation runs as a detector
// thread forked from the lane that posted it (so the lane's earlier
// accesses are ordered before it). The edges are
// the documented guarantees and nothing more:
//   - a put's packets read its source and write the destination as they
//     leave and land (ordered by happens-before alone: GIN needs no proxy
//     fence on top of the signal);
//   - local consumption releases into the operation's sent clock, which
//     ncclGin::flush acquires, and into its counter's clock
//     (ncclGin_CounterInc), which readCounter/waitCounter acquire: a
//     counter says the source was read, never that the data landed;
//   - settlement (every packet landed) releases into the operation's done
//     clock; a weak signal then releases the operation alone into its
//     slot, a strong signal first acquires the done clock of every earlier
//     operation of the context to that peer;
//   - readSignal and a satisfied waitSignal acquire the slot (a readSignal
//     is also the baseline of the thread's next waitSignal on the slot for
//     more than it read: the detector's baseline-read check); the signal's
//     own write is atomic (signals do not race with each other), and
//     resetSignal is a plain store that races with any signal it is not
//     ordered with.

func (sys *System) ginRaceStart(t *kernel.Thread, o *ginOp) {
	d, from := sys.raceLane(t)
	if d == nil {
		return
	}
	// Each operation is a detector thread of its own, forked from the lane:
	// two operations of one NIC are ordered only by the edges GIN gives
	// (a shared NIC thread would order every later operation after every
	// earlier one). The cost grows with the operations of a run, which is
	// fine for tests and the reason scale runs leave the detector off.
	o.race = d.NewThread(fmt.Sprintf("rank %d NIC: %s", o.rank, o.name()))
	d.Fork(from, o.race)
	who := fmt.Sprintf("rank %d's %s to rank %d (context %d, posted by %v)", o.rank, o.name(), o.peer, o.ctx, t)
	if o.kind == ginGet {
		who = fmt.Sprintf("rank %d's %s from rank %d (context %d, posted by %v)", o.rank, o.name(), o.peer, o.ctx, t)
	}
	o.rinfoRead = &race.Info{Kind: race.KindFabric, OpKind: race.OpGin, Who: who, Op: o.name() + " source read"}
	o.rinfoWrite = &race.Info{Kind: race.KindFabric, OpKind: race.OpGin, Who: who, Op: o.name() + " write"}
}

func (sys *System) ginRaceRead(o *ginOp, rank int, lo, hi uint64) {
	if o.race == nil || hi <= lo || o.kind == ginPutValue {
		return
	}
	if sys.ranks[rank].bytes(o.srcOff+lo, hi-lo) == nil {
		return // phantom
	}
	d := sys.s.Race()
	d.Access(o.race, sys.rankSpace(d, rank), o.srcOff+lo, o.srcOff+hi, race.Access{Info: o.rinfoRead})
}

func (sys *System) ginRaceWrite(o *ginOp, rank int, lo, hi uint64) {
	if o.race == nil || hi <= lo {
		return
	}
	if sys.ranks[rank].bytes(o.dstOff+lo, hi-lo) == nil {
		return
	}
	d := sys.s.Race()
	d.Access(o.race, sys.rankSpace(d, rank), o.dstOff+lo, o.dstOff+hi, race.Access{Info: o.rinfoWrite, Write: true})
}

// ginRaceSignal: o's signal lands on its slot at the peer, which held
// before (the detector's signal-slot checks see the add; GIN compares
// signals modulo 2^64, so passing it is no wrap and is not checked).
func (sys *System) ginRaceSignal(o *ginOp, slot int, before uint64) {
	d := sys.s.Race()
	if d == nil || o.race == nil {
		return
	}
	t := o.race
	sp := sys.rankSpace(d, o.peer)
	off := o.pg.slotOff(slot)
	info := &race.Info{Kind: race.KindFabric, OpKind: race.OpGinSignal, Who: o.rinfoWrite.Who, Op: o.ra.name()}
	d.Access(t, sp, off, off+8, race.Access{Info: info, Write: true, Atomic: true})
	d.Signal(t, sp, off, 8, before, before+o.ra.Value, 0, info)
	t.Release(d.AddrSync(sp, off))
}

// ginRaceWaitHeld: lane t's ncclGin::waitSignal for slot s of gr to reach
// least (in bits bits) held; call it before ginRaceAcquireSlot.
func (sys *System) ginRaceWaitHeld(t *kernel.Thread, gr *ginRank, s int, least uint64, bits int) {
	d, rt := sys.raceLane(t)
	if d == nil {
		return
	}
	mask := ^uint64(0)
	if bits < 64 {
		mask = uint64(1)<<bits - 1
	}
	who := t.Who()
	if i := strings.LastIndex(who, " lane "); i > 0 {
		who = who[:i] // the wave's lanes wait together
	}
	d.WaitHeld(rt, sys.rankSpace(d, gr.rank), gr.slotOff(s), fmt.Sprintf("ncclGin::waitSignal by %s on rank %d's signal %d ≥ %d", who, gr.rank, s, least), t.Lane(), least, mask)
}

// ginRaceReadSignal: lane t's ncclGin::readSignal of slot s of gr, which
// read v: a later waitSignal of t on the slot for more than v counts from
// it (the detector's baseline-read check). Call it before
// ginRaceAcquireSlot.
func (sys *System) ginRaceReadSignal(t *kernel.Thread, gr *ginRank, s int, v uint64) {
	d, rt := sys.raceLane(t)
	if d == nil {
		return
	}
	d.SignalRead(rt, sys.rankSpace(d, gr.rank), gr.slotOff(s), v, t.RaceInfo("ncclGin::readSignal", 2))
}

// ginRaceAcquireSlot: lane t's acquire load of slot s of gr.
func (sys *System) ginRaceAcquireSlot(t *kernel.Thread, gr *ginRank, s int) {
	d, rt := sys.raceLane(t)
	if d == nil {
		return
	}
	sp := sys.rankSpace(d, gr.rank)
	off := gr.slotOff(s)
	d.Access(rt, sp, off, off+8, race.Access{Info: t.RaceInfo("ncclGin signal read", 4), Atomic: true})
	rt.Acquire(d.AddrSync(sp, off))
}

// ginRaceReset: lane t's resetSignal, a plain store.
func (sys *System) ginRaceReset(t *kernel.Thread, gr *ginRank, s int) {
	d := sys.s.Race()
	if d == nil {
		return
	}
	sp := sys.rankSpace(d, gr.rank)
	off := gr.slotOff(s)
	d.Access(t.RaceThread(), sp, off, off+8, race.Access{Info: t.RaceInfo("ncclGin::resetSignal", 3), Write: true})
}

func sortConns(cs []*ginConn) {
	slices.SortFunc(cs, func(a, b *ginConn) int {
		if c := cmp.Compare(a.key.src, b.key.src); c != 0 {
			return c
		}
		if c := cmp.Compare(a.key.dst, b.key.dst); c != 0 {
			return c
		}
		return cmp.Compare(a.key.ctx, b.key.ctx)
	})
}

// raceLane is the detector and lane t's detector thread, or nil and nil if
// the detector is off or t has no thread of its own.
func (sys *System) raceLane(t *kernel.Thread) (*race.Detector, *race.Thread) {
	d := sys.s.Race()
	if d == nil {
		return nil, nil
	}
	rt := t.RaceThread()
	if rt == nil {
		return nil, nil
	}
	return d, rt
}
