package engine

import (
	"errors"
	"fmt"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

type qstate uint8

const (
	qIdle     qstate = iota // nothing rung beyond pos
	qFetching               // doorbell seen; fetch latency running
	qBusy                   // executing the head packet
	qParked                 // POLL_REGMEM condition false
	qStalled                // head packet only partly rung
	qHalted                 // faulted
)

var qstateNames = [...]string{"idle", "fetching", "busy", "parked", "stalled", "halted"}

func (s qstate) String() string { return qstateNames[s] }

// Watch-list keys of a queue: waiters on the written-back read pointer and
// on the commit frontier.
const (
	keyRptr      = 0
	keyCommitted = 1
)

// Queue is one SDMA queue: a ring, the issuer-side protocol and the engine
// that executes it. Its methods must be called from the running actor or
// event (the simulator runs one at a time).
type Queue struct {
	n    *Node
	id   QueueID
	r    *ring.Ring
	subj sim.TraceSubject
	wl   *sim.WatchList
	c    *queueCounters

	// engine side
	pos       uint64 // next packet to execute; rptr trails it per policy
	target    uint64 // last valid doorbell value
	state     qstate
	head      ring.Packet
	headLen   int
	headSince sim.Time
	poll      pollState
	fault     *Fault
	// packets retired since the last rptr write-back (RptrPerBurst)
	sinceWriteBack int
	dstBuf         [2]int
	x              xfer     // COPY data movement in progress (timing.go)
	gap            sim.Time // engine time owed before the next packet (timing.go)
	headReady      bool     // head is decoded at pos, waiting out the gap

	// issuer side bookkeeping for diagnosis
	spaceWaiters int
	chainBases   []uint64
	quietWaiters int

	stepFn, completeFn func()
}

func newQueue(n *Node, id QueueID) (*Queue, error) {
	r, err := ring.New(n.cfg.Ring)
	if err != nil {
		return nil, err
	}
	q := &Queue{n: n, id: id, r: r, subj: n.s.TraceSubject(id.String()),
		wl: n.s.NewWatchList(id.String()), c: n.m.forQueue(id)}
	q.pos, q.target = r.Rptr(), r.Doorbell()
	q.stepFn, q.completeFn = q.step, q.complete
	return q, nil
}

// ID returns the queue's identity.
func (q *Queue) ID() QueueID { return q.id }

// Ring returns the queue's ring (its bytes and pointers).
func (q *Queue) Ring() *ring.Ring { return q.r }

// Busy reports whether the engine has rung work it has not finished.
func (q *Queue) Busy() bool { return q.pos != q.target || q.state == qBusy }

// State names what the engine is doing: idle, fetching, busy, parked,
// stalled or halted.
func (q *Queue) State() string { return q.state.String() }

// Fault returns the fault that halted the queue, or nil.
func (q *Queue) Fault() *Fault { return q.fault }

// ---- issuer side (MORI's ring protocol, sdma-hardware.md §3) ----

// Reserve hands out bytes of ring space by fetch-add on the cached write
// pointer, then waits, as the issuing lane would spin on the read pointer,
// until the full-ring rule lets the reservation be written. A reservation
// that needs the engine to free space on a queue whose earlier reservations
// were never rung waits forever: the hang report says so. It is Claim
// followed by AwaitSpace.
func (q *Queue) Reserve(a *sim.Actor, bytes uint64) (uint64, error) {
	base, err := q.Claim(bytes)
	if err != nil {
		return 0, err
	}
	q.AwaitSpace(a, base, bytes)
	return base, nil
}

// Claim is the fetch-add half of Reserve: it hands out [base, base+bytes)
// and never waits. Lanes of one wave claim together, then spin together.
func (q *Queue) Claim(bytes uint64) (uint64, error) {
	base, err := q.r.Reserve(bytes)
	if err != nil {
		return 0, fmt.Errorf("%v: reserve: %w", q.id, err)
	}
	return base, nil
}

// AwaitSpace is the spin half of Reserve: it waits until the claimed
// [base, base+bytes) may be written.
func (q *Queue) AwaitSpace(a *sim.Actor, base, bytes uint64) {
	if q.r.Fits(base, bytes) {
		return
	}
	q.c.ringFull.Inc()
	q.spaceWaiters++
	a.Await(sim.Wait{List: q.wl, Lo: keyRptr, Hi: keyRptr + 1,
		Pred: func() bool { return q.r.Fits(base, bytes) },
		Text: func() string {
			return fmt.Sprintf("ring space on %v: reservation [%#x, %#x) needs rptr ≥ %#x, rptr = %#x",
				q.id, base, base+bytes, base+bytes-q.r.Capacity(), q.r.Rptr())
		},
		Detail: func() any { return q.issuerWait("reserve", base, base+bytes, base+bytes-q.r.Capacity()) }})
	q.spaceWaiters--
}

// WriteUnit encodes p into the 32 B unit at ptr (padding with zero dwords).
func (q *Queue) WriteUnit(ptr uint64, p *ring.Packet) error { return q.r.WriteUnit(ptr, p) }

// WriteBroadcast places a broadcast COPY in the 96 B reservation at base.
func (q *Queue) WriteBroadcast(base uint64, p *ring.Packet) (uint64, error) {
	return q.r.WriteBroadcast(base, p)
}

// Submit rings [base, end) in reservation order: it waits until the commit
// frontier reaches base (the commit chain), then stores the write pointer
// and the doorbell and advances the frontier. It is AwaitChain followed by
// the ring.
func (q *Queue) Submit(a *sim.Actor, base, end uint64) error {
	if err := q.checkRange(base, end); err != nil {
		return err
	}
	q.AwaitChain(a, base, end)
	if q.n.obs != nil {
		q.n.obs.Running(a)
	}
	if err := q.r.Submit(base, end); err != nil {
		return fmt.Errorf("%v: %w", q.id, err)
	}
	q.wl.Notify(keyCommitted, keyCommitted+1)
	q.doorbell(end)
	return nil
}

func (q *Queue) checkRange(base, end uint64) error {
	if end < base || end > q.r.CachedWptr() {
		return fmt.Errorf("%v: submit [%#x, %#x): not a reserved range (cachedWptr %#x)", q.id, base, end, q.r.CachedWptr())
	}
	return nil
}

// AwaitChain is the spin half of Submit: it waits until the commit frontier
// reaches base, so that [base, end) is next to be rung.
func (q *Queue) AwaitChain(a *sim.Actor, base, end uint64) {
	if q.r.CanSubmit(base) {
		return
	}
	q.chainBases = append(q.chainBases, base)
	a.Await(sim.Wait{List: q.wl, Lo: keyCommitted, Hi: keyCommitted + 1,
		Pred: func() bool { return q.r.CanSubmit(base) },
		Text: func() string {
			return fmt.Sprintf("commit chain on %v: [%#x, %#x) waits for committedWptr == %#x, committedWptr = %#x",
				q.id, base, end, base, q.r.CommittedWptr())
		},
		Detail: func() any { return q.issuerWait("submit", base, end, base) }})
	q.dropChainBase(base)
}

func (q *Queue) dropChainBase(base uint64) {
	for i, b := range q.chainBases {
		if b == base {
			q.chainBases = append(q.chainBases[:i], q.chainBases[i+1:]...)
			return
		}
	}
}

// Commit rings everything reserved so far, by anyone (ccoSdmaRingQueueDbr).
// It reports whether there was anything to ring.
func (q *Queue) Commit() bool {
	_, end, rang := q.r.Commit()
	if rang {
		q.wl.Notify(keyCommitted, keyCommitted+1)
		q.doorbell(end)
	}
	return rang
}

// QuietTarget is the drain target of quiet: the commit frontier. Packets
// reserved but not rung lie beyond it and are not waited for.
func (q *Queue) QuietTarget() uint64 { return q.r.QuietTarget() }

// Drained reports whether the written-back read pointer has reached target.
func (q *Queue) Drained(target uint64) bool { return q.r.Rptr() >= target }

// AwaitDrained blocks until the read pointer reaches target.
func (q *Queue) AwaitDrained(a *sim.Actor, target uint64) {
	if q.Drained(target) {
		return
	}
	q.quietWaiters++
	a.Await(sim.Wait{List: q.wl, Lo: keyRptr, Hi: keyRptr + 1,
		Pred: func() bool { return q.Drained(target) },
		Text: func() string {
			return fmt.Sprintf("quiet on %v: rptr ≥ %#x, rptr = %#x (engine %s)", q.id, target, q.r.Rptr(), q.state)
		},
		Detail: func() any { return q.issuerWait("quiet", target, target, target) }})
	q.quietWaiters--
}

// IssuerWait is the JSON detail of an actor blocked in the ring protocol.
type IssuerWait struct {
	Queue string `json:"queue"`
	// Op is "reserve" (waiting for ring space), "submit" (waiting for the
	// commit chain) or "quiet" (waiting for the read pointer).
	Op            string `json:"op"`
	Base          uint64 `json:"base"`
	End           uint64 `json:"end"`
	Need          uint64 `json:"need"` // rptr (reserve, quiet) or committedWptr (submit) it waits for
	Rptr          uint64 `json:"rptr"`
	CommittedWptr uint64 `json:"committed_wptr"`
	CachedWptr    uint64 `json:"cached_wptr"`
}

func (q *Queue) issuerWait(op string, base, end, need uint64) IssuerWait {
	return IssuerWait{Queue: q.id.String(), Op: op, Base: base, End: end, Need: need,
		Rptr: q.r.Rptr(), CommittedWptr: q.r.CommittedWptr(), CachedWptr: q.r.CachedWptr()}
}

// ---- engine side (sdma-hardware.md §3.5, §5) ----

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
	if q.n.obs != nil {
		q.n.obs.Doorbell(q, v)
	}
	if why := q.badDoorbell(v); why != "" {
		q.n.raise(Fault{Kind: FaultDoorbellInvalid, Queue: q.id, At: q.n.s.Now(), Offset: q.pos, Addr: v, Detail: why})
		return
	}
	q.target = v
	switch q.state {
	case qIdle:
		q.state = qFetching
		q.n.s.AfterWork(q.n.jitter(q.n.model.DoorbellLatency()), q.stepFn)
	case qStalled:
		q.state = qFetching
		q.n.s.After(0, q.stepFn)
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

// step fetches and starts packets until one takes time, the queue parks, or
// nothing rung is left.
func (q *Queue) step() {
	if q.state == qHalted {
		return
	}
	for {
		q.state = qBusy
		if q.pos == q.target {
			if q.waitGap() {
				return
			}
			q.state = qIdle
			if q.n.cfg.RptrWriteBack != RptrPerPacket {
				q.writeBack()
			}
			return
		}
		if !q.headReady {
			n, err := q.r.DecodeAt(&q.head, q.pos, q.target-q.pos)
			if err != nil {
				if errors.Is(err, ring.ErrTruncated) {
					q.state = qStalled
					q.headLen = 0
					q.headSince = q.n.s.Now()
					return
				}
				q.headLen = 0
				q.halt(FaultIllegal, 0, err.Error())
				return
			}
			q.headLen = n
		}
		q.headReady, q.headSince = false, q.n.s.Now()
		if q.head.Kind == ring.KindNop && q.n.model.PacketOverhead(ring.KindNop) == 0 {
			q.retire() // padding dwords: part of the unit just run, free
			continue
		}
		if q.waitGap() {
			q.headReady = true // decoded: it starts when the gap is over
			return
		}
		if !q.prepare() || q.state == qParked || q.x.active {
			return // halted, parked on a POLL, or moving data
		}
		if !q.finish() {
			return
		}
	}
}

// retire moves past the head packet.
func (q *Queue) retire() {
	if q.n.obs != nil {
		q.n.obs.Retired(q, q.pos, q.headSince, &q.head)
	}
	q.pos += uint64(q.headLen)
	q.c.packets[q.head.Kind].Inc()
	if q.head.Kind != ring.KindNop {
		// Padding NOPs retire at their packet's time: tracing them would
		// double the digest's cost and add nothing.
		q.n.s.Trace(q.n.tk.done, q.subj, q.pos, uint64(q.head.Kind), q.head.CopyBytes())
	}
	q.n.s.Progress()
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
	if err := q.r.SetRptr(q.pos); err != nil {
		q.halt(FaultIllegal, 0, "read-pointer write-back: "+err.Error())
		return
	}
	q.wl.Notify(keyRptr, keyRptr+1)
}

// complete applies the head packet's effect when its time is up, then moves
// on.
func (q *Queue) complete() {
	if q.state != qBusy {
		return
	}
	if q.finish() {
		q.step()
	}
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
