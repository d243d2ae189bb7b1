package engine

import (
	"fmt"

	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/ring"
)

// The race detector's view of the engine (package race; sim.EnableRace).
// A queue's engine runs its packets in order, but that order is an ordering
// only between packets whose posts were ordered: each packet runs on the
// detector thread of the queue for its posting thread (a race.Queue, kept
// by the issuer side: issuer.Backend.RaceStart), so two posts from lanes or
// kernels that nothing orders are concurrent, and so are the engine's
// accesses on their behalf.
//   - A packet is ordered after what its writer did before writing it into
//     the ring, after what the lane that rang it did before the doorbell
//     (if that lane knew of the write), and after the earlier packets of
//     the queue whose posts were ordered before it.
//   - A COPY's source reads and destination writes are accesses of the
//     queue, chunk by chunk as they happen (data.go); so are WRITE,
//     CONST_FILL, TIMESTAMP and FENCE stores. Phantom memory holds no data
//     and is not tracked.
//   - An ATOMIC is an atomic write and a release into its word's sync
//     object; a FENCE store releases too. A POLL_REGMEM that holds
//     acquires its word's sync object.
//   - Each retired packet leaves a snapshot of its thread's clock with the
//     issuer side; quiet (AwaitDrained) acquires those of the packets up to
//     its target that the quieting lane's posts (or posts it knew of) put
//     there.
// With the detector off each hook is one nil check.

// queueRace is a queue's detector state, made on first use.
type queueRace struct {
	t      *race.Thread // the running packet's (issuer.Backend.RaceStart)
	who    string
	read   *race.Info // this packet's infos
	write  *race.Info
	write2 *race.Info
}

func (n *Node) raceSpace(d *race.Detector) race.SpaceID { return d.Space(n.mem, "LSA memory") }

func (q *Queue) race(d *race.Detector) *queueRace {
	if q.rc == nil {
		q.rc = &queueRace{who: q.id.String()}
	}
	return q.rc
}

// raceStart orders the head packet after its writers and its doorbell and
// names its accesses.
func (q *Queue) raceStart() {
	d := q.n.s.Race()
	if d == nil {
		return
	}
	r := q.race(d)
	r.t = q.be.RaceStart(q.pos, q.pos+uint64(q.headLen))
	if q.cl != nil {
		if t := q.cl.RaceThread(q.pos); t != nil {
			r.t = t
		}
	}
	site := &packetSite{q.head.Kind, q.pos, q.poster}
	who := r.who
	// What the queue knows now is what its writes publish to a POLL or
	// an acquire load that reads them (a flag put by COPY).
	vc := r.t.Snapshot()
	var poster fmt.Stringer
	if q.poster != nil {
		poster = (*packetPoster)(site)
	}
	mk := func(op string) *race.Info {
		return &race.Info{Kind: race.KindSDMA, OpKind: race.OpPacket, Who: who, Op: op, SiteOf: site, Queue: who, VC: vc, Poster: poster}
	}
	switch q.head.Kind {
	case ring.KindCopy:
		r.read, r.write = mk("COPY source read"), mk("COPY destination write")
	case ring.KindCopyWaitSignal, ring.KindMulticast, ring.KindSwap:
		k := q.head.Kind.String()
		r.read, r.write, r.write2 = mk(k+" source read"), mk(k+" destination write"), mk(k+" destination 2+ write")
	case ring.KindBroadcastCopy:
		r.read, r.write, r.write2 = mk("broadcast COPY source read"), mk("broadcast COPY destination 1 write"), mk("broadcast COPY destination 2 write")
	default:
		r.write = mk(q.head.Kind.String() + " write")
	}
	if q.cl != nil {
		for _, in := range []*race.Info{r.read, r.write, r.write2} {
			if in != nil {
				q.cl.RaceInfo(q.pos, in)
			}
		}
	}
}

// packetSite names a packet for a report: its kind and ring offset (and
// who posted it, for packetPoster).
type packetSite struct {
	kind   ring.Kind
	off    uint64
	poster issuer.Poster
}

func (p *packetSite) String() string { return fmt.Sprintf("%v at ring offset %#x", p.kind, p.off) }

// packetPoster names who posted a packetSite's packet (race.Info.Poster).
type packetPoster packetSite

func (p *packetPoster) String() string { return p.poster.Who() }

// raceAccess records an access of the head packet.
func (q *Queue) raceAccess(info func(r *queueRace) *race.Info, addr, n uint64, write, atomic bool) {
	d := q.n.s.Race()
	if d == nil {
		return
	}
	if b, err := q.n.mem.bytes("", addr, n); err != nil || b == nil {
		return // phantom memory holds no data to race on
	}
	r := q.race(d)
	sp, a := q.raceAddr(d, addr)
	t := r.t
	if !write && q.cl != nil {
		if rt := q.cl.RaceReader(q.pos); rt != nil {
			t = rt
		}
	}
	d.Access(t, sp, a, a+n, race.Access{Info: info(r), Write: write, Atomic: atomic})
}

