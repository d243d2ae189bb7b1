package fabric

import (
	"fmt"
	"sort"
	"strings"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// diagnosis keeps what every wave is blocked on so that a hang report can
// name the misuse: the unsubmitted group behind a flush, the barrier index
// a peer never arrived at.
type diagnosis struct {
	sys   *System
	waits map[*kernel.Wave]*waitInfo
}

type waitInfo struct {
	rank, block, wave int
	call              string
	mb                *mbar           // flush, flushSmem, barrier arrive
	bar               *BarrierSession // barrier wait
	slots             []slotWait
}

func newDiagnosis(sys *System) *diagnosis {
	d := &diagnosis{sys: sys, waits: map[*kernel.Wave]*waitInfo{}}
	sys.s.AddDiagnoser(sim.LayerAPI, "fabric", d.diagnose)
	return d
}

func (d *diagnosis) enterFlush(g *kernel.Active, m *mbar, call string) *waitInfo {
	t := g.Lanes()[0]
	wi := &waitInfo{rank: t.GPU(), block: t.BlockIdx(), wave: t.WaveIdx(), call: call, mb: m}
	d.waits[g.Wave()] = wi
	return wi
}

func (d *diagnosis) enterBarrier(g *kernel.Active, b *BarrierSession, slots []slotWait) *waitInfo {
	t := g.Lanes()[0]
	wi := &waitInfo{rank: t.GPU(), block: t.BlockIdx(), wave: t.WaveIdx(), call: "barrier wait", bar: b, slots: slots}
	d.waits[g.Wave()] = wi
	return wi
}

func (d *diagnosis) leave(w *kernel.Wave) { delete(d.waits, w) }

// text is what the hang report shows for the waiting wave.
func (wi *waitInfo) text() string {
	if b := wi.bar; b != nil {
		w := wi.pending()
		got := b.sys.load32(wi.rank, w.off)
		return fmt.Sprintf("CFT barrier %s on rank %d: inbox granule at %#x holds %d, waits for %d", barName(b.index, b.multimem), wi.rank, w.off, got, w.target)
	}
	m := wi.mb
	return fmt.Sprintf("%s on %s: phase %d, %d arrival(s) pending, tx-count %d, %d op(s) in flight", wi.call, m.name, m.phase, m.pending, m.tx, m.inflight)
}

// pending is the first polled slot not yet reached (or the first slot).
func (wi *waitInfo) pending() slotWait {
	for _, w := range wi.slots {
		if !rollingReached(wi.bar.sys.load32(wi.rank, w.off), w.target) {
			return w
		}
	}
	return wi.slots[0]
}

// diagnose returns the fabric's causes (sim.LayerAPI): a flush behind
// unsubmitted operations, a barrier a peer never arrived at.
func (d *diagnosis) diagnose() sim.Diagnosis {
	ws := make([]*waitInfo, 0, len(d.waits))
	for _, wi := range d.waits {
		ws = append(ws, wi)
	}
	sort.Slice(ws, func(i, j int) bool {
		a, b := ws[i], ws[j]
		if a.rank != b.rank {
			return a.rank < b.rank
		}
		if a.block != b.block {
			return a.block < b.block
		}
		return a.wave < b.wave
	})
	var out sim.Diagnosis
	for _, wi := range ws {
		// The text is the words after who waits (sim.Cause.Ranks), with no
		// rank of its own, so waits that differ only by rank are said once.
		c := sim.Cause{Kind: CauseFlushWaits, Layer: sim.LayerAPI, Ranks: []int{wi.rank}}
		if wi.bar != nil {
			c.Kind, c.Text = CauseBarrierWaits, d.explainBarrier(wi)
		} else {
			c.Text = d.explainFlush(wi)
		}
		if c.Text != "" {
			out.Causes = append(out.Causes, c)
		}
	}
	return out
}

// Kinds of the hang causes the fabric names (sim.Cause.Kind).
const (
	// CauseBarrierWaits: a rank waits at a CFT barrier for arrivals that
	// never come.
	CauseBarrierWaits sim.CauseKind = "cft-barrier"
	// CauseFlushWaits: a flush waits for operations that were issued but
	// never submitted, or that cannot complete.
	CauseFlushWaits sim.CauseKind = "cft-flush"
)

// explainFlush says why the flush waits, after "rank R waits".
func (d *diagnosis) explainFlush(wi *waitInfo) string {
	m := wi.mb
	own := fmt.Sprintf(" on rank %d", wi.rank)
	name := strings.TrimPrefix(m.name, fmt.Sprintf("rank %d ", wi.rank))
	if n, by := m.unsubmitted(); n > 0 {
		var parts []string
		for _, is := range by {
			kinds := map[string]int{}
			for _, o := range is.unsub {
				kinds[o.call()]++
			}
			var ks []string
			for k, c := range kinds {
				ks = append(ks, fmt.Sprintf("%s ×%d", k, c))
			}
			sort.Strings(ks)
			parts = append(parts, fmt.Sprintf("%s (%s)", strings.TrimSuffix(is.who(), own), strings.Join(ks, ", ")))
		}
		return fmt.Sprintf("in ncclCft %s on %s for %d operation(s) that were issued but never submitted, by %s: every group that issues must call submit before flushSmem and flush",
			wi.call, name, n, strings.Join(parts, "; "))
	}
	if m.pending > 0 && wi.call == "flush" {
		return fmt.Sprintf("in ncclCft flush on %s for the phase's arrival, which only the elected thread of the flush's coop makes", name)
	}
	return ""
}

// explainBarrier says what the barrier waits for and which peers owe an
// arrival, after "rank R waits". The inbox offset is the same on every rank
// waiting for the same peer, so their causes merge.
func (d *diagnosis) explainBarrier(wi *waitInfo) string {
	b := wi.bar
	sys := d.sys
	me := wi.rank
	pw := wi.pending()
	got := sys.load32(me, pw.off)
	head := fmt.Sprintf("at CFT barrier %s in block %d for its inbox at %#x to reach %d, it holds %d",
		barName(b.index, b.multimem), wi.block, pw.off, pw.target, got)
	// Which peers owe an arrival.
	var missing []string
	world := func(teamRank int) int { return me + (teamRank-b.team.Rank)*b.team.Stride }
	need := b.sys.bar(barKey{me, b.index, b.multimem}).arrivals
	for p := 0; p < b.team.NRanks; p++ {
		if p == b.team.Rank && !b.multimem {
			continue
		}
		peer := world(p)
		if !b.multimem && rollingReached(sys.load32(me, b.ucInbox(p)), pw.target) {
			continue
		}
		st := sys.bar(barKey{peer, b.index, b.multimem})
		switch {
		case sys.faults.dropped(peer, b.index, b.multimem) && st.arrivals > 0:
			missing = append(missing, fmt.Sprintf("rank %d arrived but the fault plan dropped its arrivals in the fabric", peer))
		case st.arrivals == 0:
			missing = append(missing, fmt.Sprintf("rank %d never arrived at barrier %s%s", peer, barName(b.index, b.multimem), sys.otherIndices(peer, b.index, b.multimem)))
		case st.arrivals < need:
			missing = append(missing, fmt.Sprintf("rank %d arrived %d time(s), this rank %d", peer, st.arrivals, need))
		}
	}
	if len(missing) == 0 {
		return head
	}
	return head + "; " + strings.Join(missing, "; ") + ": every rank must arrive at the same barrier indices (a barrier index synchronises only the CTAs that use it)"
}

// otherIndices names the barrier indices a rank did arrive at.
func (sys *System) otherIndices(rank, index int, multimem bool) string {
	var idx []int
	for k, st := range sys.bars {
		if k.rank == rank && k.multimem == multimem && k.index != index && st.arrivals > 0 {
			idx = append(idx, k.index)
		}
	}
	if len(idx) == 0 {
		return ""
	}
	sort.Ints(idx)
	return fmt.Sprintf(" (it arrived at indices %v)", idx)
}
