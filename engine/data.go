package engine

import "github.com/emud-dev/emud/sim"

// Data movement of a COPY in progress (see the timing notes in timing.go).
// A chunk's bytes move burst by burst (Burst) as the chunk crosses its
// path: each burst's source is read and its destination written at its
// own time within the chunk's transfer, in address order. A broadcast reads each source chunk once, when its first stream
// lands, and writes the same bytes to the second destination when that
// stream lands. Overlapping source and destination (undefined on hardware)
// move all at once when the COPY completes, with memmove semantics, so that
// the result does not depend on the chunk size.
//
// A chunk that has crossed lands at once unless nothing can tell when it
// did (deferChunk): then it stays pending and moves with the next access
// to memory (Node.catchUp), the next landing of the copy, or the copy's
// last chunk, in one move of everything pending. Every read and write of
// emulated memory goes through lsa.Space.Bytes, which lands pending and
// due bytes first, so an access sees exactly what the fine path shows it;
// what is skipped is only a move per chunk nobody looks at, which lets an
// 8 MiB COPY run as one large memmove (non-temporal stores past 1 MiB)
// instead of 32 cache-polluting 256 KiB ones.

// xferData is what a COPY in progress moves.
type xferData struct {
	src     uint64
	dst     []uint64 // one per destination (a multicast has up to 1024; in dstBuf unless more than 2)
	dstBuf  [2]uint64
	off     uint64 // bytes landed at every destination so far
	overlap bool   // move everything at completion instead
	buf     []byte // broadcast: the source chunk read for the first stream
	have    bool   // buf holds the chunk (false when the source is phantom)
	real    bool   // more than a burst, and the source and first destination hold bytes
	n       uint64 // the COPY's bytes
	// pend is how many bytes before the landing frontier (off + landed)
	// have crossed but not moved yet (deferChunk); they are counted in the
	// queue's bytes already.
	pend uint64
	// The chunk in flight crosses its path over [t0, t1); landed is how
	// many of its bytes (whole bursts) have landed; lagging says it is on
	// the node's list of copies in flight (Node.lag).
	t0, t1  sim.Time
	landed  uint64
	lagging bool
}

// setXferData records the head COPY's addresses before its first chunk
// goes out.
func (q *Queue) setXferData(src uint64, dsts ...uint64) {
	d := &q.x.data
	d.src, d.off, d.have, d.pend = src, 0, false, 0
	if d.dst == nil {
		d.dst = d.dstBuf[:0]
	}
	d.dst = append(d.dst[:0], dsts...)
	n := q.head.CopyBytes()
	d.n = n
	d.overlap = false
	d.real = n > Burst && q.n.mem.holds(src, n) && q.n.mem.holds(d.dst[0], n)
	for _, dst := range dsts {
		if src < dst+n && dst < src+n {
			d.overlap = true
		}
	}
}

// landChunk moves the bytes of the chunk that has just crossed to
// destination x.cur that have not landed yet (landDue landed the bursts
// before). It reports false if the queue halted.
func (q *Queue) landChunk() bool {
	x := &q.x
	d := &x.data
	if !d.overlap && x.chunk > 0 && q.deferChunk() {
		q.c.bytes.Add(x.chunk - d.landed)
		d.pend += x.chunk - d.landed
		d.landed = x.chunk
		return true // still on the node's list: catchUp lands it
	}
	q.n.unlag(q)
	if d.overlap || x.chunk == 0 {
		return true
	}
	lo := d.landed
	d.landed = x.chunk
	if err := q.landRange(lo, x.chunk); err != nil {
		q.halt(FaultVMHole, d.dst[x.cur]+d.off+lo, err.Error())
		return false
	}
	return true
}

// landRange moves bytes [lo, hi) of the chunk in flight to destination
// x.cur: for a broadcast or multicast, the first destination's range reads
// the source into buf and the others write buf's range.
func (q *Queue) landRange(lo, hi uint64) error {
	if hi <= lo {
		return nil
	}
	x := &q.x
	d := &x.data
	if d.pend > 0 {
		if err := q.landPending(d.off + lo); err != nil {
			return err
		}
	}
	mem := q.n.mem
	q.n.s.SetWriter(q)
	n := hi - lo
	src, dst := d.src+d.off+lo, d.dst[x.cur]+d.off+lo
	var err error
	switch {
	case x.nd == 1:
		_, err = mem.Move(dst, src, n)
		if q.n.s.Race() != nil { // the check inlines; the calls do not
			q.raceAccess(copyRead, src, n, false, false)
			q.raceAccess(copyWrite, dst, n, true, false)
		}
	case x.cur == 0:
		var sb []byte
		if q.n.s.Race() != nil {
			q.raceAccess(copyRead, src, n, false, false)
			q.raceAccess(copyWrite, dst, n, true, false)
		}
		if sb, err = mem.bytes("copy source read", src, n); err == nil {
			d.have = sb != nil
			if lo == 0 {
				d.buf = d.buf[:0]
			}
			if d.have {
				d.buf = append(d.buf[:lo], sb...)
				err = mem.Write(dst, d.buf[lo:hi])
			} else {
				mem.Notify(dst, n)
			}
		}
	default:
		q.raceAccess(dst2Write, dst, n, true, false)
		if d.have {
			err = mem.Write(dst, d.buf[lo:hi])
		} else {
			mem.Notify(dst, n)
		}
	}
	if err != nil {
		return err
	}
	q.c.bytes.Add(n)
	return nil
}