// raceAddr is where the detector tracks addr: the node's memory, or the
// space the queue's client maps it to (Client.RaceAddr).
func (q *Queue) raceAddr(d *race.Detector, addr uint64) (race.SpaceID, uint64) {
	if q.cl != nil {
		return q.cl.RaceAddr(d, addr)
	}
	return q.n.raceSpace(d), addr
}

// raceSignal: the head packet is about to apply its signal (a fused
// packet's, after its copy): its client may order it first.
func (q *Queue) raceSignal() {
	if q.cl != nil && q.n.s.Race() != nil {
		q.cl.RaceSignal(q.pos)
	}
}

func copyRead(r *queueRace) *race.Info  { return r.read }
func copyWrite(r *queueRace) *race.Info { return r.write }
func dst2Write(r *queueRace) *race.Info { return r.write2 }

// dstWrite is the info of a COPY's write to its destination i (0 or 1).
func dstWrite(i int) func(r *queueRace) *race.Info {
	if i == 1 {
		return dst2Write
	}
	return copyWrite
}

// raceRelease releases the queue into the sync object of the word at addr
// (ATOMIC, FENCE).
func (q *Queue) raceRelease(addr uint64) {
	d := q.n.s.Race()
	if d == nil {
		return
	}
	sp, a := q.raceAddr(d, addr)
	q.race(d).t.Release(d.AddrSync(sp, a))
}

// raceOld is the w-byte word at addr before an ATOMIC updates it, for
// raceSignalled (0 with the detector off).
func (q *Queue) raceOld(addr uint64, w int) uint64 {
	if q.n.s.Race() == nil {
		return 0
	}
	return q.load(addr, w)
}

func (q *Queue) load(addr uint64, w int) uint64 {
	if w == 4 {
		v, _ := q.n.mem.Load32(addr)
		return uint64(v)
	}
	v, _ := q.n.mem.Load64(addr)
	return v
}

// raceSignalled records an ATOMIC's update of its w-byte word from old
// (delta: the amount an add added, else 0) for the detector's signal-slot
// checks; call it before raceRelease.
func (q *Queue) raceSignalled(addr uint64, w int, old uint64, delta int64) {
	d := q.n.s.Race()
	if d == nil {
		return
	}
	r := q.race(d)
	sp, a := q.raceAddr(d, addr)
	d.Signal(r.t, sp, a, uint64(w), old, q.load(addr, w), delta, r.write)
}

// geRef is the least value a counting wait (>=, >) holds on, for the
// detector's stale-epoch check; 0 for other comparisons, which it skips.
func geRef(f ring.CompareFunc, ref uint64) uint64 {
	switch f {
	case ring.CmpGE:
		return ref
	case ring.CmpGT:
		return ref + 1
	}
	return 0
}

// atomicDelta is what an ATOMIC packet adds, or 0 if it is not an add.
func atomicDelta(op ring.AtomicOp, data uint64) int64 {
	if op&0x1f != ring.AtomicOpAdd32&0x1f {
		return 0
	}
	if op.Width() == 4 {
		return int64(int32(uint32(data)))
	}
	return int64(data)
}

// raceAcquire: a POLL_REGMEM on addr held.
func (q *Queue) raceAcquire(addr uint64) {
	d := q.n.s.Race()
	if d == nil {
		return
	}
	r := q.race(d)
	sp, a := q.raceAddr(d, addr)
	t := r.t
	if p := &q.head; p.Kind == ring.KindPoll {
		d.WaitHeld(t, sp, a, fmt.Sprintf("POLL_REGMEM by %s on [%#x] %s %#x", r.who, addr, p.Func, p.Ref), -1, geRef(p.Func, uint64(p.Ref)), uint64(p.Mask))
	} else if w := &p.Wait; p.HasWait {
		d.WaitHeld(t, sp, a, fmt.Sprintf("%v wait by %s on [%#x] %s %#x", p.Kind, r.who, addr, w.Func, w.Ref), -1, geRef(w.Func, w.Ref), w.Mask)
	}
	t.Acquire(d.AddrSync(sp, a))
	d.AcquireWriters(t, sp, a, a+4) // a flag written by a COPY, say
	if p := &q.head; p.Kind == ring.KindPoll {
		if v, err := q.n.mem.Load32(addr); err == nil && r.write != nil {
			d.Poll32(sp, a, v&p.Mask, p.Ref, p.Func.String(), r.write)
		}
	}
}

// raceRetired leaves the snapshot quiet acquires.
func (q *Queue) raceRetired() {
	d := q.n.s.Race()
	if d == nil {
		return
	}
	q.be.RaceRetired(q.pos)
}
