package cco

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// Rows of the seed's "Failure modes" table that a hang can match. The hang
// report quotes the row so a reader can find it in the document.
const (
	RowWaitSignal  = "waitSignal never returns"
	RowAggregate   = "a put inside an Aggregate batch never returns"
	RowStale       = "quiet returns but data is stale"
	RowPostWaitMem = "a queue stops moving after postWaitMem"
	// RowChainStalled is MORI's hazard (PR #454 notes), next to the seed's
	// rows: Aggregate posts followed by a put without Aggregate.
	RowChainStalled = "Aggregate posts followed by a non-aggregate put before commit"
	// RowChainJumped is MORI's other hazard: a commit while another issuer
	// has reserved but not yet written.
	RowChainJumped = "commit while another issuer has reserved but not yet written"
)

// diagnosis keeps what the hang inspector needs to name a known misuse:
// uncommitted Aggregate posts per queue and wave, signals posted toward each
// slot, and what every wave is blocked on.
type diagnosis struct {
	h       *Host
	queues  map[Queue]*qdiag
	waits   map[*kernel.Wave]*waitInfo
	signals map[uint64]*sigdiag
}

type qdiag struct {
	gpu, peer, q int
	agg          map[*kernel.Wave]uint64 // uncommitted Aggregate bytes by wave
	aggUnits     int
	total        uint64
}

type sigdiag struct {
	posted uint64 // ATOMIC +1 units written toward the slot
	lanes  uint64 // lanes in the groups that posted them
}

type waitKind uint8

const (
	waitSpace waitKind = iota
	waitChain
	waitDrain
	waitSig
)

type waitInfo struct {
	kind      waitKind
	call      string
	st        *devState
	q         Queue
	peer, qid int
	base, end uint64
	sigs      []*sigWait // waitSignal: the lanes not yet satisfied
}

func newDiagnosis(h *Host) *diagnosis {
	d := &diagnosis{h: h, queues: map[Queue]*qdiag{}, waits: map[*kernel.Wave]*waitInfo{}, signals: map[uint64]*sigdiag{}}
	if s := h.dev.Sim(); s != nil {
		s.AddInspector(d.inspect)
	}
	return d
}

func (d *diagnosis) qd(q Queue) *qdiag {
	x := d.queues[q]
	if x == nil {
		id := q.ID()
		x = &qdiag{gpu: id.GPU, peer: id.Peer, q: id.Q, agg: map[*kernel.Wave]uint64{}}
		d.queues[q] = x
	}
	return x
}

func (d *diagnosis) aggregated(q Queue, w *kernel.Wave, bytes uint64, units int) {
	x := d.qd(q)
	x.agg[w] += bytes
	x.total += bytes
	x.aggUnits += units
}

func (d *diagnosis) committed(q Queue) {
	if x := d.queues[q]; x != nil && x.total > 0 {
		clear(x.agg)
		x.total, x.aggUnits = 0, 0
	}
}

func (d *diagnosis) aggOf(q Queue, w *kernel.Wave) uint64 {
	if x := d.queues[q]; x != nil {
		return x.agg[w]
	}
	return 0
}

func (d *diagnosis) aggTotal(q Queue) uint64 {
	if x := d.queues[q]; x != nil {
		return x.total
	}
	return 0
}

func (d *diagnosis) signalPosted(addr uint64) { d.sig(addr).posted++ }

// lanesJoined credits one lane of a signalling post to the slots its
// group's signals hit.
func (d *diagnosis) lanesJoined(p *post) {
	addrs, n, _ := p.signalSlots() // an error fails the post where it is written
	for _, addr := range addrs[:n] {
		d.sig(addr).lanes++
	}
}

func (d *diagnosis) sig(addr uint64) *sigdiag {
	x := d.signals[addr]
	if x == nil {
		x = &sigdiag{}
		d.signals[addr] = x
	}
	return x
}

func (d *diagnosis) enter(w *kernel.Wave, wi *waitInfo) { d.waits[w] = wi }
func (d *diagnosis) leave(w *kernel.Wave)               { delete(d.waits, w) }