// deferChunk reports whether the chunk that has just crossed may stay
// pending: a single-destination copy of real bytes, not its last chunk,
// on memory that only lsa.Space accesses reach (a C++ program's lanes
// read their node's Backing natively), without the race detector (whose
// accesses are timed), with nothing observing the unmoved destination
// range (a waiter, a tracked word, a SetOnNotify), and with no other copy
// in flight whose ranges meet this one's (catchUp lands copies in list
// order, not time order, so only disjoint copies may wait).
func (q *Queue) deferChunk() bool {
	x := &q.x
	d := &x.data
	n := q.n
	if x.nd != 1 || !d.real || x.left <= x.chunk || n.fine || n.cfg.Backing != nil || n.s.Race() != nil {
		return false
	}
	lo := d.dst[0] + d.off + d.landed - d.pend
	if n.mem.Observed(lo, d.dst[0]+d.off+x.chunk-lo) {
		return false
	}
	for _, o := range n.lagging {
		if o != q && o.x.data.meets(d) {
			return false
		}
	}
	return true
}

// meets reports whether copy d's ranges meet o's where order matters: a
// destination of either overlaps the other's source or destinations.
func (d *xferData) meets(o *xferData) bool {
	over := func(a, b uint64) bool { return a < b+o.n && b < a+d.n }
	for _, dd := range d.dst {
		if over(dd, o.src) {
			return true
		}
		for _, od := range o.dst {
			if over(dd, od) {
				return true
			}
		}
	}
	for _, od := range o.dst {
		if over(d.src, od) {
			return true
		}
	}
	return false
}

// landPending moves the pending bytes, those just before the landing
// frontier at (copy offset) front.
func (q *Queue) landPending(front uint64) error {
	d := &q.x.data
	p := d.pend
	d.pend = 0
	q.n.s.SetWriter(q)
	_, err := q.n.mem.Move(d.dst[0]+front-p, d.src+front-p, p)
	return err
}

// Burst is the granule in which a COPY's bytes land within a chunk's
// transfer: burst k of a chunk lands (its source read, its destination
// written) when k+1 bursts' worth of the chunk's transfer time has passed.
// [inferred] 256 B: no public source we found states the SDMA engine's
// read/write request size; 256 B is the payload of one maximum-size PCIe
// write (the common Max_Payload_Size) and 4 KiB is the upper
// bound. It is much finer than the 256 KiB link-sharing chunk, so a load
// during a copy sees the copy partly landed, and a store to the source
// mid-copy is sent from its own burst on.
const Burst = 256

// startBursts records the chunk's transfer [t0, t1) and, for a chunk of
// more than one burst of real bytes, puts the queue on the node's list of
// copies in flight, so that any access to memory first lands the bursts
// due by then (Node.catchUp). Bursts are landed lazily, when something
// could see them, not by an event each: an 8 MiB copy still takes one
// event per chunk. A waiter on bytes inside a chunk is woken by the access
// that landed them or at the chunk's end.
func (q *Queue) startBursts(t0, t1 sim.Time) {
	d := &q.x.data
	d.t0, d.t1, d.landed = t0, t1, 0
	if d.overlap || !d.real || q.x.chunk <= Burst {
		return
	}
	q.n.lag(q)
}

// due is how many bytes of the chunk in flight have landed by now.
func (q *Queue) due(now sim.Time) uint64 {
	d := &q.x.data
	c := q.x.chunk
	if now >= d.t1 {
		return c
	}
	if now <= d.t0 {
		return 0
	}
	b := uint64(float64(c) * float64(now-d.t0) / float64(d.t1-d.t0))
	return min(b/Burst*Burst, c)
}

// landDue lands the bursts of the chunk in flight due by now. An error
// leaves them for the chunk's end, which halts the queue.
func (q *Queue) landDue(now sim.Time) {
	x := &q.x
	d := &x.data
	if d.pend > 0 && q.landPending(d.off+d.landed) != nil {
		return // cannot fail: deferChunk took only real bytes
	}
	if !x.active || q.state != qBusy {
		return
	}
	hi := q.due(now)
	if hi <= d.landed {
		return
	}
	lo := d.landed
	if q.landRange(lo, hi) == nil {
		d.landed = hi
	}
}

// lag puts q on the list of copies in flight whose bursts catchUp lands.
func (n *Node) lag(q *Queue) {
	if q.x.data.lagging {
		return
	}
	q.x.data.lagging = true
	for _, o := range n.lagging {
		// A copy that meets q's ranges lands its pending bytes before q's
		// first burst can be due (deferChunk).
		if od := &o.x.data; od.pend > 0 && od.meets(&q.x.data) {
			w := n.s.Writer()
			_ = o.landPending(od.off + od.landed) // cannot fail: real bytes
			n.s.SetWriter(w)
		}
	}
	if n.lagging == nil {
		n.lagging = make([]*Queue, 0, firstListCap)
	}
	n.lagging = append(n.lagging, q)
	if n.catchUpFn == nil {
		n.catchUpFn = n.catchUp
	}
	n.mem.SetBeforeAccess(n.catchUpFn)
}

// unlag takes q off the list.
func (n *Node) unlag(q *Queue) {
	if !q.x.data.lagging {
		return
	}
	q.x.data.lagging = false
	for i, o := range n.lagging {
		if o == q {
			n.lagging = append(n.lagging[:i], n.lagging[i+1:]...)
			break
		}
	}
	if len(n.lagging) == 0 {
		n.mem.SetBeforeAccess(nil)
	}
}

// catchUp lands every copy's bursts due by now, before an access to
// memory (lsa.Space.SetBeforeAccess), in the order the copies started.
func (n *Node) catchUp() {
	now := n.s.Now()
	w := n.s.Writer() // the access's own writer, after the landings
	for _, q := range n.lagging {
		q.landDue(now)
	}
	n.s.SetWriter(w)
}
