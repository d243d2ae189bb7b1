package mlx5

import (
	"encoding/binary"
	"fmt"

	"github.com/emud-dev/emud/nic"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// Memory is the device memory the NIC reads and writes (emud's
// engine.Memory): writes and atomics wake the lanes that wait on them.
type Memory interface {
	Read(addr uint64, dst []byte) error
	Write(addr uint64, src []byte) error
	Atomic(addr uint64, width int, f func(old uint64) uint64) (uint64, error)
}

// Keys resolves n bytes at offset off of the memory region key names,
// which must be registered on GPU gpu, to a device address.
type Keys func(key uint32, gpu int, off, n uint64) (uint64, error)

// Config is one queue pair's send side, as the host control plane made it.
type Config struct {
	Name      string // for reports
	QPN       uint32
	GPU, Peer int    // the local and the remote GPU (each one NIC)
	SQ        uint64 // the send queue buffer: WQEs basic blocks
	WQEs      uint32 // a power of two
	DBRec     uint64 // the doorbell record (the SQ producer counter is its second word)
	CQ        uint64 // the completion queue: CQEs entries of CQESize
	CQEs      uint32
	Collapsed bool     // every CQE goes to entry 0 (MORI's cc=1)
	Link      *nic.QP  // GPU → Peer
	Back      *nic.QP  // Peer → GPU (READ responses)
	Latency   sim.Time // one way through the network (the link's model's)
	Mem       Memory
	Keys      Keys
	Fail      func(error)
	// Race, when set, is the race detector that sees the NIC's accesses
	// in Space (race.go); DoneWords are the words whose atomic readers
	// acquire the QP's completions (the CQE's last word, and the
	// endpoint's doneIdx that MORI's quiet advances after reading it).
	Race      *race.Detector
	Space     race.SpaceID
	DoneWords []uint64
	// InOrder says the link delivers a QP's packets in order (an RC queue
	// pair on package nic's InOrder network): each remote write and
	// atomic then lands after every earlier one of the QP.
	InOrder bool
}

// QP is the NIC side of one send queue.
type QP struct {
	c       Config
	s       *sim.Sim
	ci      uint16 // consumer counter, in basic blocks
	pend    []*op  // taken, not yet reported, in WQE order
	cqes    uint32 // CQEs written
	errored bool   // after an error completion every later WQE is flushed
	dead    bool
	// The race detector's clocks: every landed operation of the QP
	// (InOrder: what an atomic after them implies) and every completed one.
	landed, completed race.Sync
}

type op struct {
	w        WQE
	done     bool
	syndrome uint8        // 0: success
	th       *race.Thread // the race detector's thread of the operation
	landing  bool         // a packet of it has landed at the peer
}

// New makes the NIC side of a send queue.
func New(s *sim.Sim, c Config) (*QP, error) {
	switch {
	case c.WQEs == 0 || c.WQEs&(c.WQEs-1) != 0 || c.WQEs > 1<<15:
		return nil, fmt.Errorf("mlx5: QP %s: %d WQEs: want a power of two up to 32768", c.Name, c.WQEs)
	case c.CQEs == 0:
		return nil, fmt.Errorf("mlx5: QP %s: a CQ of no entries", c.Name)
	case c.Link == nil || c.Back == nil || c.Mem == nil || c.Keys == nil || c.Fail == nil:
		return nil, fmt.Errorf("mlx5: QP %s: Link, Back, Mem, Keys and Fail are required", c.Name)
	}
	return &QP{c: c, s: s}, nil
}

// Close stops the QP: later doorbells and completions are ignored (its
// dev comm was destroyed; its memory may be another's).
func (q *QP) Close() { q.dead = true }

// Consumed is the consumer counter: WQE basic blocks taken so far.
func (q *QP) Consumed() uint16 { return q.ci }

func (q *QP) fail(f string, a ...any) {
	q.dead = true
	q.c.Fail(fmt.Errorf("mlx5 NIC: queue %s (QPN %#x): %s", q.c.Name, q.c.QPN, fmt.Sprintf(f, a...)))
}

// Doorbell is a store to the QP's UAR doorbell: the NIC reads the
// doorbell record's producer counter and takes every WQE between its
// consumer counter and it, as the bytes are now. by is the race
// detector's thread of the store (nil without the detector): the
// operations it starts are ordered after what by did.
func (q *QP) Doorbell(by *race.Thread) {
	if q.dead {
		return
	}
	var rec [4]byte
	if err := q.c.Mem.Read(q.c.DBRec+4, rec[:]); err != nil {
		q.fail("reading the doorbell record at %#x: %v", q.c.DBRec+4, err)
		return
	}
	pi := uint16(binary.BigEndian.Uint32(rec[:]))
	if ahead := pi - q.ci; uint32(ahead) > q.c.WQEs {
		q.fail("the doorbell record's counter %d is %d blocks past the consumer's %d: more than the %d the send queue holds", pi, ahead, q.ci, q.c.WQEs)
		return
	}
	blk := make([]byte, BB)
	for q.ci != pi {
		if !q.fetch(blk, q.ci) {
			return
		}
		op, _, ds := Header(blk)
		n := (int(ds)*segBytes + BB - 1) / BB
		if n == 0 {
			n = 1
		}
		if left := pi - q.ci; int(left) < n {
			q.fail("WQE %d (opcode %s) takes %d blocks but the doorbell record posts only %d more", q.ci, OpName(op), n, left)
			return
		}
		b := blk
		if n > 1 {
			b = make([]byte, n*BB)
			for i := range n {
				if !q.fetch(b[i*BB:(i+1)*BB], q.ci+uint16(i)) {
					return
				}
			}
		}
		w, err := Decode(b, q.ci)
		if err != nil {
			q.fail("%v", err)
			return
		}
		q.ci += uint16(n)
		q.start(w, by)
	}
}

// fetch reads the basic block at counter i (wrapping in the queue).
func (q *QP) fetch(b []byte, i uint16) bool {
	a := q.c.SQ + uint64(uint32(i)&(q.c.WQEs-1))*BB
	if err := q.c.Mem.Read(a, b); err != nil {
		q.fail("fetching WQE block %d at %#x: %v", i, a, err)
		return false
	}
	return true
}

// local and remote resolve a WQE's ranges; ok false when a key or range
// is bad (the op then completes in error).
func (q *QP) local(s Seg) (uint64, error) { return q.c.Keys(s.Key, q.c.GPU, s.Addr, uint64(s.Len)) }

func (q *QP) start(w WQE, by *race.Thread) {
	o := &op{w: w}
	q.pend = append(q.pend, o)
	q.raceStart(o, by)
	lat := q.c.Latency // one way: an ack, a read request, an atomic response
	if q.errored {
		o.syndrome = SyndromeWRFlush
		q.finish(o)
		return
	}
	var locals []uint64
	for _, s := range w.Segs {
		a, err := q.local(s)
		if err != nil {
			q.errorOp(o, SyndromeLocalProt, fmt.Sprintf("local key %#x: %v", s.Key, err), 0)
			return
		}
		locals = append(locals, a)
	}
	n := w.Bytes()
	remote, err := q.c.Keys(w.RKey, q.c.Peer, w.RAddr, n)
	if err != nil {
		q.errorOp(o, SyndromeRemoteAccess, fmt.Sprintf("remote key %#x at GPU %d: %v", w.RKey, q.c.Peer, err), lat)
		return
	}
	name := fmt.Sprintf("%s %d B (WQE %d)", OpName(w.Opcode), n, w.Index)
	switch w.Opcode {
	case OpRDMAWrite, OpRDMAWriteImm:
		buf := w.Inline
		if buf == nil {
			buf = make([]byte, n)
		}
		m := &nic.Message{Op: name, Bytes: n, Done: func() {
			q.raceLanded(o)
			q.s.AfterWork(lat, func() { q.finish(o) })
		}}
		if w.Inline == nil {
			m.Read = func(lo, hi uint64) { q.gather(o, w.Segs, locals, buf, lo, hi) }
		}
		m.Land = func(lo, hi uint64) {
			q.raceFirstLanding(o)
			q.write(o, remote+lo, buf[lo:hi], true)
		}
		q.c.Link.Post(m)
	case OpRDMARead:
		buf := make([]byte, n)
		m := &nic.Message{Op: name, Bytes: n, Done: func() { q.finish(o) },
			Read: func(lo, hi uint64) {
				if err := q.c.Mem.Read(remote+lo, buf[lo:hi]); err != nil {
					q.fail("WQE %d: reading %#x at the peer: %v", w.Index, remote+lo, err)
				}
				q.raceAccess(o, remote+lo, hi-lo, "read at the peer", false, false)
			},
			Land: func(lo, hi uint64) { q.scatter(o, w.Segs, locals, buf, lo, hi) }}
		q.s.AfterWork(lat, func() { q.c.Back.Post(m) }) // the request's way there
	case OpAtomicCS, OpAtomicFA:
		m := &nic.Message{Op: name, Land: func(_, _ uint64) {
			if q.dead {
				return
			}
			old, err := q.c.Mem.Atomic(remote, 8, func(v uint64) uint64 {
				if w.Opcode == OpAtomicFA {
					return v + w.SwapAdd
				}
				if v == w.Compare {
					return w.SwapAdd
				}
				return v
			})
			if err != nil {
				q.fail("WQE %d: the atomic at %#x on GPU %d: %v", w.Index, remote, q.c.Peer, err)
				return
			}
			q.raceAtomic(o, remote)
			q.s.AfterWork(lat, func() {
				var b [8]byte
				binary.LittleEndian.PutUint64(b[:], old)
				q.returned(o, locals[0], b[:])
				q.finish(o)
			})
		}}
		q.c.Link.Post(m)
	}
}

// gather reads [lo, hi) of a gather list into buf as the packet leaves.
func (q *QP) gather(o *op, segs []Seg, at []uint64, buf []byte, lo, hi uint64) {
	q.walk(segs, lo, hi, func(i int, off, boff, n uint64) {
		if err := q.c.Mem.Read(at[i]+off, buf[boff:boff+n]); err != nil && !q.dead {
			q.fail("WQE %d: reading the source %#x: %v", o.w.Index, at[i]+off, err)
		}
		q.raceAccess(o, at[i]+off, n, "source read", false, false)
	})
}

// scatter writes [lo, hi) of buf to a scatter list as the packet lands.
func (q *QP) scatter(o *op, segs []Seg, at []uint64, buf []byte, lo, hi uint64) {
	q.walk(segs, lo, hi, func(i int, off, boff, n uint64) { q.write(o, at[i]+off, buf[boff:boff+n], false) })
}

// walk calls f for each piece of segs that [lo, hi) of the payload covers:
// segment i, the offset in it, the payload offset, the length.
func (q *QP) walk(segs []Seg, lo, hi uint64, f func(i int, off, boff, n uint64)) {
	base := uint64(0)
	for i, s := range segs {
		end := base + uint64(s.Len)
		if a, b := max(lo, base), min(hi, end); a < b {
			f(i, a-base, a, b-a)
		}
		base = end
	}
}

func (q *QP) write(o *op, addr uint64, b []byte, remote bool) {
	if q.dead || len(b) == 0 {
		return
	}
	if err := q.c.Mem.Write(addr, b); err != nil {
		q.fail("WQE %d: writing %#x: %v", o.w.Index, addr, err)
		return
	}
	what := "write of the returned data"
	if remote {
		what = "write at the peer"
	}
	q.raceAccess(o, addr, uint64(len(b)), what, true, false)
}

// returned writes an atomic's old value into its local buffer: one
// 8-byte write, an atomic one for the race detector (MORI points every
// signal's fetch-add at one scratch word, which the responses overwrite
// and no one reads: not a race between them).
func (q *QP) returned(o *op, addr uint64, b []byte) {
	if q.dead {
		return
	}
	if err := q.c.Mem.Write(addr, b); err != nil {
		q.fail("WQE %d: writing the returned value at %#x: %v", o.w.Index, addr, err)
		return
	}
	q.raceAccess(o, addr, uint64(len(b)), "write of the returned value", true, true)
}

// errorOp completes o in error after d and reports why (MORI's quiet
// asserts on an error CQE; the run fails with the cause in words).
func (q *QP) errorOp(o *op, syndrome uint8, why string, d sim.Time) {
	o.syndrome = syndrome
	q.errored = true
	q.s.AfterWork(d, func() {
		q.finish(o)
		q.fail("WQE %d (opcode %s) completed in error (syndrome %#x): %s", o.w.Index, OpName(o.w.Opcode), syndrome, why)
	})
}

// finish marks o done and reports the completions now in order.
func (q *QP) finish(o *op) {
	if q.dead && o.syndrome == 0 {
		return
	}
	o.done = true
	q.s.Progress()
	for len(q.pend) > 0 && q.pend[0].done {
		p := q.pend[0]
		q.pend = q.pend[1:]
		q.raceCompleted(p)
		if p.w.Signaled || p.syndrome != 0 {
			q.cqe(p)
		}
	}
}

// cqe writes p's completion.
func (q *QP) cqe(p *op) {
	slot := uint64(0)
	if !q.c.Collapsed {
		slot = uint64(q.cqes % q.c.CQEs)
	}
	c := CQE{Opcode: CQEReq, Owner: uint8(q.cqes/q.c.CQEs) & 1, WQECounter: p.w.Index, WQEOpcode: p.w.Opcode, QPN: q.c.QPN, ByteCnt: uint32(p.w.Bytes())}
	if q.c.Collapsed {
		c.Owner = 0
	}
	if p.syndrome != 0 {
		c.Opcode, c.Syndrome = CQEReqErr, p.syndrome
	}
	q.cqes++
	var b [CQESize]byte
	c.Put(b[:])
	if err := q.c.Mem.Write(q.c.CQ+slot*CQESize, b[:]); err != nil {
		q.fail("writing the CQE at %#x: %v", q.c.CQ+slot*CQESize, err)
	}
	q.raceCQE(p, q.c.CQ+slot*CQESize)
}

// Depth is the send queue's WQE basic blocks.
func (q *QP) Depth() uint32 { return q.c.WQEs }
