package engine

import (
	"errors"
	"fmt"

	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// The engine side of every queue, and the SDMA engines that serve queues,
// as one state machine (docs/sdma-hardware.md §3.5, §4.4, §5; model.Engines).
//
// A queue is in one of these states:
//
//	idle      nothing rung beyond pos
//	fetching  a doorbell was seen on an idle queue; the fetch latency runs
//	ready     rung work, waiting in its engine's run list for its turn
//	busy      it holds its engine: the head packet runs (its effect, its
//	          data crossing the path) or the engine pays the gap after it
//	parked    the head POLL_REGMEM's condition is false; off the engine
//	stalled   the head packet is only partly rung; off the engine
//	halted    faulted; off the engine for good
//
// and moves between them so:
//
//	idle     --doorbell-->            fetching
//	fetching --fetch latency-->       ready
//	stalled  --doorbell-->            ready
//	ready    --engine picks it-->     busy
//	busy     --packet and gap done--> ready (more rung) or idle
//	busy     --POLL false-->          parked --holds at a read tick--> ready
//	busy     --header without body--> stalled
//	busy     --fault-->               halted
//
// An engine serves one queue at a time: a packet's own time (its data
// movement) and the gap after it (the model's model.PacketGap: completion
// handshake and the fetch of the next packet) are the engine's, so queues
// that share an engine share its packet rate. The data itself moves on the
// directed path (timing.go), shared with every other engine's copies on
// that path. Arbitration is round-robin time slicing, as an SDMA engine
// schedules its queues: the queue that ran keeps the engine while it has
// work and its slice (model.Engines.Slice, from the context quantum KFD
// programs) is not used up; then the engine passes to the next queue in
// placement order that has work. Queues on one engine interleave only
// between packets (gem5 sdma_engine.cc; mid-packet preemption is not
// modelled). A queue that parks, stalls, halts or drains gives the engine
// up at once.

type qstate uint8

const (
	qIdle qstate = iota
	qFetching
	qReady
	qBusy
	qParked
	qStalled
	qHalted
)

var qstateNames = [...]string{"idle", "fetching", "ready", "busy", "parked", "stalled", "halted"}

func (s qstate) String() string { return qstateNames[s] }

// Engine is one SDMA engine of a GPU: the queues placed on it and the one
// it serves now.
type Engine struct {
	n        *Node
	gpu, id  int // id −1: a dedicated engine (one queue, model.Engines.Dedicated)
	queues   []*Queue
	queueBuf [2]*Queue
	cur      *Queue   // the queue holding the engine, nil when free
	last     int      // index in queues of the queue that ran last
	slice    sim.Time // when the current holder's slice ends
	quantum  sim.Time // the model's slice length (model.Engines.Slice), read when the engine is made
	running  bool     // dispatch is on the stack (no re-entry)
	busy     sim.Time // total time the engine was held, for reports
	since    sim.Time
}

func newEngine(n *Node, gpu, id int) *Engine {
	// The slice length is read once: building the model's Engines per
	// slice was a few percent of a small copy's CPU.
	e := n.slabs.engines.New()
	*e = Engine{n: n, gpu: gpu, id: id, last: -1, quantum: n.model.Engines().Slice}
	e.queues = e.queueBuf[:0] // most engines serve a queue or two: no allocation for them
	return e
}

// GPU returns the GPU the engine belongs to.
func (e *Engine) GPU() int { return e.gpu }

// ID returns the engine's index within its GPU (KFD's engine id), or −1 for
// a dedicated engine of the uncalibrated layout.
func (e *Engine) ID() int { return e.id }

// Queues returns the queues placed on the engine, in placement order.
func (e *Engine) Queues() []*Queue { return e.queues }

// BusyTime is how long the engine has been held by a queue so far.
func (e *Engine) BusyTime() sim.Time {
	if e.cur != nil {
		return e.busy + e.n.s.Now() - e.since
	}
	return e.busy
}

func (e *Engine) String() string {
	if e.id < 0 {
		return fmt.Sprintf("sdma gpu%d dedicated engine", e.gpu)
	}
	return fmt.Sprintf("sdma gpu%d engine %d", e.gpu, e.id)
}

// wake is a queue of e becoming ready.
func (e *Engine) wake() {
	if e.cur == nil {
		e.dispatch()
	}
}

// pick chooses the next queue to serve: the last one while its slice
// lasts, else the next ready one after it in placement order.
func (e *Engine) pick() (int, *Queue) {
	now := e.n.s.Now()
	if e.last >= 0 && e.queues[e.last].state == qReady && now < e.slice {
		return e.last, e.queues[e.last]
	}
	for k := 1; k <= len(e.queues); k++ {
		i := (e.last + k) % len(e.queues)
		if i < 0 {
			i += len(e.queues)
		}
		if q := e.queues[i]; q.state == qReady {
			if i != e.last || now >= e.slice {
				e.slice = now + e.quantum
			}
			return i, q
		}
	}
	return -1, nil
}

// dispatch hands the free engine to ready queues until one holds it (its
// packet or gap takes time) or none is ready.
func (e *Engine) dispatch() {
	if e.running {
		return // the loop below is already deciding
	}
	e.running = true
	for e.cur == nil {
		i, q := e.pick()
		if q == nil {
			break
		}
		e.cur, e.last, e.since = q, i, e.n.s.Now()
		q.state = qBusy
		if q.run() {
			break // q holds the engine until its packet or gap ends
		}
		e.release()
	}
	e.running = false
}

// release frees the engine from its holder.
func (e *Engine) release() {
	e.busy += e.n.s.Now() - e.since
	e.cur = nil
}

// resume continues the holder after its packet's time (data moved, or a
// POLL held) and lets the engine go on.
func (e *Engine) resume() {
	q := e.cur
	if q == nil {
		return
	}
	if q.state == qBusy && q.finish() && q.owe() {
		return
	}
	e.release() // q halted, or its packet is over with no gap
	e.dispatch()
}

// gapDone is the end of the gap after the holder's packet.
// gapStep and fetchStep are an engine's gapDone and a queue's fetched as
// sim Handlers: scheduled through AtWorkStep (which orders them as
// AfterWork would) they need no method value, which was an allocation
// per engine and per queue of every run.
type (
	gapStep   Engine
	fetchStep Queue
)

func (g *gapStep) Step(uint64)   { (*Engine)(g).gapDone() }
func (f *fetchStep) Step(uint64) { (*Queue)(f).fetched() }

func (e *Engine) gapDone() {
	q := e.cur
	if q == nil {
		return
	}
	if q.state == qBusy && !q.dead {
		q.afterGap()
	}
	e.release()
	e.dispatch()
}

// ---- the queue's side of the machine ----

// RingDoorbell is a raw 64-bit doorbell store of v, outside the commit
// chain: what a host-side issuer or a buggy kernel does. The engine checks
// the value as hardware would (DOORBELL_INVALID for a value that is not a
// multiple of 4, moves backwards, or is more than a ring ahead) and ignores
// a bad one.
func (q *Queue) RingDoorbell(v uint64) {
	if q.badDoorbell(v) == "" {
		q.r.StoreDoorbell(v)
	}
	q.doorbell(v)
}

// doorbell is the engine seeing a 64-bit doorbell store of v.
func (q *Queue) doorbell(v uint64) {
	q.c.doorbells.Inc()
	q.n.s.Trace(q.n.tk.doorbell, q.subj, v, q.pos, 0)
	q.be.Rang(v)
	if in := q.n.inj; in != nil {
		lost, at := in.doorbell(q, v)
		if lost {
			return
		}
		if at > q.n.s.Now() {
			q.n.s.AtWork(at, func() { q.doorbellArrives(v) })
			return
		}
	}
	q.doorbellArrives(v)
}

// doorbellArrives is the doorbell store of v reaching the engine (at once,
// unless an injected fault delays it).
func (q *Queue) doorbellArrives(v uint64) {
	if why := q.badDoorbell(v); why != "" {
		q.n.raise(Fault{Kind: FaultDoorbellInvalid, Queue: q.id, At: q.n.s.Now(), Offset: q.pos, Addr: v, Detail: why})
		return
	}
	q.target = v
	if q.n.inj != nil && q.n.inj.deadQueue(q) {
		return
	}
	switch q.state {
	case qIdle:
		q.state = qFetching
		q.n.s.AtWorkStep(q.n.s.Now()+q.jitter(sim.Key{Kind: sim.KeyDoorbell, A: uint32(q.subj)}, q.n.model.Cost(model.Doorbell)), (*fetchStep)(q), 0)
	case qStalled:
		q.state = qReady
		q.eng.wake()
	}
}

func (q *Queue) badDoorbell(v uint64) string {
	switch {
	case v%4 != 0:
		return fmt.Sprintf("doorbell value %#x is not a multiple of 4", v)
	case v < q.target:
		return fmt.Sprintf("doorbell value %#x is below the previous one %#x", v, q.target)
	case v-q.pos > q.r.Size():
		return fmt.Sprintf("doorbell value %#x is more than one ring (%d B) ahead of the engine at %#x", v, q.r.Size(), q.pos)
	}
	return ""
}

// fetched is the end of the fetch latency after a doorbell.
func (q *Queue) fetched() {
	if q.state != qFetching {
		return
	}
	q.state = qReady
	q.eng.wake()
}

// run executes packets of a queue that was just given its engine, until
// one takes time (true: the queue holds the engine until resume or
// gapDone) or the queue gives the engine up (false: drained, parked,
// stalled or halted).
func (q *Queue) run() bool {
	if q.pollHeld {
		q.pollHeld = false
		if q.head.Kind != ring.KindPoll {
			// A fused packet's wait held: its copy starts now (fused.go).
			if !q.startFused() {
				return false
			}
			if q.x.active {
				return true
			}
		}
		return q.finish() && q.owe()
	}
	for {
		if q.pos == q.target {
			q.drain()
			return false
		}
		n, err := q.headLen, error(nil)
		if !q.headReady {
			n, err = q.r.DecodeAt(&q.head, q.pos, q.target-q.pos)
		}
		q.headReady = false
		if err != nil {
			q.headLen = 0
			if errors.Is(err, ring.ErrTruncated) {
				q.state = qStalled
				q.headSince = q.n.s.Now()
				return false
			}
			q.halt(FaultIllegal, 0, err.Error())
			return false
		}
		q.headLen, q.headSince = n, q.n.s.Now()
		if q.head.Kind == ring.KindNop && q.n.model.Cost(model.PacketGap(ring.KindNop)) == 0 {
			q.retire() // padding dwords: part of the unit just run, free
			continue
		}
		if !q.prepare() || q.state == qParked {
			return false // halted, or parked on a POLL
		}
		if q.x.active {
			return true // moving data: xferChunk resumes the engine
		}
		return q.finish() && q.owe()
	}
}

// owe makes the engine pay the gap after the packet just finished; it
// reports whether that takes time (the engine stays held until gapDone).
// Without a gap the queue goes back to ready (or idle) at once.
func (q *Queue) owe() bool {
	if q.gap > 0 {
		q.n.s.AtWorkStep(q.n.s.Now()+q.gap, (*gapStep)(q.eng), 0)
		q.gap = 0
		return true
	}
	q.afterGap()
	return false
}

// afterGap puts a queue whose packet is over back in the run list, or
// idles it when nothing more is rung.
func (q *Queue) afterGap() {
	if q.pos == q.target {
		q.drain()
		return
	}
	q.state = qReady
}

// drain idles a queue that ran everything rung.
func (q *Queue) drain() {
	q.state = qIdle
	if q.n.cfg.RptrWriteBack != RptrPerPacket {
		q.writeBack()
	}
}

// finish applies and retires the head packet and notes the model's gap
// after it; it reports whether the queue can go on.
func (q *Queue) finish() bool {
	if !q.apply() {
		return false
	}
	q.retire()
	// The gap is the engine's time: keyed by the engine, so that one
	// engine can be slow for a whole perturbed run.
	gap := model.PacketGap(q.head.Kind)
	if q.head.Kind == ring.KindCopy && q.x.nd == 1 {
		// The per-path fixed cost: a copy to or from host memory crosses
		// the GPU's PCIe link, a local one stays in its memory.
		switch {
		case q.x.src == model.Host || q.x.dst[0] == model.Host:
			gap = model.HostCopyGap()
		case q.x.dst[0] == q.x.src:
			gap = model.LocalCopyGap()
		}
	}
	q.gap = q.jitter(sim.Key{Kind: sim.KeyEngine, A: uint32(q.eng.gpu), B: uint32(q.eng.id + 1)}, q.n.model.Cost(gap))
	q.retirePadding()
	return q.state != qHalted
}

// retirePadding retires the free padding NOPs that follow the packet just
// retired, at its time: they are part of its unit. The next real packet,
// if decoded, is kept for run.
func (q *Queue) retirePadding() {
	if q.n.model.Cost(model.PacketGap(ring.KindNop)) != 0 {
		return
	}
	for q.state != qHalted && q.pos < q.target {
		n, err := q.r.DecodeAt(&q.head, q.pos, q.target-q.pos)
		if err != nil {
			return // run decodes it again and stalls or halts there
		}
		q.headLen, q.headSince = n, q.n.s.Now()
		if q.head.Kind != ring.KindNop {
			q.headReady = true
			return
		}
		q.retire()
	}
}

// retire moves past the head packet.
func (q *Queue) retire() {
	q.be.Retired(q.pos, q.headSince, &q.head)
	pos := q.pos
	q.pos += uint64(q.headLen)
	if q.n.s.Race() != nil {
		q.raceRetired()
	}
	q.c.packets[q.head.Kind].Inc()
	if q.head.Kind != ring.KindNop {
		// Padding NOPs retire at their packet's time: tracing them would
		// double the digest's cost and add nothing.
		q.n.s.Trace(q.n.tk.done, q.subj, q.pos, uint64(q.head.Kind), q.head.CopyBytes())
	}
	q.n.s.Progress()
	if q.cl != nil && q.head.Kind != ring.KindNop {
		q.cl.Retired(pos)
	}
	switch q.n.cfg.RptrWriteBack {
	case RptrPerPacket:
		q.writeBack()
	case RptrPerBurst:
		// Padding NOPs do not count towards a burst.
		if q.head.Kind != ring.KindNop {
			if q.sinceWriteBack++; q.sinceWriteBack >= q.n.cfg.RptrBurst {
				q.writeBack()
			}
		}
	}
}

func (q *Queue) writeBack() {
	q.sinceWriteBack = 0
	if q.r.Rptr() == q.pos {
		return
	}
	if q.n.inj != nil {
		if lag := q.n.inj.rptrLag(q); lag > 0 {
			pos := q.pos
			q.n.s.After(lag, func() {
				if q.r.Rptr() < pos {
					q.setRptr(pos)
				}
			})
			return
		}
	}
	q.setRptr(q.pos)
}

func (q *Queue) setRptr(pos uint64) {
	if err := q.r.SetRptr(pos); err != nil {
		q.halt(FaultIllegal, 0, "read-pointer write-back: "+err.Error())
		return
	}
	q.be.RptrWritten()
	for _, f := range q.onRptr {
		f(pos)
	}
}

// complete is the head packet's time being up (its data has moved): the
// engine applies it and goes on.
func (q *Queue) complete() {
	if q.state == qBusy && q.eng.cur == q {
		q.eng.resume()
	}
}

// pollOver is a parked POLL that is over, because it held at a read tick
// or its retries ran out: the queue waits for its engine again, and the
// POLL retires, with the gap after it, when it gets it.
func (q *Queue) pollOver() {
	q.pollHeld = true
	q.state = qReady
	q.eng.wake()
}

func (q *Queue) halt(kind FaultKind, addr uint64, detail string) {
	q.state = qHalted
	f := Fault{Kind: kind, Queue: q.id, At: q.n.s.Now(), Offset: q.pos, Addr: addr, Halts: true, Detail: detail}
	if q.headLen > 0 {
		f.Packet = q.head.String()
	}
	q.fault = &f
	q.n.raise(f)
}

func (q *Queue) event(kind FaultKind, addr uint64, ctx uint32, detail string) {
	q.n.raise(Fault{Kind: kind, Queue: q.id, At: q.n.s.Now(), Offset: q.pos, Packet: q.head.String(),
		Addr: addr, Context: ctx, Detail: detail})
}
