package rocm

import (
	"fmt"
	"sync/atomic"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/hw/rocm/internal/mmio"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Watch-list keys of a queue.
const (
	keyRptr      = 0
	keyCommitted = 1
)

// Queue is one real SDMA queue driven by MORI's issuer protocol
// (sdma-hardware.md §3): the shared ring.Ring writes the packet bytes
// straight into the queue's ring memory and keeps the issuer pointers
// (reservation and commit frontiers, read-index hint); Submit and Commit
// store the write pointer, fence and store the doorbell (§4.2); the read
// pointer comes from the word the engine writes back. Like engine.Queue its
// methods must be called from the running actor.
type Queue struct {
	d   *Device
	id  QueueID
	res Resource
	r   *ring.Ring
	wl  *sim.WatchList
	obs DoorbellObserver

	wptr, rptr, db *uint64
	subj           sim.TraceSubject
	spaceWaits     int
}

var _ cco.Queue = (*Queue)(nil)

func newQueue(d *Device, id QueueID, res Resource) (*Queue, error) {
	wp, rp, db := res.Wptr(), res.Rptr(), res.Doorbell()
	if wp == nil || rp == nil || db == nil {
		return nil, fmt.Errorf("hw/rocm: %v: the driver returned a queue without a write pointer, read pointer or doorbell", id)
	}
	// KFD starts both pointers at the same monotonic offset (0 on a new
	// queue); the ring's pointers start there too.
	start := atomic.LoadUint64(wp)
	if r := atomic.LoadUint64(rp); r != start {
		return nil, fmt.Errorf("hw/rocm: %v: new queue has rptr %#x ≠ wptr %#x", id, r, start)
	}
	o := d.cfg.Ring
	o.Start = start
	r, err := ring.NewOver(res.RingMemory(), o)
	if err != nil {
		return nil, fmt.Errorf("hw/rocm: %v: %w", id, err)
	}
	q := &Queue{d: d, id: id, res: res, r: r, wl: d.s.NewWatchList(id.String()),
		wptr: wp, rptr: rp, db: db, subj: d.s.TraceSubject(id.String())}
	q.obs, _ = res.(DoorbellObserver)
	return q, nil
}

// ID returns the queue's identity.
func (q *Queue) ID() QueueID { return q.id }

// Resource returns the driver's queue resource.
func (q *Queue) Resource() Resource { return q.res }

// Ring returns the ring: the queue's real ring memory and the issuer's
// pointers. Its Rptr is the last read pointer this issuer observed.
func (q *Queue) Ring() *ring.Ring { return q.r }

// Claim is the reservation fetch-add; it never waits.
func (q *Queue) Claim(bytes uint64) (uint64, error) {
	base, err := q.r.Reserve(bytes)
	if err != nil {
		return 0, fmt.Errorf("%v: reserve: %w", q.id, err)
	}
	return base, nil
}

// syncRptr reads the engine's read pointer (the uncached read) into the
// ring. A value behind the last one, beyond the doorbell or not dword
// aligned is the engine misbehaving: the run fails with it.
func (q *Queue) syncRptr() {
	v := atomic.LoadUint64(q.rptr)
	if v == q.r.Rptr() {
		return
	}
	if err := q.r.SetRptr(v); err != nil {
		q.d.s.Fail(fmt.Errorf("hw/rocm: %v: engine read pointer: %w", q.id, err))
		return
	}
	q.d.s.Progress()
	q.wl.Notify(keyRptr, keyRptr+1)
}

// Rptr reads the engine's read pointer now.
func (q *Queue) Rptr() uint64 {
	q.syncRptr()
	return q.r.Rptr()
}

// AwaitSpace spins on the read pointer until [base, base+bytes) fits. It
// checks the cached read index first and reads rptr only when that fails,
// as MORI does.
func (q *Queue) AwaitSpace(a *sim.Actor, base, bytes uint64) {
	if q.r.FitsCached(base, bytes) {
		return
	}
	q.spaceWaits++
	q.d.poll(a, sim.Wait{List: q.wl, Lo: keyRptr, Hi: keyRptr + 1,
		Pred: func() bool { q.syncRptr(); return q.r.Fits(base, bytes) },
		Text: func() string {
			return fmt.Sprintf("ring space on %v: reservation [%#x, %#x) needs rptr ≥ %#x, rptr = %#x",
				q.id, base, base+bytes, base+bytes-q.r.Capacity(), q.r.Rptr())
		}})
}

// SpaceWaits is how many reservations found the ring full by the cached
// read index and had to read the read pointer.
func (q *Queue) SpaceWaits() int { return q.spaceWaits }

// WriteUnit encodes p into the 32 B unit at ptr of the real ring.
func (q *Queue) WriteUnit(ptr uint64, p *ring.Packet) error { return q.r.WriteUnit(ptr, p) }

// WriteBroadcast places a broadcast COPY in the 96 B reservation at base.
func (q *Queue) WriteBroadcast(base uint64, p *ring.Packet) (uint64, error) {
	return q.r.WriteBroadcast(base, p)
}

// AwaitChain waits until the commit frontier reaches base. The frontier is
// issuer state that only actors move, so this is a subscription, not a
// poll.
func (q *Queue) AwaitChain(a *sim.Actor, base, end uint64) {
	if q.r.CanSubmit(base) {
		return
	}
	a.Await(sim.Wait{List: q.wl, Lo: keyCommitted, Hi: keyCommitted + 1,
		Pred: func() bool { return q.r.CanSubmit(base) },
		Text: func() string {
			return fmt.Sprintf("commit chain on %v: [%#x, %#x) waits for committedWptr == %#x, committedWptr = %#x",
				q.id, base, end, base, q.r.CommittedWptr())
		}})
}

// Submit rings [base, end) in reservation order: wait for the commit
// chain, then the write pointer, the fence and the doorbell.
func (q *Queue) Submit(a *sim.Actor, base, end uint64) error {
	if end < base || end > q.r.CachedWptr() {
		return fmt.Errorf("%v: submit [%#x, %#x): not a reserved range (cachedWptr %#x)", q.id, base, end, q.r.CachedWptr())
	}
	q.AwaitChain(a, base, end)
	if err := q.r.Submit(base, end); err != nil {
		return fmt.Errorf("%v: %w", q.id, err)
	}
	q.ring(end)
	return nil
}

// Commit rings everything reserved so far, by anyone (ccoSdmaRingQueueDbr).
func (q *Queue) Commit() bool {
	_, end, rang := q.r.Commit()
	if rang {
		q.ring(end)
	}
	return rang
}

// ring publishes end to the hardware (sdma-hardware.md §4.2): the packet
// bytes are already in ring memory; store the write pointer, then the
// release fence and one 64-bit doorbell store; then release the next
// issuer of the commit chain.
func (q *Queue) ring(end uint64) {
	atomic.StoreUint64(q.wptr, end)
	mmio.StoreDoorbell(q.db, end)
	if q.obs != nil {
		q.obs.Rang(end)
	}
	q.d.s.Trace(q.d.tkDB, q.subj, end, 0, 0)
	q.wl.Notify(keyCommitted, keyCommitted+1)
}

// QuietTarget is the commit frontier.
func (q *Queue) QuietTarget() uint64 { return q.r.QuietTarget() }

// AwaitDrained polls the read pointer until it reaches target.
func (q *Queue) AwaitDrained(a *sim.Actor, target uint64) {
	if q.r.Rptr() >= target {
		return
	}
	q.d.poll(a, sim.Wait{List: q.wl, Lo: keyRptr, Hi: keyRptr + 1,
		Pred: func() bool { q.syncRptr(); return q.r.Rptr() >= target },
		Text: func() string {
			return fmt.Sprintf("quiet on %v: rptr ≥ %#x, rptr = %#x (engine outside the simulator)", q.id, target, q.r.Rptr())
		}})
}
