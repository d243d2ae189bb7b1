package fabric

import (
	"fmt"
	"strings"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// ccoGda's completion calls: flush, flushPeer, flushAsync and wait, over
// the ops gda.go posted on the context's QPs.

// ---- completion ----

// Flush is ccoGda::flush: op's threads wait for the completion of every
// operation posted so far on this context's QPs to every GDA team peer,
// by any thread of the rank (a CQ covers the QP, not the poster). A
// completion is the responder's acknowledgement: the data is at the peer,
// which is more than GIN's flush promises.
func (gd *Gda) Flush(op kernel.Group) {
	gd.needWarp("ccoGda::flush", op)
	gd.call(op, gdaFlushCall, gdaArgs{call: "ccoGda::flush", all: true})
}

// FlushPeer is ccoGda::flush(peer): the same for one peer's QP.
func (gd *Gda) FlushPeer(op kernel.Group, mode GdaTeamMode, peer int) {
	gd.needWarp("ccoGda::flush", op)
	gd.call(op, gdaFlushCall, gdaArgs{call: "ccoGda::flush", mode: mode, peer: peer})
}

// FlushAsync is ccoGda::flushAsync: op's thread 0 gets a request for the
// operations posted so far on peer's QP; Wait waits for them. Other
// threads of op get a zero request (MORI writes outRequest from thread 0).
func (gd *Gda) FlushAsync(op kernel.Group, mode GdaTeamMode, peer int) GdaRequest {
	gd.call(op, gdaFlushAsyncCall, gdaArgs{call: "ccoGda::flushAsync", mode: mode, peer: peer})
	return gd.a.req
}

// Wait is ccoGda::wait: op's thread 0 waits for its request's operations
// to complete.
func (gd *Gda) Wait(op kernel.Group, req GdaRequest) {
	gd.needWarp("ccoGda::wait", op)
	gd.call(op, gdaWaitReqCall, gdaArgs{call: "ccoGda::wait", req: req})
}

// qpOps is the operations posted on rank gd's QP of its context to world
// peer w that have not completed.
func (gd *Gda) qpOps(w int) []*ginOp {
	c := gd.g.sys.gin.conns[ginConnKey{gd.dc.Rank, w, gd.ctx}]
	if c == nil {
		return nil
	}
	return append([]*ginOp(nil), c.wqes...)
}

func (gd *Gda) teamPeers() []int {
	var out []int
	for p := range gd.NRanks {
		if p == gd.Rank {
			continue
		}
		out = append(out, GdaPeerToWorld(gd.dc, p))
	}
	return out
}

var gdaFlushAsyncCall = &kernel.Call[*gdaArgs]{Name: "ccoGda::flushAsync", Run: func(g *kernel.Active, args []*gdaArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		a.req = GdaRequest{}
		if a.op.ThreadRank() != 0 {
			continue
		}
		w, err := a.gda.worldPeer(a.mode, a.peer)
		if err != nil {
			return t.Error(a.call, err)
		}
		ops := a.gda.qpOps(w)
		c := a.gda.g.sys.gin.connOf(a.gda.dc.Rank, w, a.gda.ctx)
		a.req = GdaRequest{QpIdx: w*a.gda.dc.GinContextCount + a.gda.ctx, PostIdx: uint64(len(c.wqes)), ops: ops, g: a.gda.g}
	}
	return nil
}}

var gdaWaitReqCall = &kernel.Call[*gdaArgs]{Name: "ccoGda::wait", Run: func(g *kernel.Active, args []*gdaArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		if a.op.ThreadRank() != 0 {
			continue
		}
		if a.req.g != nil && a.req.g != a.gda.g {
			return t.Error(a.call, fmt.Errorf("the request came from another dev comm"))
		}
		gdaAwait(g, t, a.gda.g, a.req.ops, "ccoGda::wait")
	}
	return nil
}}

var gdaFlushCall = &kernel.Call[*gdaArgs]{Name: "ccoGda::flush", Run: func(g *kernel.Active, args []*gdaArgs) error {
	// The coop's threads split the peers (MORI strides them over the
	// coop); all of them wait here, so the elected lane waits for all.
	for i, t := range g.Lanes() {
		a := args[i]
		if a.op.ThreadRank() != 0 {
			continue
		}
		gd := a.gda
		peers := gd.teamPeers()
		if !a.all {
			w, err := gd.worldPeer(a.mode, a.peer)
			if err != nil {
				return t.Error(a.call, err)
			}
			peers = []int{w}
		}
		var ops []*ginOp
		for _, w := range peers {
			ops = append(ops, gd.qpOps(w)...)
		}
		gdaAwait(g, t, gd.g, ops, a.call)
		if a.inc != nil {
			gr := gd.g
			c := a.inc.Counter
			gr.counter[c]++
			if rt := t.RaceThread(); rt != nil {
				rt.Release(&gr.ctrSync[c])
			}
			gr.cwl.Notify(uint64(c), uint64(c)+1)
		}
	}
	return nil
}}

// gdaAwait waits for every op's completion; the lane then acquires their
// settlement (a completion means the data reached the peer).
func gdaAwait(g *kernel.Active, t *kernel.Thread, gr *ginRank, ops []*ginOp, what string) {
	if len(ops) > 0 {
		g.Actor().Await(sim.Wait{List: gr.fwl, Lo: 0, Hi: 1, Pred: func() bool {
			for _, o := range ops {
				if !o.cqe {
					return false
				}
			}
			return true
		}, Text: func() string {
			var left []string
			for _, o := range ops {
				if !o.cqe {
					l, n := o.msg.Landed()
					left = append(left, fmt.Sprintf("%s on %s (%s → %s, %d/%d packets landed)", o.describe(), o.msg.QP().Name(), o.msg.QP().Src().Name(), o.msg.QP().Dst().Name(), l, n))
				}
			}
			return fmt.Sprintf("%v in %s: %d operations without a completion: %s", t, what, len(left), strings.Join(left, "; "))
		}})
	}
	if rt := t.RaceThread(); rt != nil {
		for _, o := range ops {
			rt.Acquire(&o.doneSync)
		}
	}
}
