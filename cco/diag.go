package cco

import (
	"fmt"
	"sort"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/internal/slab"
	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// The misuse tables a hang can match a row of (sim.Row.Table).
const (
	// TableFailureMode is the seed's "Failure modes" table.
	TableFailureMode = "failure mode"
	// TableHazard is MORI's hazards (PR #454 notes).
	TableHazard = "MORI hazard"
)

// Rows of the seed's "Failure modes" table and MORI's hazards that a hang
// can match. The hang report quotes the row so a reader can find it in the
// document.
var (
	RowWaitSignal  = sim.Row{Table: TableFailureMode, Name: "waitSignal never returns"}
	RowAggregate   = sim.Row{Table: TableFailureMode, Name: "a put inside an Aggregate batch never returns"}
	RowStale       = sim.Row{Table: TableFailureMode, Name: "quiet returns but data is stale"}
	RowPostWaitMem = sim.Row{Table: TableFailureMode, Name: "a queue stops moving after postWaitMem"}
	// RowChainStalled is MORI's hazard: Aggregate posts followed by a put
	// without Aggregate.
	RowChainStalled = sim.Row{Table: TableHazard, Name: "Aggregate posts followed by a non-aggregate put before commit"}
	// RowChainJumped is MORI's other hazard: a commit while another issuer
	// has reserved but not yet written.
	RowChainJumped = sim.Row{Table: TableHazard, Name: "commit while another issuer has reserved but not yet written"}
)

// diagnosis keeps what the hang diagnoser needs to name a known misuse:
// uncommitted Aggregate posts per queue and wave, signals posted toward each
// slot, and what every wave is blocked on.
type diagnosis struct {
	h       *Host
	queues  map[*Queue]*qdiag
	waits   map[*kernel.Wave]waitInfo // by value: a map entry, not an allocation, a wait
	signals map[uint64]*sigdiag
	// reads is the last lane read of each signal slot (Mem.Load64 of a
	// tracked word): at most one per tracked word (sim.MaxTrackedWords).
	reads map[uint64]slotRead
	// sigSlab is where signals' records are made, a few at a time.
	sigSlab slab.Arena[sigdiag]
	qSlab   slab.Arena[qdiag] // the same for queues' records
	// refs is the host's queue references (lifecycle.ref), kept here
	// with the rest for the worker's next host, emptied; nil in a
	// diagnosis not kept.
	refs map[*Queue]int
}

// slotRead is a lane's read of a signal slot.
type slotRead struct {
	value uint64
	at    sim.Time
	who   string // "load64 by kernel ... (file:line)"
}

func (d *diagnosis) slotRead(addr uint64, r slotRead) {
	if d.reads == nil {
		d.reads = map[uint64]slotRead{}
	}
	d.reads[addr] = r
}

type qdiag struct {
	agg      map[*kernel.Wave]uint64 // uncommitted Aggregate bytes by wave
	aggUnits int
	total    uint64
}

type sigdiag struct {
	posted uint64 // ATOMIC +1 units written toward the slot
	lanes  uint64 // lanes in the groups that posted them
	// posts are the first maxSigPosts of them, in posting order: what a
	// report names as "the put meant to satisfy" a wait.
	posts   []sigPost
	postBuf [1]sigPost // posts' first: most slots see one post a run
}

// maxSigPosts bounds what one slot remembers of its posts; counts go on.
const maxSigPosts = 256

// sigPost is one signal ATOMIC a post wrote toward a slot.
type sigPost struct {
	rank  int // the posting rank
	call  string
	peer  int
	qid   int
	q     *Queue
	at    uint64 // ring offset of the ATOMIC
	when  sim.Time
	bytes uint64
}

func (p sigPost) String() string {
	what := p.call
	if p.bytes > 0 {
		what += fmt.Sprintf(" of %d B", p.bytes)
	}
	return fmt.Sprintf("rank %d's %s on queue (peer %d, queueId %d), posted at %v", p.rank, what, p.peer, p.qid, p.when)
}

// retired reports whether the engine has run the post's ATOMIC (the
// queue's read pointer is past it).
func (p sigPost) retired() bool { return p.q != nil && p.q.Rptr() > p.at }

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
	q         *Queue
	peer, qid int
	base, end uint64
	sigs      []*sigWait // waitSignal: the lanes not yet satisfied
}

