package engine

import (
	"github.com/emud-dev/emud/issuer"
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
	who  func() string // the queue's head packet, as a writer (sim.SetWriter)

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
	x              xfer          // COPY data movement in progress (timing.go)
	gap            sim.Time      // engine time owed after the packet just finished
	pollHeld       bool          // the head POLL is over (held at a re-read, or timed out): it retires when the queue next runs
	headReady      bool          // head is decoded at pos (after padding was retired)
	eng            *Engine       // the SDMA engine the queue is placed on (sdma.go)
	rc             *queueRace    // race detector state; nil when it is off (race.go)
	poster         issuer.Poster // who posted the head packet (issuer.Queue.Posted), nil if unnamed

	fetchedFn func()
	onRptr    []func(uint64)
}

func newQueue(n *Node, id QueueID, e *Engine, o ring.Options) (*Queue, error) {
	r, err := ring.New(o)
	if err != nil {
		return nil, err
	}
	q := &Queue{n: n, id: id, r: r, subj: n.s.TraceSubject(id.String()), c: n.m.forQueue(id), eng: e}
	q.who = q.writerName
	q.Queue, q.be = issuer.New(n.s, id, r, port{q}, &n.hook)
	q.pos, q.target = r.Rptr(), r.Doorbell()
	q.fetchedFn = q.fetched
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
