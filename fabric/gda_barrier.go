package fabric

import (
	"fmt"

	"github.com/emud-dev/emud/kernel"
)

// ccoGdaBarrierSession, the GDA team's barrier over the rail barrier
// slots, built on gda.go's signal posts.

// ---- the GDA barrier ----

// GdaBarrierSession is ccoGdaBarrierSession<P, Coop>: a barrier over the
// GDA team in the rail barrier slots (DevComm.RailGdaBarrier).
//
// Sync is MORI's: every member posts an atomic +1 to slot signal0 +
// index·nRanks + (its GDA rank) at every other member, then waits (and
// consumes 1 of) slot signal0 + index·nRanks + p for each member p. MORI
// sizes the pool nBarriers × nNodes, which fits the rail team; a team
// larger than that (FULL or CROSSNODE with several GPUs per node) would
// index past it, and Sync refuses. Under CROSSNODE the ranks of a node
// share one GDA rank (the node's first), so their arrivals land on the
// same slot and the barrier hangs; the emulator does what MORI's code does.
type GdaBarrierSession struct {
	t     *kernel.Thread
	gda   *Gda
	h     GdaBarrierHandle
	index int
	a     gdaBarArgs
}

type gdaBarArgs struct {
	b    *GdaBarrierSession
	coop kernel.Group
}

// NewGdaBarrierSession is the ccoGdaBarrierSession constructor.
func NewGdaBarrierSession(coop kernel.Group, gda *Gda, h GdaBarrierHandle, index uint32) *GdaBarrierSession {
	const call = "ccoGdaBarrierSession"
	t := coop.Thread()
	if gda == nil || gda.t != t {
		t.Fail(call, fmt.Errorf("the ccoGda belongs to another thread"))
	}
	g := gda.g
	if h != g.gdaBar {
		t.Fail(call, fmt.Errorf("barrier handle %+v is not this dev comm's railGdaBarrier %+v", h, g.gdaBar))
	}
	if int(index) >= h.NBarriers {
		why := ""
		if h.NBarriers == 0 {
			why = " (MORI enables the rail barriers only with GDA QPs and more than one node)"
		}
		t.Fail(call, fmt.Errorf("rank %d: barrier index %d is not below railGdaBarrier.nBarriers %d%s", g.rank, index, h.NBarriers, why))
	}
	b := &GdaBarrierSession{t: t, gda: gda, h: h, index: int(index)}
	b.a.b = b
	return b
}

// GdaBarrier is ccoGdaBarrier: a session and its Sync in one call.
func GdaBarrier(coop kernel.Group, gda *Gda, h GdaBarrierHandle, index uint32) {
	NewGdaBarrierSession(coop, gda, h, index).Sync(coop)
}

// Sync is ccoGdaBarrierSession::sync.
func (b *GdaBarrierSession) Sync(coop kernel.Group) {
	const call = "ccoGdaBarrierSession::sync"
	if coop.Thread() != b.t {
		b.t.Fail(call, fmt.Errorf("coop belongs to %v, not to this session's thread", coop.Thread()))
	}
	b.gda.needWarp(call, coop)
	gd := b.gda
	nNodes := gd.dc.NRanks / gd.dc.LsaSize
	if need, have := (b.index+1)*gd.NRanks, b.h.NBarriers*nNodes; need > have {
		b.t.Fail(call, fmt.Errorf("barrier %d over a GDA team of %d ranks (%v) uses slots up to signal0+%d, but MORI sizes the pool for the rail team: %d barriers × %d nodes = %d slots; use CCO_GDA_CONNECTION_RAIL", b.index, gd.NRanks, gd.dc.GdaConnType, need, b.h.NBarriers, nNodes, have))
	}
	coop.Sync()
	b.a.coop = coop
	kernel.Converge(b.t, gdaBarCall, &b.a)
	coop.Sync()
}

var gdaBarCall = &kernel.Call[*gdaBarArgs]{Name: "ccoGdaBarrierSession::sync", Run: func(g *kernel.Active, args []*gdaBarArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		if a.coop.ThreadRank() != 0 {
			continue
		}
		if err := a.b.sync(g, t); err != nil {
			return t.Error("ccoGdaBarrierSession::sync", err)
		}
	}
	return nil
}}

func (b *GdaBarrierSession) sync(g *kernel.Active, t *kernel.Thread) error {
	gd := b.gda
	gr := gd.g
	sys := gr.sys
	base := int(b.h.Signal0) + b.index*gd.NRanks
	// Phase 1: signal every peer, rotated from this rank as MORI does.
	var order []int
	for i := range gd.NRanks - 1 {
		order = append(order, (gd.Rank+1+i)%gd.NRanks)
	}
	for _, p := range order {
		w := GdaPeerToWorld(gd.dc, p)
		pg := sys.comms[w].ginOf(gr)
		if pg == nil {
			return fmt.Errorf("rank %d has no dev comm matching rank %d's", w, gd.dc.Rank)
		}
		o := &ginOp{kind: ginBarrier, rank: gd.dc.Rank, peer: w, ctx: gd.ctx, who: t.String(), g: gr, pg: pg, gda: true,
			ra: RemoteAction{kind: sigWeakAdd, Signal: GinSignal(base + gd.Rank), Value: 1}}
		if sys.strongOnWire() {
			o.ra.kind, o.strong = sigStrongAdd, true
		}
		sys.gdaPost(t, o)
	}
	hint := ""
	if gd.dc.GdaConnType == GdaConnectionCrossNode && gd.dc.LsaSize > 1 {
		hint = fmt.Sprintf(". Under %v every rank of a node has the node's first rank as its GDA rank, so all of a node's ranks arrive on one slot and the slots of the others stay 0: MORI's barrier needs CCO_GDA_CONNECTION_RAIL (or one GPU per node)", gd.dc.GdaConnType)
	}
	// Phase 2: each peer's reciprocal signal.
	for _, p := range order {
		sys.gdaWaitSlot(g, t, gr, base+p, 1, 64, fmt.Sprintf("ccoGdaBarrierSession::sync (barrier %d, from GDA rank %d = world rank %d)", b.index, p, GdaPeerToWorld(gd.dc, p)), hint)
	}
	return nil
}
