package fabric

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// Kinds of the hang causes GIN names (sim.Cause.Kind).
const (
	// CauseGinSignalWaits: a rank waits on a GIN signal or counter that
	// nothing in flight will raise to the value.
	CauseGinSignalWaits sim.CauseKind = "gin-signal"
	// CauseGinBarrierWaits: a rank waits at a GIN barrier for members that
	// never arrive.
	CauseGinBarrierWaits sim.CauseKind = "gin-barrier"
)

// ginWait is what a wave waits for in GIN, for the hang report's cause.
type ginWait struct {
	rank, block, wave int
	text              func() (sim.CauseKind, string)
}

func (gs *ginSys) enter(g *kernel.Active, text func() (sim.CauseKind, string)) {
	t := g.Lanes()[0]
	gs.waits[g.Wave()] = &ginWait{rank: t.GPU(), block: t.BlockIdx(), wave: t.WaveIdx(), text: text}
}

func (gs *ginSys) leave(g *kernel.Active) { delete(gs.waits, g.Wave()) }

// diagnose returns GIN's causes (sim.LayerAPI), one per waiting wave, the
// waiting rank in Ranks so that ranks stuck the same way are said once.
func (gs *ginSys) diagnose() sim.Diagnosis {
	ws := make([]*ginWait, 0, len(gs.waits))
	for _, w := range gs.waits {
		ws = append(ws, w)
	}
	slices.SortFunc(ws, func(a, b *ginWait) int {
		if c := cmp.Compare(a.rank, b.rank); c != 0 {
			return c
		}
		if c := cmp.Compare(a.block, b.block); c != 0 {
			return c
		}
		return cmp.Compare(a.wave, b.wave)
	})
	var out sim.Diagnosis
	for _, w := range ws {
		k, txt := w.text()
		out.Causes = append(out.Causes, sim.Cause{Kind: k, Layer: sim.LayerAPI, Ranks: []int{w.rank}, Text: txt})
	}
	return out
}

// signalCause says why a waitSignal on slot s of gr for least is stuck.
func (sys *System) signalCause(gr *ginRank, s int, least uint64, bits int) (sim.CauseKind, string) {
	v := gr.load(s)
	if len(sys.ginSignalOps(gr, s)) > 0 {
		return CauseGinSignalWaits, fmt.Sprintf("in ncclGin::waitSignal for its signal %d to reach %d (%d bits); it holds %d and %s", s, least, bits, v, sys.ginSignalInflight(gr, s))
	}
	if r, ok := gr.baseRead[s]; ok && least > r.v && least-r.v <= v {
		return CauseGinSignalWaits, fmt.Sprintf("in ncclGin::waitSignal for its signal %d to reach %d (%d bits); it holds %d and nothing in flight will raise it: the baseline was read too late: %s's readSignal at %v returned %d, which already counted the signal of %s that landed at %v, so waiting for baseline + %d waits for a signal more than the producers send (a baseline must be read before anything lets a producer signal, such as the barrier that orders that producer: a per-block barrier orders only the blocks of its own index)",
			s, least, bits, v, r.who, r.at, r.v, r.op.describe(), r.opAt, least-r.v)
	}
	return CauseGinSignalWaits, fmt.Sprintf("in ncclGin::waitSignal for its signal %d to reach %d (%d bits); it holds %d and nothing in flight will raise it: the producers signalled fewer times than the wait expects (the expected value must count every signal of every producer of this epoch), a producer posted to another signal index, or the slot was reset after signals landed", s, least, bits, v)
}

// ginSignalInflight names the operations in flight whose remote action
// targets rank gr's slot s: the NIC, QP and operation a waiter waits for.
func (sys *System) ginSignalInflight(gr *ginRank, s int) string {
	in := sys.ginSignalOps(gr, s)
	if len(in) == 0 {
		return "no operation in flight signals it: it is waiting for an operation nobody posted (or one that already settled without reaching the value)"
	}
	return "in flight to it: " + strings.Join(in, "; ")
}

// ginSignalOps describes each operation in flight that will signal slot s
// of gr.
func (sys *System) ginSignalOps(gr *ginRank, s int) []string {
	var in []string
	for _, c := range sys.gin.sortedConns() {
		if c.key.dst != gr.rank {
			continue
		}
		for _, o := range c.open {
			if o.pg == gr && o.slot() == s && !o.signaled {
				if c.sq != nil {
					in = append(in, fmt.Sprintf("%s (%s)", o.describe(), o.sdmaWhere()))
					continue
				}
				l, n := o.msg.Landed()
				lost := ""
				if why, ok := o.msg.QP().Unreachable(); ok {
					lost = fmt.Sprintf("; %s is unreachable from %s (%s): its packets are lost and it never lands", o.msg.QP().Dst().Name(), o.msg.QP().Src().Name(), why)
				}
				in = append(in, fmt.Sprintf("%s (%s, %s → %s, %d/%d packets landed%s)", o.describe(), c.qp.Name(), c.qp.Src().Name(), c.qp.Dst().Name(), l, n, lost))
			}
		}
	}
	return in
}

func (o *ginOp) slot() int {
	if o.ra.kind == sigNone && o.kind != ginBarrier {
		return -1
	}
	return int(o.ra.Signal)
}

func (sys *System) ginCounterInflight(gr *ginRank, c int) string {
	n := 0
	for _, ops := range gr.pending {
		for _, o := range ops {
			if o.la.set && int(o.la.Counter) == c && !o.consumed {
				n++
			}
		}
	}
	return fmt.Sprintf("%d operations with ncclGin_CounterInc on it not yet consumed", n)
}

func (gs *ginSys) sortedConns() []*ginConn {
	out := make([]*ginConn, 0, len(gs.conns))
	for _, c := range gs.conns {
		out = append(out, c)
	}
	sortConns(out)
	return out
}