// inspect adds causes, in plain words, for the hang patterns of the seed's
// failure-mode table.
func (d *diagnosis) inspect(h *sim.HangError) {
	ws := make([]*waitInfo, 0, len(d.waits))
	for _, wi := range d.waits {
		ws = append(ws, wi)
	}
	sort.Slice(ws, func(i, j int) bool {
		a, b := ws[i], ws[j]
		if a.st.c.LsaRank != b.st.c.LsaRank {
			return a.st.c.LsaRank < b.st.c.LsaRank
		}
		if a.kind != b.kind {
			return a.kind < b.kind
		}
		return a.base < b.base
	})
	// Collected first, then put ahead of the generic causes in order. A
	// cause that differs between ranks only in the rank is said once, for
	// all of them (an all-to-all has the same bug on every rank).
	var causes []string
	ranks := map[string][]int{}
	add := func(c string) {
		t, r := splitRanked(c)
		if _, dup := ranks[t]; !dup {
			causes = append(causes, t)
			ranks[t] = nil
		}
		if r >= 0 && !slices.Contains(ranks[t], r) {
			ranks[t] = append(ranks[t], r)
		}
	}
	defer func() {
		said := make([]string, len(causes))
		for i, c := range causes {
			said[i] = strings.Replace(c, whoMark, who(ranks[c]), 1)
		}
		h.AddLeadCauses(said...)
	}()
	for _, wi := range ws {
		for _, c := range d.explain(wi) {
			add(c)
		}
	}
	// Queues parked on an engine-side wait posted by postWaitMem*.
	qs := make([]Queue, 0, len(d.queues))
	for q := range d.queues {
		qs = append(qs, q)
	}
	sort.Slice(qs, func(i, j int) bool {
		a, b := d.queues[qs[i]], d.queues[qs[j]]
		return a.gpu*1e6+a.peer*1e3+a.q < b.gpu*1e6+b.peer*1e3+b.q
	})
	for _, q := range qs {
		if c := d.explainPoll(q); c != "" {
			add(c)
		}
	}
}

func (d *diagnosis) explain(wi *waitInfo) []string {
	name := queueName(wi.st, wi.peer, wi.qid)
	switch wi.kind {
	case waitSpace:
		x := d.queues[wi.q]
		r := wi.q.Ring()
		if x != nil && x.total > 0 && wi.end > r.Capacity() && wi.end-r.Capacity() > r.CommittedWptr() {
			return []string{fmt.Sprintf("aggregate batch too big for the ring: %d packets (%d B) posted with Aggregate on %s without commit; this %s needs ring space the engine can only free after a commit (a batch must fit in %d B): commit sooner (%s)",
				x.aggUnits, x.total, name, wi.call, r.Capacity(), quoteRow(RowAggregate))}
		}
	case waitChain:
		x := d.queues[wi.q]
		r := wi.q.Ring()
		if r.CommittedWptr() > wi.base {
			return []string{fmt.Sprintf("a commit rang past this %s's reservation at %#x on %s before it was written (commit rings everything reserved, by anyone; committedWptr is now %#x), so it can never ring: do not commit while another issuer on the queue is mid-post (%s)",
				wi.call, wi.base, name, r.CommittedWptr(), quoteHazard(RowChainJumped))}
		}
		if x != nil && x.total > 0 {
			return []string{fmt.Sprintf("aggregate puts were never committed: %d packets reserved on %s, doorbell behind by %d bytes; the %s posted after them without Aggregate waits on the commit chain forever: call commit() first (%s)",
				x.aggUnits, name, wi.base-r.CommittedWptr(), wi.call, quoteHazard(RowChainStalled))}
		}
	case waitDrain:
		return nil
	case waitSig:
		var out []string
		mem := d.h.dev.Memory()
		for _, w := range wi.sigs {
			if !w.done(mem) {
				out = append(out, d.explainSignal(w))
			}
		}
		return out
	}
	return nil
}

// A ranked cause names the waiting rank through whoMark, so causes that
// differ only in the rank merge into one naming every rank:
// "rank 3 waits" or "ranks 0–7 each wait".
const whoMark = "\x00who\x00"

func ranked(rank int, text string) string {
	return "\x00" + strconv.Itoa(rank) + "\x01" + text
}

