package issuer

import (
	"fmt"
	"slices"

	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// QueueID names an SDMA queue: GPU's queue toward Peer (Peer == GPU for
// loopback) with queue id Q (lsa.QueueID).
type QueueID = lsa.QueueID

// Op names the protocol step an issuer waits in.
type Op string

// The waiting steps.
const (
	OpReserve Op = "reserve" // waiting for ring space (the read pointer)
	OpSubmit  Op = "submit"  // waiting for the commit chain
	OpQuiet   Op = "quiet"   // waiting for the read pointer to reach a target
)

// Port is what a queue's backend provides the protocol: the engine-facing
// half of a queue.
type Port interface {
	// Publish makes everything below end visible to the engine: the
	// write-pointer store, the release fence and one 64-bit doorbell store
	// of end (docs/sdma-hardware.md §4.2), then Backend.Rang(end) for the
	// observer. The ring's wptr and doorbell already hold end.
	Publish(end uint64)
	// ReadRptr is the uncached read of the read pointer the engine writes
	// back.
	ReadRptr() uint64
	// AwaitEngine blocks a until w.Pred holds, for a wait in step op whose
	// predicate reads state the engine writes (the read pointer). An engine
	// inside the simulator wakes w.List itself; one outside it is polled.
	AwaitEngine(a *sim.Actor, op Op, w sim.Wait)
	// EngineState says in a word what the engine is doing, for wait texts.
	EngineState() string
}

// Observer is told about queue work as it happens. Methods run on the
// simulator's current actor or event, one at a time, so an observer needs
// no locks. The packet and queue passed in are the backend's own: read
// them during the call, keep copies. With no observer set, each hook point
// costs one nil check.
type Observer interface {
	// Running says actor a runs now: it came back from the commit-chain
	// wait of Submit, so the doorbell that follows is its. (The protocol's
	// other waits return to code that rings nothing.)
	Running(a *sim.Actor)
	// Doorbell says q's doorbell was stored with v, from Submit, Commit or
	// a raw store (an invalid value included: the emulated engine ignores
	// it, after raising DOORBELL_INVALID).
	Doorbell(q *Queue, v uint64)
	// Retired says q's engine finished the packet at ring pointer off,
	// which it fetched and began at start (a POLL_REGMEM's parked time
	// included), now; padding NOPs that take no time are reported too. Only
	// an engine inside the simulator reports it.
	Retired(q *Queue, off uint64, start sim.Time, p *ring.Packet)
}

// Hook holds the observer of a node's or device's queues: one per backend
// instance, shared by its queues, so attaching reaches queues made before
// and after.
type Hook struct{ O Observer }

// Watch-list keys of a queue: waiters on the read pointer and on the commit
// frontier.
const (
	keyRptr      = 0
	keyCommitted = 1
)

// Queue is one SDMA queue's issuer side.
type Queue struct {
	id   QueueID
	r    *ring.Ring
	port Port
	s    *sim.Sim
	wl   *sim.WatchList // &wlBuf
	hook *Hook
	// wlBuf is the queue's watch list, inside the queue: one allocation
	// fewer for each queue of each run.
	wlBuf sim.WatchList
	// start is where the pointers began (KFD's offset; 0 on a new queue)
	start uint64

	// bookkeeping for diagnosis
	spaceWaits   int      // reservations that found the ring full
	spaceEnds    []uint64 // ends of the reservations waiting for space
	chainBases   []uint64
	quietWaiters int
	quiet        quietCond // the condition of the first quiet waiter (AwaitDrained)

	rc *raceState // the race detector's edges; nil when it is off (race.go)

	posters posterQueue // who posted the packets in flight, by ring position (poster.go)
}

// New returns the issuer side of queue id over r, the ring on the queue's
// ring memory, whose pointers start where the engine's do, and the
// backend's handle on it. hook may be nil.
func New(s *sim.Sim, id QueueID, r *ring.Ring, port Port, hook *Hook) (*Queue, Backend) {
	q := new(Queue)
	return q, NewIn(q, s, id, r, port, hook)
}

// NewIn is New into q, which the caller allocated (a node makes its
// queues a few at a time, internal/slab); q is overwritten.
func NewIn(q *Queue, s *sim.Sim, id QueueID, r *ring.Ring, port Port, hook *Hook) Backend {
	if hook == nil {
		hook = &Hook{}
	}
	*q = Queue{id: id, r: r, port: port, s: s, hook: hook, start: r.Rptr()}
	s.InitWatchList(&q.wlBuf, id.String())
	q.wl = &q.wlBuf
	return Backend{q}
}

// Backend is what a queue's backend tells its issuer side and observer:
// read-pointer write-backs, doorbell stores, retired packets. Only the
// backend that made the queue holds it, so issuers cannot fake them.
type Backend struct{ q *Queue }

// Start is where the queue's pointers began (KFD's offset of a new queue).
func (q *Queue) Start() uint64 { return q.start }

// ID returns the queue's identity.
func (q *Queue) ID() QueueID { return q.id }

// Ring returns the ring: the queue's packet bytes and the issuer's view of
// the pointers (Rptr is the last read pointer the issuer observed). For
// inspection; the protocol's steps are Queue's methods.
func (q *Queue) Ring() *ring.Ring { return q.r }

// Pointers is a snapshot of a queue's pointers.
type Pointers struct {
	Rptr, Wptr, Doorbell      uint64
	CachedWptr, CommittedWptr uint64
	Capacity                  uint64
}

// Pointers returns the issuer's pointers now, without reading the engine.
func (q *Queue) Pointers() Pointers {
	return Pointers{Rptr: q.r.Rptr(), Wptr: q.r.Wptr(), Doorbell: q.r.Doorbell(),
		CachedWptr: q.r.CachedWptr(), CommittedWptr: q.r.CommittedWptr(), Capacity: q.r.Capacity()}
}

// Rptr reads the engine's read pointer now (the uncached read).
func (q *Queue) Rptr() uint64 {
	q.refreshRptr()
	return q.r.Rptr()
}

// RptrWritten is the engine's side of a read-pointer write-back inside the
// simulator: it wakes the issuers waiting on the read pointer.
func (b Backend) RptrWritten() { b.q.rptrWritten() }

func (q *Queue) rptrWritten() { q.wl.Notify(keyRptr, keyRptr+1) }

// refreshRptr takes in the read pointer the engine wrote back. A value
// behind the last one, beyond the doorbell or not dword aligned is the
// engine misbehaving: the run fails with it.
func (q *Queue) refreshRptr() {
	v := q.port.ReadRptr()
	if v == q.r.Rptr() {
		return
	}
	if err := q.r.SetRptr(v); err != nil {
		q.s.Fail(fmt.Errorf("%v: engine read pointer: %w", q.id, err))
		return
	}
	q.s.Progress()
	q.rptrWritten()
}

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

// Fits reports whether the claimed [base, base+bytes) may be written now.
// It checks the cached read index first and reads the read pointer only
// when that fails, as MORI does.
func (q *Queue) Fits(base, bytes uint64) bool {
	if q.r.FitsCached(base, bytes) {
		return true
	}
	q.refreshRptr()
	return q.r.Fits(base, bytes)
}

// AwaitSpace is the spin half of Reserve: it waits until the claimed
// [base, base+bytes) may be written.
func (q *Queue) AwaitSpace(a *sim.Actor, base, bytes uint64) {
	if q.Fits(base, bytes) {
		return
	}
	q.spaceWaits++
	q.spaceEnds = append(q.spaceEnds, base+bytes)
	q.port.AwaitEngine(a, OpReserve, sim.Wait{List: q.wl, Lo: keyRptr, Hi: keyRptr + 1,
		Pred: func() bool { return q.Fits(base, bytes) },
		Text: func() string {
			return fmt.Sprintf("ring space on %v: reservation [%#x, %#x) needs rptr ≥ %#x, rptr = %#x",
				q.id, base, base+bytes, base+bytes-q.r.Capacity(), q.r.Rptr())
		},
		Detail: func() any { return q.waitDetail(OpReserve, base, base+bytes, base+bytes-q.r.Capacity()) }})
	q.spaceEnds = dropFirst(q.spaceEnds, base+bytes)
}

// SpaceWaits is how many reservations found the ring full and had to wait
// for the engine.
func (q *Queue) SpaceWaits() int { return q.spaceWaits }

// WriteUnit encodes p into the 32 B unit at ptr (padding with zero dwords).
func (q *Queue) WriteUnit(ptr uint64, p *ring.Packet) error {
	if err := q.r.WriteUnit(ptr, p); err != nil {
		return err
	}
	q.raceWritten(ptr)
	return nil
}

// WritePacket encodes p at base and pads the rest of units units with zero
// dwords: a packet longer than one unit (the 76 B COPY_LINEAR_WAIT_SIGNAL,
// a multicast) in a reservation of its own.
func (q *Queue) WritePacket(base uint64, units int, p *ring.Packet) error {
	if err := q.r.WritePacket(base, units, p); err != nil {
		return err
	}
	q.raceWritten(base)
	return nil
}

// WriteBroadcast places a broadcast COPY in the 96 B reservation at base.
func (q *Queue) WriteBroadcast(base uint64, p *ring.Packet) (uint64, error) {
	at, err := q.r.WriteBroadcast(base, p)
	if err == nil {
		q.raceWritten(base)
	}
	return at, err
}

// CanSubmit reports whether the commit frontier has reached base, so that
// a reservation at base is next to be rung.
func (q *Queue) CanSubmit(base uint64) bool { return q.r.CanSubmit(base) }

// AwaitChain is the spin half of Submit: it waits until the commit frontier
// reaches base, so that [base, end) is next to be rung. The frontier is
// issuer state that only actors move: this is a subscription on every
// backend.
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
		Detail: func() any { return q.waitDetail(OpSubmit, base, end, base) }})
	q.chainBases = dropFirst(q.chainBases, base)
}