func newDiagnosis(h *Host) *diagnosis {
	s := h.dev.Sim()
	d := keptDiagnosis(s)
	if d == nil {
		d = &diagnosis{queues: map[*Queue]*qdiag{}, waits: map[*kernel.Wave]waitInfo{}, signals: map[uint64]*sigdiag{}}
		d.sigSlab.Grow = 16 // slots come a comm's worth at a time
	}
	d.h = h
	if s != nil {
		s.AddDiagnoser(sim.LayerAPI, "cco", d.diagnose)
	}
	return d
}

// diagKey keys the diagnosis a sim.Scratch keeps.
var diagKey = sim.NewLocalKey[*diagnosis]()

// keptDiagnosis is the diagnosis the runs that borrow s's sim.Scratch
// (an explore worker's seeds) keep, emptied for the first host of run s
// (its maps and records are made once, not every seed: 4 KiB of a 4 KiB
// all-to-all seed); nil for another host of the run, or without a
// Scratch. The run before is over: its diagnoser is not asked again,
// and its reports copied what they say.
func keptDiagnosis(s *sim.Sim) *diagnosis {
	if s == nil {
		return nil
	}
	first := false
	d := sim.RunScratch(s, diagKey, func(d *diagnosis) { first = true; d.emptyKept() })
	if !first {
		return nil
	}
	return d
}

// emptyKept empties a kept diagnosis for its next run's first host,
// making its maps the first time.
func (d *diagnosis) emptyKept() {
	if d.queues == nil {
		d.queues, d.waits, d.signals, d.refs = map[*Queue]*qdiag{}, map[*kernel.Wave]waitInfo{}, map[uint64]*sigdiag{}, map[*Queue]int{}
		d.sigSlab.Grow = 16
	}
	clear(d.refs)
	clear(d.queues)
	clear(d.waits)
	clear(d.signals)
	clear(d.reads)
	d.sigSlab.Reset()
	d.qSlab.Reset()
}

func (d *diagnosis) qd(q *Queue) *qdiag {
	x := d.queues[q]
	if x == nil {
		x = d.qSlab.New() // agg is made by the first Aggregate post: most queues see none
		d.queues[q] = x
	}
	return x
}

func (d *diagnosis) aggregated(q *Queue, w *kernel.Wave, bytes uint64, units int) {
	x := d.qd(q)
	if x.agg == nil {
		x.agg = map[*kernel.Wave]uint64{}
	}
	x.agg[w] += bytes
	x.total += bytes
	x.aggUnits += units
}

func (d *diagnosis) committed(q *Queue) {
	if x := d.queues[q]; x != nil && x.total > 0 {
		clear(x.agg)
		x.total, x.aggUnits = 0, 0
	}
}

func (d *diagnosis) aggOf(q *Queue, w *kernel.Wave) uint64 {
	if x := d.queues[q]; x != nil {
		return x.agg[w]
	}
	return 0
}

func (d *diagnosis) aggTotal(q *Queue) uint64 {
	if x := d.queues[q]; x != nil {
		return x.total
	}
	return 0
}

func (d *diagnosis) signalPosted(addr uint64, sp sigPost) {
	x := d.sig(addr)
	x.posted++
	if x.posts == nil {
		x.posts = x.postBuf[:0]
	}
	if len(x.posts) < maxSigPosts {
		x.posts = append(x.posts, sp)
	}
}

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
		x = d.sigSlab.New()
		d.signals[addr] = x
	}
	return x
}

func (d *diagnosis) enter(w *kernel.Wave, wi waitInfo) { d.waits[w] = wi }
func (d *diagnosis) leave(w *kernel.Wave)              { delete(d.waits, w) }

