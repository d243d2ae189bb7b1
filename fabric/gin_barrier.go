package fabric

import (
	"fmt"
	"strings"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// GinBarrierSession is ncclGinBarrierSession<Coop> as one thread sees it:
// a network barrier over a team, on one GIN context or on all of them
// (ncclGinAllContexts).
//
// The emulator keeps the barrier in the dev comm's barrier slots (after
// its signals): slot First + index·nRanks + r counts the arrivals of world
// rank r at barrier index. Sync's elected thread (thread 0 of the coop)
// posts one arrival per context to every other member — a strong signal
// when the fence includes Put, so it lands only after every earlier put of
// that context to that member has settled, which is what the fence
// promises; with GinFenceGet it first waits for its own gets — then waits
// until every member's count reaches the session's epoch.
type GinBarrierSession struct {
	t      *kernel.Thread
	gin    *Gin
	team   Team
	index  int
	allCtx bool
	a      ginBarArgs
}

type ginBarArgs struct {
	b     *GinBarrierSession
	coop  kernel.Group
	fence GinFence
}

// NewGinBarrierSession is ncclGinBarrierSession(coop, gin, team, handle,
// index) on gin's context. index must be below handle.NBarriers.
func NewGinBarrierSession(coop kernel.Group, gin *Gin, team Team, h GinBarrierHandle, index uint32) *GinBarrierSession {
	return newGinBarrier(coop, gin, team, h, index, false)
}

// NewGinBarrierSessionAllContexts is the session on ncclGinAllContexts(comm):
// its fence covers every GIN context of the dev comm (operations sharded
// over contexts, as over several NICs).
func NewGinBarrierSessionAllContexts(coop kernel.Group, dc DevComm, team Team, h GinBarrierHandle, index uint32) *GinBarrierSession {
	return newGinBarrier(coop, NewGin(coop.Thread(), dc, 0), team, h, index, true)
}

func newGinBarrier(coop kernel.Group, gin *Gin, team Team, h GinBarrierHandle, index uint32, all bool) *GinBarrierSession {
	const call = "ncclGinBarrierSession"
	t := coop.Thread()
	if gin == nil || gin.t != t {
		t.Fail(call, fmt.Errorf("the ncclGin belongs to another thread"))
	}
	g := gin.g
	if h.First != g.nSig || h.NBarriers != g.nBar {
		t.Fail(call, fmt.Errorf("barrier handle %+v is not this dev comm's GinBarrier {%d %d}", h, g.nSig, g.nBar))
	}
	if int(index) >= g.nBar {
		t.Fail(call, fmt.Errorf("rank %d: barrier index %d is not below ginBarrierCount %d", g.rank, index, g.nBar))
	}
	if team.NRanks < 1 || team.Rank < 0 || team.Rank >= team.NRanks {
		t.Fail(call, fmt.Errorf("team %+v: rank outside the team", team))
	}
	b := &GinBarrierSession{t: t, gin: gin, team: team, index: int(index), allCtx: all}
	b.a.b = b
	return b
}

func (b *GinBarrierSession) slot(worldRank int) int {
	g := b.gin.g
	return g.nSig + b.index*g.barSize + worldRank
}

// Sync is ncclGinBarrierSession::sync: every thread of coop returns once
// every member of the team has arrived; with GinFencePut the puts members
// issued to this rank before their arrival are visible, with GinFenceGet
// this rank's earlier gets have landed.
func (b *GinBarrierSession) Sync(coop kernel.Group, fence GinFence) {
	if coop.Thread() != b.t {
		b.t.Fail("ncclGinBarrierSession::sync", fmt.Errorf("coop belongs to %v, not to this session's thread", coop.Thread()))
	}
	if fence&^(GinFencePut|GinFenceGet) != 0 {
		b.t.Fail("ncclGinBarrierSession::sync", fmt.Errorf("unknown fence bits %#x", uint8(fence)))
	}
	coop.Sync()
	b.a.coop, b.a.fence = coop, fence
	kernel.Converge(b.t, ginBarCall, &b.a)
	coop.Sync()
}

var ginBarCall = &kernel.Call[*ginBarArgs]{Name: "ncclGinBarrierSession::sync", Run: func(g *kernel.Active, args []*ginBarArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		if a.coop.ThreadRank() != 0 {
			continue
		}
		if err := a.b.sync(g, t, a.fence); err != nil {
			return t.Error("ncclGinBarrierSession::sync", err)
		}
	}
	return nil
}}