// splitRanked undoes ranked: the template and the rank, or c and -1.
func splitRanked(c string) (string, int) {
	end := strings.IndexByte(c, '\x01')
	if !strings.HasPrefix(c, "\x00") || end < 0 {
		return c, -1
	}
	r, err := strconv.Atoi(c[1:end])
	if err != nil {
		return c, -1
	}
	return c[end+1:], r
}

// who renders the ranks of a merged cause.
func who(ranks []int) string {
	switch len(ranks) {
	case 0:
		return "a rank waits"
	case 1:
		return fmt.Sprintf("rank %d waits", ranks[0])
	}
	rs := slices.Clone(ranks)
	slices.Sort(rs)
	var parts []string
	for i := 0; i < len(rs); {
		j := i
		for j+1 < len(rs) && rs[j+1] == rs[j]+1 {
			j++
		}
		if j > i {
			parts = append(parts, fmt.Sprintf("%d–%d", rs[i], rs[j]))
		} else {
			parts = append(parts, strconv.Itoa(rs[i]))
		}
		i = j + 1
	}
	return "ranks " + strings.Join(parts, ", ") + " each wait"
}

func quoteRow(r string) string { return fmt.Sprintf("failure mode %q", r) }

func quoteHazard(r string) string { return fmt.Sprintf("MORI hazard %q", r) }

func (d *diagnosis) explainSignal(wi *sigWait) string {
	st := wi.st
	mem := st.c.h.dev.Memory()
	cur, _ := mem.Load64(wi.addr)
	var posted, lanes uint64
	if x := d.signals[wi.addr]; x != nil {
		posted, lanes = x.posted, x.lanes
	}
	head := ranked(st.c.LsaRank, fmt.Sprintf("%s: %s for signalBuf[%d × %d + %d] ≥ %d; it holds %d and %d signal ATOMICs were ever posted toward it",
		quoteRow(RowWaitSignal), whoMark, wi.src, st.n, wi.q, wi.expected, cur, posted))
	if posted >= wi.expected {
		return head + "; enough signals are posted but they have not landed: the queue carrying them is stuck (see its report)"
	}
	if wi.src < 0 || wi.src >= st.c.LsaSize {
		return head + fmt.Sprintf("; srcRank %d is not an LSA rank in [0, %d): pass devComm.lsaRank values, not world ranks", wi.src, st.c.LsaSize)
	}
	// One counter across queues: the sender's other slots hold the rest.
	var sum uint64
	for q := 0; q < st.n; q++ {
		if a, err := st.pool.Slot(wi.src, q); err == nil {
			v, _ := mem.Load64(a)
			sum += v
		}
	}
	if sum >= wi.expected && cur < wi.expected {
		return head + fmt.Sprintf("; the slots of rank %d across all %d queues sum to %d ≥ %d: expected looks shared across queues, keep one running total per (srcRank, queueId)", wi.src, st.n, sum, wi.expected)
	}
	if lanes >= wi.expected {
		return head + fmt.Sprintf("; %d lanes joined the signalling posts but a group signals once per put() call: expected looks counted per lane", lanes)
	}
	return head + "; no more signals toward this slot are queued, so it can never reach expected"
}

func (d *diagnosis) explainPoll(q Queue) string {
	r, ok := q.(interface{ Report() engine.QueueReport })
	if !ok {
		return ""
	}
	rep := r.Report()
	if rep.Poll == nil || rep.State != "parked" {
		return ""
	}
	p := rep.Poll
	name := fmt.Sprintf("rank %d → %d queue %d", rep.GPU, rep.Peer, rep.Q)
	if p.AddrGPU != rep.GPU {
		return fmt.Sprintf("%s is parked on a POLL of the flag at %#x, which is in GPU %d's memory, not GPU %d's: win/offset must be local (%s)",
			name, p.Addr, p.AddrGPU, rep.GPU, quoteRow(RowPostWaitMem))
	}
	return fmt.Sprintf("%s is parked on a POLL of the flag at %#x: (value %#x & mask %#x) %s %d never held, so everything behind it on the queue waits too (%s)",
		name, p.Addr, p.Value, p.Mask, p.Func, p.Ref, quoteRow(RowPostWaitMem))
}
