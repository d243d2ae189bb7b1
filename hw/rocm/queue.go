package rocm

import (
	"fmt"
	"sync/atomic"

	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Queue is one real SDMA queue driven by MORI's issuer protocol: the
// embedded issuer.Queue (Claim, AwaitSpace, Submit, Commit, AwaitDrained,
// ...) keeps the issuer pointers in a ring.Ring over the queue's ring
// memory, so packet bytes go straight into it; publishing stores the write
// pointer, then the doorbell (docs/sdma-hardware.md §4.2); the read pointer
// comes from the word the engine writes back, polled (Config.Pace). Like
// engine.Queue its methods must be called from the running actor.
type Queue struct {
	*issuer.Queue
	be   issuer.Backend
	d    *Device
	res  Resource
	wptr *uint64
	rptr *uint64
	subj sim.TraceSubject
}

func newQueue(d *Device, id QueueID, res Resource) (*Queue, error) {
	wp, rp := res.Wptr(), res.Rptr()
	if wp == nil || rp == nil {
		return nil, fmt.Errorf("hw/rocm: %v: the driver returned a queue without a write pointer or read pointer", id)
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
	q := &Queue{d: d, res: res, wptr: wp, rptr: rp, subj: d.s.TraceSubject(id.String())}
	q.Queue, q.be = issuer.New(d.s, id, r, port{q}, &d.hook)
	return q, nil
}

// Resource returns the driver's queue resource.
func (q *Queue) Resource() Resource { return q.res }

// port is the real queue's side of the issuer protocol: the engine runs
// outside the simulator, so nothing wakes an issuer waiting on it; waits
// poll its read-pointer word.
type port struct{ q *Queue }

// Publish stores the write pointer, then the doorbell (the resource's
// store fences first).
func (p port) Publish(end uint64) {
	q := p.q
	atomic.StoreUint64(q.wptr, end)
	q.res.StoreDoorbell(end)
	q.d.s.Trace(q.d.tkDB, q.subj, end, 0, 0)
	q.be.Rang(end)
}

func (p port) ReadRptr() uint64    { return atomic.LoadUint64(p.q.rptr) }
func (p port) EngineState() string { return "outside the simulator" }
func (p port) AwaitEngine(a *sim.Actor, _ issuer.Op, w sim.Wait) {
	p.q.d.poll(a, w)
}
