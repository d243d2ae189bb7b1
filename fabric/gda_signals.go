package fabric

import (
	"fmt"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// ccoGda's signal slots and counters: reading, waiting on and resetting
// them (the device calls of gda.go post the remote actions that raise
// them).

// ---- signals ----

func (gd *Gda) checkSlot(call string, s GdaSignal, bits int) {
	if int(s) >= gd.g.nSig {
		gd.t.Fail(call, fmt.Errorf("signal %d is not below the dev comm's gdaSignalCount %d", s, gd.g.nSig))
	}
	if bits < 1 || bits > 64 {
		gd.t.Fail(call, fmt.Errorf("bits %d outside [1, 64]", bits))
	}
}

func gdaMask(bits int) uint64 {
	if bits >= 64 {
		return ^uint64(0)
	}
	return uint64(1)<<bits - 1
}

// ReadSignal is ccoGda::readSignal: the slot's value less what waits have
// consumed (its shadow), at bits.
func (gd *Gda) ReadSignal(id GdaSignal, bits int) uint64 {
	gd.checkSlot("ccoGda::readSignal", id, bits)
	g := gd.g
	v := (g.load(int(id)) - g.shadow[id]) & gdaMask(bits)
	g.sys.ginRaceAcquireSlot(gd.t, g, int(id))
	return v
}

// WaitSignal is ccoGda::waitSignal: op's thread 0 waits until the slot's
// value less its shadow reaches least (a plain unsigned compare at bits,
// not GIN's rolling one), then consumes least (shadow += least).
func (gd *Gda) WaitSignal(op kernel.Group, id GdaSignal, least uint64, bits int) {
	gd.checkSlot("ccoGda::waitSignal", id, bits)
	gd.call(op, gdaWaitCall, gdaArgs{call: "ccoGda::waitSignal", slot: int(id), least: least, bits: bits})
}

// ResetSignal is ccoGda::resetSignal: the slot and its shadow become 0 (a
// plain store, which races with any signal it is not ordered with).
func (gd *Gda) ResetSignal(id GdaSignal) {
	gd.checkSlot("ccoGda::resetSignal", id, 64)
	g := gd.g
	g.sys.ginRaceReset(gd.t, g, int(id))
	g.store(int(id), 0)
	g.shadow[id] = 0
}

// gdaWaitSlot is waitSignalImpl on slot s of gr for lane t of g.
func (sys *System) gdaWaitSlot(g *kernel.Active, t *kernel.Thread, gr *ginRank, s int, least uint64, bits int, what, hint string) {
	mask := gdaMask(bits)
	delta := func() uint64 { return (gr.load(s) - gr.shadow[s]) & mask }
	off := gr.slotOff(s)
	w := sim.Wait{List: sys.ranks[gr.rank].wl, Lo: off, Hi: off + 8,
		Pred: func() bool { return delta() >= least },
		Text: func() string {
			return fmt.Sprintf("%v in %s: rank %d's signal %d to reach %d past its shadow %d (%d bits); it holds %d; %s",
				t, what, gr.rank, s, least, gr.shadow[s], bits, gr.load(s), sys.ginSignalInflight(gr, s))
		}}
	sys.gin.enter(g, func() (sim.CauseKind, string) {
		return CauseGinSignalWaits, fmt.Sprintf("in %s for its signal %d to rise %d past its shadow %d; it holds %d (delta %d); %s%s",
			what, s, least, gr.shadow[s], gr.load(s), delta(), sys.ginSignalInflight(gr, s), hint)
	})
	g.Actor().Await(w)
	sys.gin.leave(g)
	gr.shadow[s] = (gr.shadow[s] + least) & mask
	sys.ginRaceAcquireSlot(t, gr, s)
}

var gdaWaitCall = &kernel.Call[*gdaArgs]{Name: "ccoGda::waitSignal", Run: func(g *kernel.Active, args []*gdaArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		if a.op.ThreadRank() != 0 {
			continue
		}
		gr := a.gda.g
		sys := gr.sys
		if !a.ctr {
			sys.gdaWaitSlot(g, t, gr, a.slot, a.least, a.bits, "ccoGda::waitSignal", "")
			continue
		}
		c, mask := a.slot, gdaMask(a.bits)
		w := sim.Wait{List: gr.cwl, Lo: uint64(c), Hi: uint64(c) + 1,
			Pred: func() bool { return gr.counter[c]&mask >= a.least },
			Text: func() string {
				return fmt.Sprintf("%v in ccoGda::waitCounter: rank %d's counter %d to reach %d (%d bits); it holds %d: a counter rises only by ccoGda::counter",
					t, gr.rank, c, a.least, a.bits, gr.counter[c])
			}}
		sys.gin.enter(g, func() (sim.CauseKind, string) {
			return CauseGinSignalWaits, fmt.Sprintf("in ccoGda::waitCounter for its counter %d to reach %d; it holds %d, and only ccoGda::counter raises it", c, a.least, gr.counter[c])
		})
		g.Actor().Await(w)
		sys.gin.leave(g)
		if rt := t.RaceThread(); rt != nil {
			rt.Acquire(&gr.ctrSync[c])
		}
	}
	return nil
}}

// ---- counters ----

func (gd *Gda) checkCounter(call string, c GdaCounter, bits int) {
	if int(c) >= len(gd.g.counter) {
		gd.t.Fail(call, fmt.Errorf("counter %d is not below the dev comm's gdaCounterCount %d", c, len(gd.g.counter)))
	}
	if bits < 1 || bits > 64 {
		gd.t.Fail(call, fmt.Errorf("bits %d outside [1, 64]", bits))
	}
}

// Counter is ccoGda::counter: op's threads wait for the completion of
// every operation posted on this context's QPs to the GDA team (MORI's
// quietUntil, CQ polls), then thread 0 adds 1 to local's counter (nil:
// ccoGda_NoSignal, the quiet alone). Unlike GIN's ncclGin_CounterInc it is
// not attached to an operation, and it counts completions (the peer
// acknowledged), not source reads.
func (gd *Gda) Counter(op kernel.Group, local *GdaCounterInc) {
	gd.needWarp("ccoGda::counter", op)
	if local != nil {
		gd.checkCounter("ccoGda::counter", local.Counter, 64)
	}
	gd.call(op, gdaFlushCall, gdaArgs{call: "ccoGda::counter", all: true, inc: local})
}

// ReadCounter is ccoGda::readCounter.
func (gd *Gda) ReadCounter(c GdaCounter, bits int) uint64 {
	gd.checkCounter("ccoGda::readCounter", c, bits)
	if t := gd.t.RaceThread(); t != nil {
		t.Acquire(&gd.g.ctrSync[c])
	}
	return gd.g.counter[c] & gdaMask(bits)
}

// WaitCounter is ccoGda::waitCounter: a plain compare (value at bits ≥
// least), not rolling.
func (gd *Gda) WaitCounter(op kernel.Group, c GdaCounter, least uint64, bits int) {
	gd.checkCounter("ccoGda::waitCounter", c, bits)
	gd.call(op, gdaWaitCall, gdaArgs{call: "ccoGda::waitCounter", slot: int(c), least: least, bits: bits, ctr: true})
}

// ResetCounter is ccoGda::resetCounter.
func (gd *Gda) ResetCounter(c GdaCounter) {
	gd.checkCounter("ccoGda::resetCounter", c, 64)
	gd.g.counter[c] = 0
	gd.g.cwl.Notify(uint64(c), uint64(c)+1)
}
