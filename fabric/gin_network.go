package fabric

import (
	"fmt"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/nic"
)

// The network side of ncclGin: what happens to an operation gin_device.go
// issued once it is on the wire (packets, consumption, settling, the
// remote signal).

// ---- the network side ----

// ginPost puts o on the wire: a put's packets read the source as they
// leave and land at the destination; a get asks the peer's NIC, whose
// packets read there and land here.
func (sys *System) ginPost(t *kernel.Thread, o *ginOp) {
	if sys.sdmaFor(o) {
		sys.ginPostSdma(t, o)
		return
	}
	gs := sys.gin
	sys.ginRaceStart(t, o)
	src, dst := o.rank, o.peer
	if o.kind == ginGet {
		src, dst = o.peer, o.rank
	}
	o.conn = gs.connOf(o.rank, o.peer, o.ctx)
	if o.kind != ginGet {
		o.conn.open = append(o.conn.open, o) // strong signals order after it
	}
	// A get's data comes back from the peer's NIC.
	qp := gs.connOf(src, dst, o.ctx).qp
	phantom := (o.kind == ginPut || o.kind == ginGet) && sys.ranks[src].bytes(o.srcOff, 0) == nil
	if (o.kind == ginPut || o.kind == ginGet) && !phantom && o.bytes > 0 {
		o.data = make([]byte, o.bytes)
	}
	m := &nic.Message{Op: o.describe(), Bytes: o.bytes}
	m.Read = func(lo, hi uint64) {
		switch {
		case o.kind == ginPutValue:
			copy(o.data[lo:hi], o.value[lo:hi])
		case o.data != nil:
			copy(o.data[lo:hi], sys.ranks[src].bytes(o.srcOff+lo, hi-lo))
		}
		sys.ginRaceRead(o, src, lo, hi)
	}
	m.Sent = func() {
		if o.kind != ginGet {
			sys.ginConsumed(o)
		}
	}
	m.Land = func(lo, hi uint64) {
		if o.data != nil {
			copy(sys.ranks[dst].bytes(o.dstOff+lo, hi-lo), o.data[lo:hi])
		}
		sys.ginRaceWrite(o, dst, lo, hi)
		if hi > lo {
			sys.ranks[dst].wl.Notify(o.dstOff+lo, o.dstOff+hi)
		}
	}
	m.Done = func() {
		sys.ginSettled(o)
		if o.gda {
			sys.gdaDone(o)
		}
	}
	o.msg = m
	if o.kind == ginPutValue {
		o.data = make([]byte, o.bytes)
	}
	qp.Post(m)
}

// ginConsumed: o's source has been read (put) or its data landed (get):
// the local action and flush.
func (sys *System) ginConsumed(o *ginOp) {
	o.consumed = true
	rt := o.race
	if o.raceRd != nil {
		rt = o.raceRd // GIN over SDMA: the source reads alone
	}
	if rt != nil {
		rt.Release(&o.sentSync)
	}
	if o.la.set {
		g := o.g
		g.counter[o.la.Counter]++
		if rt != nil {
			rt.Release(&g.ctrSync[o.la.Counter])
		}
		g.cwl.Notify(uint64(o.la.Counter), uint64(o.la.Counter)+1)
	}
	o.g.fwl.Notify(0, 1)
}

// ginSettled: every packet of o has landed. A weak signal (or none) is
// applied now; a strong one once every earlier operation of the
// connection has settled, which the connection's settled prefix tracks.
func (sys *System) ginSettled(o *ginOp) {
	o.settled = true
	sys.s.Trace(sys.gin.tk, o.conn.subj, uint64(o.kind), o.dstOff, o.bytes)
	if o.race != nil {
		o.race.Release(&o.doneSync)
	}
	if o.kind == ginGet {
		sys.ginConsumed(o)
		return
	}
	if !o.strong {
		sys.ginSignal(o)
	}
	c := o.conn
	for len(c.open) > 0 && c.open[0].settled {
		h := c.open[0]
		c.open = c.open[1:]
		if h.strong {
			if h.race != nil {
				h.race.Acquire(&c.prefix) // every earlier operation's settlement
			}
			sys.ginSignal(h)
		}
		if h.race != nil {
			h.race.Release(&c.prefix)
		}
	}
}

// ginSignal applies o's remote action at the peer.
// ginSignalMode records whether o's signal is an Inc or an Add on its
// slot; in debug mode mixing them without a reset fails the run (false).
func (sys *System) ginSignalMode(o *ginOp) bool {
	pg, slot := o.pg, int(o.ra.Signal)
	mode := uint8(2)
	if o.ra.inc() {
		mode = 1
	}
	if m := pg.mode[slot]; m != 0 && m != mode && sys.debug {
		sys.s.Fail(fmt.Errorf("GIN debug: %s by %s on rank %d's signal %d, which a %s raised since its last reset: SignalInc may not be mixed with other signal-modifying operations without an intervening resetSignal",
			o.ra.name(), o.who, o.peer, slot, map[uint8]string{1: "SignalInc", 2: "SignalAdd"}[m]))
		return false
	}
	pg.mode[slot] = mode
	return true
}

func (sys *System) ginSignal(o *ginOp) {
	if o.ra.kind == sigNone && o.kind != ginBarrier {
		return
	}
	pg := o.pg
	slot := int(o.ra.Signal)
	if !sys.ginSignalMode(o) {
		return
	}
	pg.lastSig[slot], pg.lastSigAt[slot] = o, sys.s.Now()
	sys.ginRaceSignal(o, slot, pg.load(slot))
	pg.store(slot, pg.load(slot)+o.ra.Value)
	o.signaled = true
}