// diagnose returns causes (sim.LayerAPI), in plain words, for the hang
// patterns of the seed's failure-mode table. Where it knows why a lower
// layer's condition holds (an Aggregate batch behind the issuer's ring-full
// or commit-chain cause) it says the condition in its own words, of the
// same Kind and Queue, which sim.MergeCauses keeps over the issuer's; for
// an engine's parked POLL on one of its queues it adds a note (no text)
// naming the row it matches.
func (d *diagnosis) diagnose() sim.Diagnosis {
	ws := make([]*waitInfo, 0, len(d.waits))
	for _, wi := range d.waits {
		ws = append(ws, &wi) // a variable each iteration
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
	var out sim.Diagnosis
	for _, wi := range ws {
		out.Causes = append(out.Causes, d.explain(wi)...)
	}
	// Queues parked on an engine-side wait posted by postWaitMem*: in queue
	// order, so the report does not depend on map order.
	qs := make([]string, 0, len(d.queues))
	for q := range d.queues {
		qs = append(qs, q.ID().String())
	}
	sort.Strings(qs)
	for _, q := range qs {
		out.Causes = append(out.Causes, sim.Cause{Kind: engine.CausePollParked, Layer: sim.LayerAPI, Queue: q, Row: RowPostWaitMem})
	}
	return out
}

func (d *diagnosis) explain(wi *waitInfo) []sim.Cause {
	name := queueName(wi.st, wi.peer, wi.qid)
	var qn string // the queue's name in causes; waitSignal waits on none
	if wi.q != nil {
		qn = wi.q.ID().String()
	}
	switch wi.kind {
	case waitSpace:
		x := d.queues[wi.q]
		p := wi.q.Pointers()
		if x != nil && x.total > 0 && wi.end > p.Capacity && wi.end-p.Capacity > p.CommittedWptr {
			return []sim.Cause{{Kind: issuer.CauseRingFull, Layer: sim.LayerAPI, Queue: qn, Row: RowAggregate, Text: fmt.Sprintf(
				"aggregate batch too big for the ring: %d packets (%d B) posted with Aggregate on %s without commit; this %s needs ring space the engine can only free after a commit (a batch must fit in %d B): commit sooner",
				x.aggUnits, x.total, name, wi.call, p.Capacity)}}
		}
	case waitChain:
		x := d.queues[wi.q]
		p := wi.q.Pointers()
		if p.CommittedWptr > wi.base {
			return []sim.Cause{{Kind: issuer.CauseChainJumped, Layer: sim.LayerAPI, Queue: qn, Row: RowChainJumped, Text: fmt.Sprintf(
				"a commit rang past this %s's reservation at %#x on %s before it was written (commit rings everything reserved, by anyone; committedWptr is now %#x), so it can never ring: do not commit while another issuer on the queue is mid-post",
				wi.call, wi.base, name, p.CommittedWptr)}}
		}
		if x != nil && x.total > 0 {
			return []sim.Cause{{Kind: issuer.CauseChainStalled, Layer: sim.LayerAPI, Queue: qn, Row: RowChainStalled, Text: fmt.Sprintf(
				"aggregate puts were never committed: %d packets reserved on %s, doorbell behind by %d bytes; the %s posted after them without Aggregate waits on the commit chain forever: call commit() first",
				x.aggUnits, name, wi.base-p.CommittedWptr, wi.call)}}
		}
	case waitDrain:
		return nil
	case waitSig:
		var out []sim.Cause
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

// CauseSignalShort is the Kind of a waitSignal cause: the slot holds less
// than expected and nothing queued will make up the difference.
const CauseSignalShort sim.CauseKind = "signal-short"

func (d *diagnosis) explainSignal(wi *sigWait) sim.Cause {
	st := wi.st
	mem := st.c.h.dev.Memory()
	cur, _ := mem.Load64(wi.addr)
	var posted, lanes uint64
	if x := d.signals[wi.addr]; x != nil {
		posted, lanes = x.posted, x.lanes
	}
	c := sim.Cause{Kind: CauseSignalShort, Layer: sim.LayerAPI, Ranks: []int{st.c.LsaRank}, Row: RowWaitSignal}
	head := fmt.Sprintf("for signalBuf[%d × %d + %d] ≥ %d; it holds %d and %d signal ATOMICs were ever posted toward it",
		wi.src, st.n, wi.q, wi.expected, cur, posted)
	say := func(why string) sim.Cause { c.Text = head + "; " + why; return c }
	var posts []sigPost
	if x := d.signals[wi.addr]; x != nil {
		posts = x.posts
	}
	if posted >= wi.expected {
		// The expected-th signal is the one meant to release the wait.
		if i := int(wi.expected) - 1; i >= 0 && i < len(posts) {
			p := posts[i]
			if p.retired() {
				return say(d.retiredShort(wi.addr, p))
			}
			return say(fmt.Sprintf("enough signals are posted but they have not landed: the put meant to satisfy it, %s, is still on its queue, which is stuck (see its report)", p))
		}
		return say("enough signals are posted but they have not landed: the queue carrying them is stuck (see its report)")
	}
	if wi.src < 0 || wi.src >= st.c.LsaSize {
		return say(fmt.Sprintf("srcRank %d is not an LSA rank in [0, %d): pass devComm.lsaRank values, not world ranks", wi.src, st.c.LsaSize))
	}
	if f := st.failedToward(wi.src, wi.q); f != nil {
		c.Kind, c.Row = CauseQueueCreateFailed, sim.Row{}
		return say(f.String(wi.src))
	}
	// The sender's other slots: what it signalled on other queues.
	var sum uint64
	var elsewhere []sigPost
	var otherQ []int
	for q := 0; q < st.n; q++ {
		a, err := st.pool.Slot(wi.src, q)
		if err != nil {
			continue
		}
		v, _ := mem.Load64(a)
		sum += v
		if q == wi.q {
			continue
		}
		if x := d.signals[a]; x != nil && x.posted > 0 {
			elsewhere = append(elsewhere, x.posts...)
			otherQ = append(otherQ, q)
		}
	}
	if posted == 0 && len(elsewhere) > 0 {
		// Nothing ever aimed at this slot, while the sender signalled
		// another queue's: the two sides disagree on the queue.
		meant := elsewhere[min(int(wi.expected), len(elsewhere))-1]
		return say(fmt.Sprintf("the sender signalled on another queue: rank %d's signals toward this rank went to queue %v's slot, never queue %d's; the put meant to satisfy it is %s: wait on the queue the sender uses, or send on queue %d",
			wi.src, otherQ, wi.q, meant, wi.q))
	}
	if sum >= wi.expected && cur < wi.expected {
		return say(fmt.Sprintf("the slots of rank %d across all %d queues sum to %d ≥ %d: expected looks shared across queues, keep one running total per (srcRank, queueId)", wi.src, st.n, sum, wi.expected))
	}
	if lanes >= wi.expected {
		return say(fmt.Sprintf("%d lanes joined the signalling posts but a group signals once per put() call: expected looks counted per lane", lanes))
	}
	if r, ok := d.reads[wi.addr]; ok && r.value > 0 && r.value <= posted && int(r.value) <= len(posts) {
		// expected = what a lane read of the slot, plus more: a baseline
		// read that already counted signals it meant to wait for.
		landed := posts[r.value-1]
		return say(fmt.Sprintf("expected looks taken from a read of the slot: %s read %d at %v, which already counted the signal of %s; the slot is a running total from 0 (it is never reset), so a baseline read that races the peer's put counts that put's signal twice: wait for the count the puts reach (here %d), known without reading the slot",
			r.who, r.value, r.at, landed, posted))
	}
	if len(posts) > 0 {
		return say(fmt.Sprintf("no more signals toward this slot are queued, so it can never reach expected; the last put toward it was %s", posts[len(posts)-1]))
	}
	return say(fmt.Sprintf("rank %d never posted a signal toward this slot, so it can never reach expected", wi.src))
}

// retiredShort says why a slot holds less than expected though the put
// meant to satisfy it has run its signal ATOMIC: another write lowered the
// slot (its write history, sim.WriteLog, names the writer), or the fault
// plan dropped the ATOMIC. Only an injected fault drops a signal in emud,
// so nothing else is called dropped.
func (d *diagnosis) retiredShort(addr uint64, p sigPost) string {
	ran := fmt.Sprintf("the put meant to satisfy it, %s, has run its signal ATOMIC (the queue's rptr is past it)", p)
	if ws, _, _, ok := writeLog(d.h.dev.Memory()).History(addr); ok {
		for i := len(ws) - 1; i >= 0; i-- {
			if w := ws[i]; w.Value < w.Prev {
				return fmt.Sprintf("%s, but the slot was overwritten: it went from %d back to %d at %v by %s. A write to a signal slot that a peer may already have signalled erases the count: reset slots only where no signal can be in flight (before the peers start, or behind a barrier), or never write them", ran, w.Prev, w.Value, w.At, w.By)
			}
		}
	}
	if dd, ok := d.h.dev.(interface{ InjectedDrops(uint64) int }); ok && dd.InjectedDrops(addr) > 0 {
		return fmt.Sprintf("%s, but the fault plan dropped %d signal ATOMIC(s) toward this slot (an injected lost completion; see the injected-fault cause)", ran, dd.InjectedDrops(addr))
	}
	return fmt.Sprintf("%s, yet the slot holds less than expected and no write in its history lowered it", ran)
}
