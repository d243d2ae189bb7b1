package engine

// Data movement of a COPY in progress (see the timing notes in timing.go).
// A chunk's bytes move when the chunk has crossed its path: its source is
// read then and its destination written then, chunk after chunk in address
// order. A broadcast reads each source chunk once, when its first stream
// lands, and writes the same bytes to the second destination when that
// stream lands. Overlapping source and destination (undefined on hardware)
// move all at once when the COPY completes, with memmove semantics, so that
// the result does not depend on the chunk size.

// xferData is what a COPY in progress moves.
type xferData struct {
	src     uint64
	dst     []uint64 // one per destination (a multicast has up to 1024)
	off     uint64   // bytes landed at every destination so far
	overlap bool     // move everything at completion instead
	buf     []byte   // broadcast: the source chunk read for the first stream
	have    bool     // buf holds the chunk (false when the source is phantom)
}

// setXferData records the head COPY's addresses before its first chunk
// goes out.
func (q *Queue) setXferData(src uint64, dsts ...uint64) {
	d := &q.x.data
	d.src, d.off, d.have = src, 0, false
	d.dst = append(d.dst[:0], dsts...)
	n := q.head.CopyBytes()
	d.overlap = false
	for _, dst := range dsts {
		if src < dst+n && dst < src+n {
			d.overlap = true
		}
	}
}

// landChunk moves the bytes of the chunk that has just crossed to
// destination x.cur. It reports false if the queue halted.
func (q *Queue) landChunk() bool {
	x := &q.x
	d := &x.data
	if d.overlap || x.chunk == 0 {
		return true
	}
	mem := q.n.mem
	q.n.s.SetWriter(q.who)
	n := x.chunk
	src, dst := d.src+d.off, d.dst[x.cur]+d.off
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
			if d.have {
				d.buf = append(d.buf[:0], sb...)
				err = mem.Write(dst, d.buf)
			} else {
				mem.Notify(dst, n)
			}
		}
	default:
		q.raceAccess(dst2Write, dst, n, true, false)
		if d.have {
			err = mem.Write(dst, d.buf)
		} else {
			mem.Notify(dst, n)
		}
	}
	if err != nil {
		q.halt(FaultVMHole, dst, err.Error())
		return false
	}
	q.c.bytes.Add(float64(n))
	return true
}
