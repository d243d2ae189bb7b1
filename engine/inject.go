package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/emud-dev/emud/sim"
)

// Injected faults: what real SDMA systems have shown, planted in a run on
// purpose (Config.Inject). None halts the queue; each is raised as a
// [Fault] (so it is in the node's fault list, the report, the metrics and
// the trace) and a hang it caused names it among its causes.
const (
	// FaultInjectedSignalDrop: a signal ATOMIC retired without touching
	// memory, a lost completion (ROCr lost SDMA completion signals in
	// 2.5–14% of runs).
	FaultInjectedSignalDrop FaultKind = "INJECTED_SIGNAL_DROP"
	// FaultInjectedStall: a COPY at or above the plan's size never
	// finishes (256 MiB copies stalled MI355X engines, so the signal
	// behind them never fired).
	FaultInjectedStall FaultKind = "INJECTED_ENGINE_STALL"
	// FaultInjectedDeadEngine: a queue whose engine is dead never fetches
	// (MORI with SDMA hung on MI308X, whose queues landed on fused-off
	// engines).
	FaultInjectedDeadEngine FaultKind = "INJECTED_DEAD_ENGINE"
	// FaultInjectedDoorbellLost: a doorbell store the engine never saw;
	// only a later doorbell on the queue makes it fetch.
	FaultInjectedDoorbellLost FaultKind = "INJECTED_DOORBELL_LOST"
	// FaultInjectedDoorbellDelay: a doorbell that reached the engine late
	// (doorbells are posted writes, so later ones wait behind it).
	FaultInjectedDoorbellDelay FaultKind = "INJECTED_DOORBELL_DELAY"
	// FaultInjectedRptrLag: the queue's read-pointer write-backs land late
	// (raised once per queue, at the first lagging write-back).
	FaultInjectedRptrLag FaultKind = "INJECTED_RPTR_LAG"
)

func init() {
	for i, k := range []FaultKind{FaultInjectedSignalDrop, FaultInjectedStall, FaultInjectedDeadEngine,
		FaultInjectedDoorbellLost, FaultInjectedDoorbellDelay, FaultInjectedRptrLag} {
		faultCodes[k] = uint64(16 + i)
	}
}

// PacketRef names the N-th (from 0) thing of its kind a queue does: the
// N-th ATOMIC it executes, the N-th doorbell it is rung.
type PacketRef struct {
	Queue QueueID
	N     int
}

// InjectPlan is the SDMA fault injection of a run, like fabric's fault
// plans: explicit entries, rates drawn per use from the run's seed, or
// both. The zero plan injects nothing. [SeededPlan] draws a whole plan
// from a seed.
type InjectPlan struct {
	// DropSignals loses the listed ATOMICs; SignalDropRate loses each
	// ATOMIC with this chance.
	DropSignals    []PacketRef
	SignalDropRate float64
	// StallBytes stalls the engine of any COPY (or broadcast COPY) of at
	// least this many bytes: the data never lands, the queue never moves
	// on. 0 = off. MI355X showed it at 256 MiB.
	StallBytes uint64
	// DeadQueues never fetch: their engine is dead.
	DeadQueues []QueueID
	// LostDoorbells loses the listed doorbells; DoorbellLossRate loses
	// each with this chance.
	LostDoorbells    []PacketRef
	DoorbellLossRate float64
	// DoorbellDelayRate delays each doorbell with this chance by up to
	// DoorbellDelay (uniform).
	DoorbellDelayRate float64
	DoorbellDelay     sim.Time
	// RptrLag delays every read-pointer write-back by this much (all
	// queues, or only RptrLagQueues when that is set).
	RptrLag       sim.Time
	RptrLagQueues []QueueID
}

// Empty reports whether the plan injects nothing.
func (p *InjectPlan) Empty() bool {
	return p == nil || (len(p.DropSignals) == 0 && p.SignalDropRate == 0 && p.StallBytes == 0 &&
		len(p.DeadQueues) == 0 && len(p.LostDoorbells) == 0 && p.DoorbellLossRate == 0 &&
		p.DoorbellDelayRate == 0 && p.RptrLag == 0)
}