// dropFirst removes the first v from vs.
func dropFirst(vs []uint64, v uint64) []uint64 {
	if i := slices.Index(vs, v); i >= 0 {
		return slices.Delete(vs, i, i+1)
	}
	return vs
}

// Submit rings [base, end) in reservation order: it waits until the commit
// frontier reaches base (the commit chain), then publishes end (write
// pointer, fence, doorbell) and advances the frontier. It is AwaitChain
// followed by the ring.
func (q *Queue) Submit(a *sim.Actor, base, end uint64) error {
	if end < base || end > q.r.CachedWptr() {
		return fmt.Errorf("%v: submit [%#x, %#x): not a reserved range (cachedWptr %#x)", q.id, base, end, q.r.CachedWptr())
	}
	q.AwaitChain(a, base, end)
	if o := q.hook.O; o != nil {
		o.Running(a)
	}
	if err := q.r.Submit(base, end); err != nil {
		return fmt.Errorf("%v: %w", q.id, err)
	}
	q.wl.Notify(keyCommitted, keyCommitted+1)
	q.raceRang(end)
	q.port.Publish(end)
	return nil
}

// Commit rings everything reserved so far, by anyone (ccoSdmaRingQueueDbr).
// It reports whether there was anything to ring.
func (q *Queue) Commit() bool {
	_, end, rang := q.r.Commit()
	if rang {
		q.wl.Notify(keyCommitted, keyCommitted+1)
		q.raceRang(end)
		q.port.Publish(end)
	}
	return rang
}