func (b *GinBarrierSession) sync(g *kernel.Active, t *kernel.Thread, fence GinFence) error {
	gr := b.gin.g
	sys := gr.sys
	me := b.gin.dc.Rank
	ctxs := []int{b.gin.ctx}
	if b.allCtx {
		ctxs = ctxs[:0]
		for c := range gr.nCtx {
			ctxs = append(ctxs, c)
		}
	}
	if fence&GinFenceGet != 0 {
		var gets []*ginOp
		for k, ops := range gr.pending {
			if k.t == t {
				for _, o := range ops {
					if o.kind == ginGet {
						gets = append(gets, o)
					}
				}
			}
		}
		g.Actor().Await(sim.Wait{List: gr.fwl, Lo: 0, Hi: 1, Pred: func() bool {
			for _, o := range gets {
				if !o.consumed {
					return false
				}
			}
			return true
		}, What: fmt.Sprintf("%v in ncclGinBarrierSession::sync: its gets to land (GinFenceGet)", t)})
		if rt := t.RaceThread(); rt != nil {
			for _, o := range gets {
				rt.Acquire(&o.doneSync)
			}
		}
	}
	var peers []int
	for r := range b.team.NRanks {
		if r == b.team.Rank {
			continue
		}
		w := b.gin.dc.TeamRankToWorld(b.team, r)
		if w < 0 || w >= len(sys.ranks) {
			return fmt.Errorf("team rank %d is world rank %d, outside the %d ranks", r, w, len(sys.ranks))
		}
		peers = append(peers, w)
	}
	for _, p := range peers {
		pg := sys.comms[p].ginOf(gr)
		if pg == nil {
			return fmt.Errorf("rank %d has no GIN dev comm matching rank %d's", p, me)
		}
		for _, c := range ctxs {
			o := &ginOp{kind: ginBarrier, rank: me, peer: p, ctx: c, who: t.String(), g: gr, pg: pg,
				ra: RemoteAction{kind: sigWeakAdd, Signal: GinSignal(b.slot(me)), Value: 1}, strong: fence&GinFencePut != 0}
			if o.strong {
				o.ra.kind = sigStrongAdd
			}
			sys.ginPost(t, o)
		}
	}
	gr.epochs[b.index] += uint64(len(ctxs))
	target := gr.epochs[b.index]
	reached := func() bool {
		for _, p := range peers {
			if !ginReached(gr.load(b.slot(p)), target, 64) {
				return false
			}
		}
		return true
	}
	lo, hi := gr.slotOff(b.slot(0)), gr.slotOff(b.slot(gr.barSize-1))+8
	sys.gin.enter(g, func() (sim.CauseKind, string) {
		var miss []string
		for _, p := range peers {
			if v := gr.load(b.slot(p)); !ginReached(v, target, 64) {
				miss = append(miss, fmt.Sprint(p))
			}
		}
		return CauseGinBarrierWaits, fmt.Sprintf("at GIN barrier %d for ranks %s, which have not arrived at epoch %d: a member skipped the barrier, used another index, or runs fewer syncs", b.index, strings.Join(miss, ", "), target)
	})
	defer sys.gin.leave(g)
	st := sys.awaitAbortable(g.Actor(), me, sim.Wait{List: sys.ranks[me].wl, Lo: lo, Hi: hi, Pred: reached, Text: func() string {
		var miss []string
		for _, p := range peers {
			if v := gr.load(b.slot(p)); !ginReached(v, target, 64) {
				miss = append(miss, fmt.Sprintf("rank %d (count %d)", p, v))
			}
		}
		return fmt.Sprintf("%v in ncclGinBarrierSession::sync (barrier %d): every member's arrival count at %d; missing %s", t, b.index, target, strings.Join(miss, ", "))
	}}, -1)
	if st != WaitOK {
		return nil // the abort flag: NCCL's barrier returns too
	}
	for _, p := range peers {
		sys.ginRaceAcquireSlot(t, gr, b.slot(p))
	}
	return nil
}
