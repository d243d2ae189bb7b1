package engine

import (
	"fmt"
	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// Queue is one SDMA queue: a ring, the issuer side of the ring protocol
// (the embedded issuer.Queue: Reserve, Submit, Commit, AwaitDrained, ...)
// and the engine that executes it. Its methods must be called from the
// running actor or event (the simulator runs one at a time).
type Queue struct {
	*issuer.Queue
	be   issuer.Backend
	n    *Node
	id   QueueID
	r    *ring.Ring
	subj sim.TraceSubject
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
	dstBuf         []int
	dstArr         [2]int
	x              xfer          // COPY data movement in progress (timing.go)
	gap            sim.Time      // engine time owed after the packet just finished
	pollHeld       bool          // the head POLL is over (held at a re-read, or timed out): it retires when the queue next runs
	headReady      bool          // head is decoded at pos (after padding was retired)
	eng            *Engine       // the SDMA engine the queue is placed on (sdma.go)
	rc             *queueRace    // race detector state; nil when it is off (race.go)
	poster         issuer.Poster // who posted the head packet (issuer.Queue.Posted), nil if unnamed
	dead           bool          // destroyed (Node.DestroyQueue) while its engine finished the gap after its last packet

	onRptr []func(uint64)
	cl     Client // SetClient; nil for the issuer protocol's own packets
}

// Client is a producer that lowers another API's operations onto a
// queue's packets (package fabric's GIN over SDMA) and keeps that API's
// meaning of them: it hears of each packet's retirement and, with the race
// detector on, gives the detector thread each packet runs on (the API's
// operation, whose edges are the API's documented rules rather than the
// queue's order) and the space the node's addresses are tracked in (the
// API's memory, so that the engine's accesses meet the API's lanes').
type Client interface {
	// Retired: the packet at ring offset pos retired (its data moved, its
	// signal applied).
	Retired(pos uint64)
	// RaceThread is the detector thread of the packet at pos, or nil for
	// the queue's own (issuer.Backend.RaceStart).
	RaceThread(pos uint64) *race.Thread
	// RaceReader is the thread of the packet's reads, or nil for
	// RaceThread's: an API whose local completion covers a copy's reads
	// but not its writes keeps them apart.
	RaceReader(pos uint64) *race.Thread
	// RaceSignal: the packet at pos is about to apply its signal.
	RaceSignal(pos uint64)
	// RaceAddr is the space and address the detector tracks for addr.
	RaceAddr(d *race.Detector, addr uint64) (race.SpaceID, uint64)
	// RaceInfo may reword in, the engine's description of an access of
	// the packet at pos, in the API's terms (its operation and OpKind, so
	// that a report gives the API's advice).
	RaceInfo(pos uint64, in *race.Info)
}

// SetClient makes c the queue's client (nil: none).
func (q *Queue) SetClient(c Client) { q.cl = c }

func newQueue(n *Node, id QueueID, e *Engine, o ring.Options) (*Queue, error) {
	if o.Buf == nil {
		size := o.Size
		if size == 0 {
			size = ring.DefaultSize
		}
		buf, err := n.mem.ringBuf(size)
		if err != nil {
			return nil, fmt.Errorf("engine: queue %v: ring buffer: %w", id, err)
		}
		o.Buf = buf
	}
	r := n.slabs.rings.New()
	if err := ring.NewIn(r, o); err != nil {
		return nil, err
	}
	n.mem.ringMade(o.Buf, r)
	n.rings = append(n.rings, r)
	q := n.slabs.queues.New()
	*q = Queue{n: n, id: id, r: r, subj: n.s.TraceSubject(id.String()), c: n.m.forQueue(id, &n.slabs.counters), eng: e}
	q.Queue = n.slabs.issuers.New()
	q.be = issuer.NewIn(q.Queue, n.s, id, r, port{q}, &n.hook)
	q.pos, q.target = r.Rptr(), r.Doorbell()
	e.queues = append(e.queues, q)
	return q, nil
}

// OnRptr makes the engine call f with the new read pointer each time it
// writes the read pointer back: a producer that keeps its own copy of the
// write-back word (a KFD queue resource's Queue_read_ptr, mirrored by a
// stand-in driver) follows it there.
func (q *Queue) OnRptr(f func(rptr uint64)) { q.onRptr = append(q.onRptr, f) }

// Engine returns the SDMA engine the queue is placed on.
func (q *Queue) Engine() *Engine { return q.eng }

// inFlight says why the queue has work in flight, in words, or "" when it
// has none: packets reserved but not rung or not yet retired, a read
// pointer not yet written back, a packet moving data, parked on a POLL or
// stalled on a truncated one. The engine's gap after the last retired
// packet is not the queue's work.
func (q *Queue) inFlight() string {
	switch {
	case q.r.CachedWptr() != q.target:
		return "packets reserved and not rung"
	case q.pos != q.target:
		return "packets rung and not retired"
	case q.x.active:
		return "a copy moving data"
	case q.state == qParked || q.state == qStalled || q.state == qFetching:
		return "the engine " + q.state.String() + " on it"
	case q.r.Rptr() != q.target:
		return "the read pointer not yet written back"
	}
	return ""
}

// Busy reports whether the engine has rung work it has not finished.
func (q *Queue) Busy() bool { return q.pos != q.target || q.state == qBusy }

// State names what the engine is doing: idle, fetching, busy, parked,
// stalled or halted.
func (q *Queue) State() string { return q.state.String() }

// Fault returns the fault that halted the queue, or nil.
func (q *Queue) Fault() *Fault { return q.fault }

// StoreWptr is a raw 64-bit store of the write pointer by a producer that
// writes packets itself (Ring().Write at the write pointer, then
// StoreWptr, then RingDoorbell, as ROCr does), outside the commit chain:
// hang reports and traces show it. The engine executes what the doorbell
// says; the write pointer is only recorded.
func (q *Queue) StoreWptr(v uint64) { q.r.StoreWptr(v) }

// port is the emulated engine's side of the issuer protocol: a doorbell
// store reaches the engine at once; the read pointer lives in the ring,
// where the engine writes it back and wakes the issuers itself.
type port struct{ q *Queue }

func (p port) Publish(end uint64)  { p.q.doorbell(end) }
func (p port) ReadRptr() uint64    { return p.q.r.Rptr() }
func (p port) EngineState() string { return p.q.state.String() }
func (p port) AwaitEngine(a *sim.Actor, op issuer.Op, w sim.Wait) {
	if op == issuer.OpReserve {
		p.q.c.ringFull.Inc()
	}
	a.Await(w)
}