// Rang tells the observer that the doorbell was stored with v: the
// backend's Publish and raw doorbell stores call it.
func (b Backend) Rang(v uint64) {
	if o := b.q.hook.O; o != nil {
		o.Doorbell(b.q, v)
	}
}

// Retired tells the observer that the engine retired the packet at off
// (see Observer.Retired).
func (b Backend) Retired(off uint64, start sim.Time, p *ring.Packet) {
	if o := b.q.hook.O; o != nil {
		o.Retired(b.q, off, start, p)
	}
}

// QuietTarget is the drain target of quiet: the commit frontier. Packets
// reserved but not rung lie beyond it and are not waited for.
func (q *Queue) QuietTarget() uint64 { return q.r.QuietTarget() }

// Drained reports whether the read pointer has reached target, reading it
// from the engine when the last one seen has not.
func (q *Queue) Drained(target uint64) bool {
	if q.r.Rptr() >= target {
		return true
	}
	q.refreshRptr()
	return q.r.Rptr() >= target
}

// AwaitDrained blocks until the read pointer reaches target.
func (q *Queue) AwaitDrained(a *sim.Actor, target uint64) {
	defer q.raceDrained(a, target)
	if q.Drained(target) {
		return
	}
	// The first waiter's condition lives in the queue; a second waiter
	// at once (lanes of two waves quieting one queue) makes its own.
	c := &q.quiet
	if q.quietWaiters > 0 {
		c = new(quietCond)
	}
	*c = quietCond{q: q, target: target}
	q.quietWaiters++
	q.port.AwaitEngine(a, OpQuiet, sim.Wait{List: q.wl, Lo: keyRptr, Hi: keyRptr + 1, Cond: c})
	c.q = nil
	q.quietWaiters--
}

// quietCond is a quiet's wait (sim.Cond): the read pointer reaching
// target. A quiet is the most frequent wait: three closures a call
// before.
type quietCond struct {
	q      *Queue
	target uint64
}

func (c *quietCond) Holds() bool { return c.q.Drained(c.target) }

func (c *quietCond) Text() string {
	q := c.q
	return fmt.Sprintf("quiet on %v: rptr ≥ %#x, rptr = %#x (engine %s)", q.id, c.target, q.r.Rptr(), q.port.EngineState())
}

func (c *quietCond) Detail() any { return c.q.waitDetail(OpQuiet, c.target, c.target, c.target) }

// Waiters counts the issuers blocked on the queue now, by step.
type Waiters struct{ Space, Chain, Quiet int }

// Waiters returns the issuers blocked on the queue now.
func (q *Queue) Waiters() Waiters {
	return Waiters{Space: len(q.spaceEnds), Chain: len(q.chainBases), Quiet: q.quietWaiters}
}

// ChainBases are the reservations whose issuers wait on the commit chain,
// in the order they began waiting.
func (q *Queue) ChainBases() []uint64 { return q.chainBases }

// Wait is the JSON detail of an actor blocked in the ring protocol.
type Wait struct {
	Queue string `json:"queue"`
	// Op is "reserve" (waiting for ring space), "submit" (waiting for the
	// commit chain) or "quiet" (waiting for the read pointer).
	Op            Op     `json:"op"`
	Base          uint64 `json:"base"`
	End           uint64 `json:"end"`
	Need          uint64 `json:"need"` // rptr (reserve, quiet) or committedWptr (submit) it waits for
	Rptr          uint64 `json:"rptr"`
	CommittedWptr uint64 `json:"committed_wptr"`
	CachedWptr    uint64 `json:"cached_wptr"`
}

func (q *Queue) waitDetail(op Op, base, end, need uint64) Wait {
	return Wait{Queue: q.id.String(), Op: op, Base: base, End: end, Need: need,
		Rptr: q.r.Rptr(), CommittedWptr: q.r.CommittedWptr(), CachedWptr: q.r.CachedWptr()}
}
