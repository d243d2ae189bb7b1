package engine

import (
	"fmt"

	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

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
	gap            sim.Time // engine time owed after the packet just finished
	pollHeld       bool     // the head POLL is over (held at a re-read, or timed out): it retires when the queue next runs
	headReady      bool     // head is decoded at pos (after padding was retired)
	eng            *Engine  // the SDMA engine the queue is placed on (sdma.go)

	// issuer side bookkeeping for diagnosis
	spaceWaiters int
	chainBases   []uint64
	quietWaiters int

	fetchedFn func()
}

func newQueue(n *Node, id QueueID, e *Engine) (*Queue, error) {
	r, err := ring.New(n.cfg.Ring)
	if err != nil {
		return nil, err
	}
	q := &Queue{n: n, id: id, r: r, subj: n.s.TraceSubject(id.String()),
		wl: n.s.NewWatchList(id.String()), c: n.m.forQueue(id), eng: e}
	q.pos, q.target = r.Rptr(), r.Doorbell()
	q.fetchedFn = q.fetched
	e.queues = append(e.queues, q)
	return q, nil
}

// Engine returns the SDMA engine the queue is placed on.
func (q *Queue) Engine() *Engine { return q.eng }

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