// Check reports the first entry outside its range.
func (p *InjectPlan) Check(gpus, queuesPerPeer int) error {
	rate := func(name string, v float64) error {
		if !(v >= 0 && v <= 1) {
			return fmt.Errorf("inject plan: %s %v outside [0, 1]", name, v)
		}
		return nil
	}
	q := func(what string, id QueueID) error {
		if id.GPU < 0 || id.GPU >= gpus || id.Peer < 0 || id.Peer >= gpus || id.Q < 0 || id.Q >= queuesPerPeer {
			return fmt.Errorf("inject plan: %s queue gpu%d→gpu%d q%d outside the node (%d GPUs, %d queues per peer)", what, id.GPU, id.Peer, id.Q, gpus, queuesPerPeer)
		}
		return nil
	}
	for _, e := range []error{rate("signal drop rate", p.SignalDropRate), rate("doorbell loss rate", p.DoorbellLossRate), rate("doorbell delay rate", p.DoorbellDelayRate)} {
		if e != nil {
			return e
		}
	}
	if p.DoorbellDelay < 0 || p.DoorbellDelay > sim.Second || p.RptrLag < 0 || p.RptrLag > sim.Second {
		return fmt.Errorf("inject plan: doorbell delay %v and rptr lag %v must be in [0, 1s]", p.DoorbellDelay, p.RptrLag)
	}
	if p.DoorbellDelayRate > 0 && p.DoorbellDelay == 0 {
		return fmt.Errorf("inject plan: doorbell delay rate %v with no delay", p.DoorbellDelayRate)
	}
	for _, r := range slices.Concat(p.DropSignals, p.LostDoorbells) {
		if err := q("drop/lost", r.Queue); err != nil {
			return err
		}
		if r.N < 0 {
			return fmt.Errorf("inject plan: negative index %d for %v", r.N, r.Queue)
		}
	}
	for _, id := range slices.Concat(p.DeadQueues, p.RptrLagQueues) {
		if err := q("dead/lagging", id); err != nil {
			return err
		}
	}
	return nil
}

// String renders the plan in the form ParsePlan reads.
func (p *InjectPlan) String() string {
	if p.Empty() {
		return "none"
	}
	var parts []string
	qs := func(id QueueID) string { return fmt.Sprintf("%d:%d:%d", id.GPU, id.Peer, id.Q) }
	for _, r := range p.DropSignals {
		parts = append(parts, fmt.Sprintf("drop-signal=%s#%d", qs(r.Queue), r.N))
	}
	if p.SignalDropRate > 0 {
		parts = append(parts, fmt.Sprintf("signal-drop-rate=%g", p.SignalDropRate))
	}
	if p.StallBytes > 0 {
		parts = append(parts, fmt.Sprintf("stall-bytes=%d", p.StallBytes))
	}
	for _, id := range p.DeadQueues {
		parts = append(parts, "dead="+qs(id))
	}
	for _, r := range p.LostDoorbells {
		parts = append(parts, fmt.Sprintf("lost-doorbell=%s#%d", qs(r.Queue), r.N))
	}
	if p.DoorbellLossRate > 0 {
		parts = append(parts, fmt.Sprintf("doorbell-loss-rate=%g", p.DoorbellLossRate))
	}
	if p.DoorbellDelayRate > 0 {
		parts = append(parts, fmt.Sprintf("doorbell-delay=%dps@%g", int64(p.DoorbellDelay), p.DoorbellDelayRate))
	}
	if p.RptrLag > 0 {
		s := fmt.Sprintf("rptr-lag=%dps", int64(p.RptrLag))
		for _, id := range p.RptrLagQueues {
			s += "@" + qs(id)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ",")
}

// SeededPlan draws a plan from r for a node of gpus GPUs that uses queue
// ids below queues per peer: at most one kind of fault per run, as real
// failures come one at a time. With chance rate the run gets a fault; the
// kind is then uniform over the six. The magnitudes follow what was seen:
// per-ATOMIC loss 5% (ROCr's lost signals showed in 2.5–14% of runs of a
// few signals each), stalls at 256 MiB (MI355X), a dead queue among those
// used (MI308X), doorbells lost at 5% or delayed up to 20 µs, rptr
// write-backs up to 10 µs late.
func SeededPlan(r *rand.Rand, rate float64, gpus, queues int) *InjectPlan {
	p := &InjectPlan{}
	if r.Float64() >= rate {
		return p
	}
	randQueue := func() QueueID {
		g := r.IntN(gpus)
		peer := (g + 1 + r.IntN(max(gpus-1, 1))) % gpus
		return QueueID{GPU: g, Peer: peer, Q: r.IntN(max(queues, 1))}
	}
	switch r.IntN(6) {
	case 0:
		p.SignalDropRate = 0.05
	case 1:
		p.StallBytes = 256 << 20
	case 2:
		p.DeadQueues = []QueueID{randQueue()}
	case 3:
		p.DoorbellLossRate = 0.05
	case 4:
		p.DoorbellDelayRate, p.DoorbellDelay = 0.2, 20*sim.Microsecond
	case 5:
		p.RptrLag = sim.Time(1+r.IntN(10)) * sim.Microsecond
	}
	return p
}

// InjectStream is the sim.Rand stream the per-use rates draw from.
const InjectStream = 0x1213c7

// injector is a node's fault injection state.
type injector struct {
	n     *Node
	plan  InjectPlan
	rng   *rand.Rand
	drop  map[PacketRef]bool
	lost  map[PacketRef]bool
	dead  map[QueueID]bool
	lag   map[QueueID]bool
	per   map[*Queue]*qinject
	fired []Fault
}

type qinject struct {
	atomics, doorbells int
	dbArrive           sim.Time // when the last delayed doorbell arrives
	stalled, deadSaid  bool
	lagSaid            bool
}

func newInjector(n *Node, p *InjectPlan) *injector {
	if p.Empty() {
		return nil
	}
	in := &injector{n: n, plan: *p, rng: n.s.Rand(InjectStream), drop: map[PacketRef]bool{}, lost: map[PacketRef]bool{},
		dead: map[QueueID]bool{}, lag: map[QueueID]bool{}, per: map[*Queue]*qinject{}}
	for _, r := range p.DropSignals {
		in.drop[r] = true
	}
	for _, r := range p.LostDoorbells {
		in.lost[r] = true
	}
	for _, id := range p.DeadQueues {
		in.dead[id] = true
	}
	for _, id := range p.RptrLagQueues {
		in.lag[id] = true
	}
	return in
}

func (in *injector) q(q *Queue) *qinject {
	x := in.per[q]
	if x == nil {
		x = &qinject{}
		in.per[q] = x
	}
	return x
}

func (in *injector) fire(q *Queue, kind FaultKind, addr uint64, detail string) {
	f := Fault{Kind: kind, Queue: q.id, At: in.n.s.Now(), Offset: q.pos, Addr: addr, Detail: detail + " (injected fault)"}
	if q.headLen > 0 && (kind == FaultInjectedSignalDrop || kind == FaultInjectedStall) {
		f.Packet = q.head.String()
	}
	in.fired = append(in.fired, f)
	in.n.raise(f)
}

// dropAtomic decides whether the head ATOMIC is lost.
func (in *injector) dropAtomic(q *Queue) bool {
	x := in.q(q)
	ref := PacketRef{q.id, x.atomics}
	x.atomics++
	if !in.drop[ref] && !(in.plan.SignalDropRate > 0 && in.rng.Float64() < in.plan.SignalDropRate) {
		return false
	}
	in.fire(q, FaultInjectedSignalDrop, q.head.Addr, fmt.Sprintf("ATOMIC #%d of %v retired without writing mem[%#x]: a lost completion signal", ref.N, q.id, q.head.Addr))
	return true
}

// stall decides whether a COPY of bytes stalls the engine for good.
func (in *injector) stall(q *Queue, bytes uint64) bool {
	if in.plan.StallBytes == 0 || bytes < in.plan.StallBytes {
		return false
	}
	in.q(q).stalled = true
	in.fire(q, FaultInjectedStall, q.head.Dst, fmt.Sprintf("the engine of %v stalled on a COPY of %d B (≥ %d B): its data never lands and nothing behind it runs", q.id, bytes, in.plan.StallBytes))
	return true
}

// deadQueue reports whether q's engine is dead, saying so once.
func (in *injector) deadQueue(q *Queue) bool {
	if !in.dead[q.id] {
		return false
	}
	if x := in.q(q); !x.deadSaid {
		x.deadSaid = true
		in.fire(q, FaultInjectedDeadEngine, 0, fmt.Sprintf("%v is on a dead engine: it was rung but never fetches", q.id))
	}
	return true
}

// doorbell decides the fate of a doorbell store of v: lost (the engine
// never sees it), or when it arrives (now, or later).
func (in *injector) doorbell(q *Queue, v uint64) (lost bool, at sim.Time) {
	x := in.q(q)
	ref := PacketRef{q.id, x.doorbells}
	x.doorbells++
	now := in.n.s.Now()
	if in.lost[ref] || (in.plan.DoorbellLossRate > 0 && in.rng.Float64() < in.plan.DoorbellLossRate) {
		in.fire(q, FaultInjectedDoorbellLost, v, fmt.Sprintf("doorbell #%d of %v (value %#x) was lost on its way to the engine", ref.N, q.id, v))
		return true, 0
	}
	at = max(now, x.dbArrive)
	if in.plan.DoorbellDelayRate > 0 && in.rng.Float64() < in.plan.DoorbellDelayRate {
		d := sim.Time(in.rng.Int64N(int64(in.plan.DoorbellDelay)) + 1)
		at = max(at, now+d)
		in.fire(q, FaultInjectedDoorbellDelay, v, fmt.Sprintf("doorbell #%d of %v (value %#x) reaches the engine %v late", ref.N, q.id, v, at-now))
	}
	x.dbArrive = at
	return false, at
}

// rptrLag returns how late q's write-back lands (0: now).
func (in *injector) rptrLag(q *Queue) sim.Time {
	if in.plan.RptrLag == 0 || (len(in.lag) > 0 && !in.lag[q.id]) {
		return 0
	}
	if x := in.q(q); !x.lagSaid {
		x.lagSaid = true
		in.fire(q, FaultInjectedRptrLag, 0, fmt.Sprintf("read-pointer write-backs of %v land %v late", q.id, in.plan.RptrLag))
	}
	return in.plan.RptrLag
}

// Injected returns the faults injected so far, in order.
func (n *Node) Injected() []Fault {
	if n.inj == nil {
		return nil
	}
	return slices.Clone(n.inj.fired)
}

// CauseInjected is the Kind of a hang cause that names an injected fault.
const CauseInjected sim.CauseKind = "injected-fault"

// diagnose adds to the engine's part of a hang report the injected faults
// of the run and the queues they stopped (a stalled or dead queue nothing
// waits on directly still holds the work a waiter needs).
func (in *injector) diagnose(h *sim.Diagnosis) {
	listed := map[string]bool{}
	for _, w := range h.Waiters {
		listed[w.Name] = true
	}
	for _, q := range in.n.queues.All() {
		x := in.per[q]
		if x == nil {
			continue
		}
		stuck := x.stalled || (in.dead[q.id] && q.pos != q.target)
		if stuck && !listed[q.id.String()] {
			rep := q.Report()
			what := "its stalled COPY to finish (injected engine stall)"
			if !x.stalled {
				what = "an engine: it is on a dead one (injected)"
			}
			h.Waiters = append(h.Waiters, sim.Waiter{Kind: "queue", Name: q.id.String(), State: rep.State, Since: q.headSince,
				WaitsFor: what, Lines: rep.Lines(), Detail: rep})
		}
	}
	for _, f := range in.fired {
		if f.Kind == FaultInjectedDoorbellDelay {
			continue // late, not lost: it cannot be why nothing moves
		}
		h.Causes = append(h.Causes, sim.Cause{Kind: CauseInjected, Layer: sim.LayerEngine, Queue: f.Queue.String(),
			Text: fmt.Sprintf("injected fault %s at %v: %s", f.Kind, f.At, f.Detail)})
	}
}

// InjectedDrops is how many signal ATOMICs aimed at addr the run's fault
// plan dropped: the only way emud loses a completion, so a report may call
// a signal dropped only when this is non-zero.
func (n *Node) InjectedDrops(addr uint64) int {
	if n.inj == nil {
		return 0
	}
	k := 0
	for _, f := range n.inj.fired {
		if f.Kind == FaultInjectedSignalDrop && f.Addr == addr {
			k++
		}
	}
	return k
}
