package engine

import (
	"fmt"

	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
)

// The packets that carry their own wait and signal (COPY_LINEAR_WAIT_SIGNAL,
// gfx950/gfx1250), the multicast copy and the swap (ring/fused.go has the
// layouts and their sources). One packet runs in three phases on its
// engine, in order:
//
//  1. wait (if the wait bit is set): the engine reads mem64[wait addr] &
//     mask and compares it with the 64-bit reference. While it does not
//     hold the queue parks, exactly as a POLL_REGMEM parks: woken by a
//     write to the word, re-read at the poll interval ticks (ROCr's
//     interval 4 [inferred]: the packet has no interval field), never
//     timing out (the packet has no retry count). Holding acquires the
//     word (race detector), as POLL does.
//  2. copy: the data moves as a COPY's does (timing.go, data.go). A
//     multicast reads each chunk once and writes it to its N destinations
//     one stream after the other, each at the broadcast stream rate, like
//     the two-destination broadcast; destination i > 0 lands at
//     (dst_i &^ 31) | (dst_0 & 31) [inferred: the broadcast's congruence
//     rule, ROCr SDMA_PKT_COPY_LINEAR_BROADCAST::kDstAlignMask_ = 0x1F; no
//     public source states a rule for multicast]. With an indirect bit
//     (gfx1250) the address field holds the address of a 64-bit pointer,
//     read when the copy starts. A swap exchanges its two ranges when its
//     data has crossed (both ranges' chunks cross the path, 2× the bytes).
//  3. signal (if the signal bit is set): a 64-bit atomic of the signal
//     operation on the signal address after the last byte landed, an
//     atomic write and a release (race detector), as an ATOMIC packet is.
//
// The whole packet is one packet to the engine: one fetch, one packet gap
// (model.PacketGap) after it (the model prices a fused packet like one
// COPY, which is what makes it cheaper than POLL + COPY + ATOMIC).

// pollAddr is the word the head packet's wait reads.
func (q *Queue) pollAddr() uint64 {
	if q.head.Kind != ring.KindPoll {
		return q.head.Wait.Addr
	}
	return q.head.Addr
}

// fusedPollInterval is the poll interval of a fused packet's wait.
const fusedPollInterval = 4

func (q *Queue) waitHolds() bool {
	w := &q.head.Wait
	v, err := q.n.mem.Load64(w.Addr)
	if err != nil {
		return false
	}
	return w.Func.Eval64(v&w.Mask, w.Ref)
}

// prepareFused starts the head fused packet: its wait, or its copy.
func (q *Queue) prepareFused() bool {
	p := &q.head
	if !p.HasWait {
		return q.startFused()
	}
	w := &p.Wait
	if w.Func > ring.CmpGT {
		q.halt(FaultIllegal, w.Addr, fmt.Sprintf("%v: reserved wait function %d", p.Kind, w.Func))
		return false
	}
	if err := q.n.mem.Check("wait read", w.Addr, 8); err != nil {
		q.halt(FaultVMHole, w.Addr, err.Error())
		return false
	}
	now := q.n.s.Now()
	q.poll = pollState{start: now, interval: q.n.model.Cost(model.PollInterval(fusedPollInterval)), reads: 1}
	if q.waitHolds() {
		q.raceAcquire(w.Addr)
		return q.startFused()
	}
	q.state = qParked
	q.c.pollWaits.Inc()
	q.n.s.Trace(q.n.tk.park, q.subj, q.pos, w.Addr, w.Ref)
	q.pollWatch()
	return true
}

// startFused checks the copy's operands and starts its data movement.
func (q *Queue) startFused() bool {
	p := &q.head
	mem := q.n.mem
	n := p.CopyBytes()
	if p.IndirectSrc || p.IndirectDst {
		for _, at := range []struct {
			on   bool
			addr *uint64
			what string
		}{{p.IndirectSrc, &p.Src, "indirect source pointer"}, {p.IndirectDst, &p.Dst, "indirect destination pointer"}} {
			if !at.on {
				continue
			}
			v, err := mem.Load64(*at.addr)
			if err != nil {
				q.halt(FaultVMHole, *at.addr, at.what+": "+err.Error())
				return false
			}
			*at.addr = v
		}
		p.IndirectSrc, p.IndirectDst = false, false // resolved: the report shows the addresses used
	}
	if p.HasSignal {
		op := p.Signal.Op
		if _, ok := atomicFn(op); !ok || op.Width() != 8 {
			q.halt(FaultIllegal, p.Signal.Addr, fmt.Sprintf("%v: signal operation %v is not a 64-bit atomic emud emulates", p.Kind, op))
			return false
		}
		if err := mem.Check("signal", p.Signal.Addr, 8); err != nil {
			q.halt(FaultVMHole, p.Signal.Addr, err.Error())
			return false
		}
	}
	check := func(op string, addr uint64) bool {
		if err := mem.Check(op, addr, n); err != nil {
			q.halt(FaultVMHole, addr, err.Error())
			return false
		}
		return true
	}
	switch p.Kind {
	case ring.KindSwap:
		if !check("swap A", p.Src) || !check("swap B", p.Dst) {
			return false
		}
		if p.Src < p.Dst+n && p.Dst < p.Src+n {
			q.halt(FaultIllegal, p.Dst, fmt.Sprintf("COPY_LINEAR_SWAP: ranges [%#x, +%d) and [%#x, +%d) overlap", p.Src, n, p.Dst, n))
			return false
		}
		q.setXferData(p.Src, p.Dst)
		q.x.data.overlap = true // the exchange happens at completion (applyFused)
		q.startXfer(n, mem.HomeOf(p.Src), q.dsts(p.Dst, p.Src))
		return true
	case ring.KindMulticast:
		if !check("copy source read", p.Src) {
			return false
		}
		for i := range p.Dsts {
			if i > 0 {
				p.Dsts[i] = p.Dsts[i]&^31 | p.Dsts[0]&31
			}
			if !check(fmt.Sprintf("multicast destination %d write", i+1), p.Dsts[i]) {
				return false
			}
		}
		q.setXferData(p.Src, p.Dsts...)
		q.startXfer(n, mem.HomeOf(p.Src), q.dsts(p.Dsts...))
		return true
	}
	if !check("copy source read", p.Src) || !check("copy destination write", p.Dst) {
		return false
	}
	q.setXferData(p.Src, p.Dst)
	q.startXfer(n, mem.HomeOf(p.Src), q.dsts(p.Dst))
	return true
}

// applyFused completes the head fused packet after its data moved: an
// overlapping copy or a swap moves now, then the signal.
func (q *Queue) applyFused() bool {
	p := &q.head
	mem := q.n.mem
	n := p.CopyBytes()
	var err error
	switch {
	case p.Kind == ring.KindSwap:
		a, b := make([]byte, n), make([]byte, n)
		q.raceAccess(copyRead, p.Src, n, false, false)
		q.raceAccess(copyRead, p.Dst, n, false, false)
		if err = mem.Read(p.Src, a); err == nil {
			if err = mem.Read(p.Dst, b); err == nil {
				if err = mem.Write(p.Src, b); err == nil {
					err = mem.Write(p.Dst, a)
				}
			}
		}
		q.raceAccess(copyWrite, p.Src, n, true, false)
		q.raceAccess(dst2Write, p.Dst, n, true, false)
		q.c.bytes.Add(2 * n)
	case q.x.data.overlap:
		for i, dst := range q.x.data.dst {
			q.raceAccess(copyRead, p.Src, n, false, false)
			if _, err = mem.Move(dst, p.Src, n); err != nil {
				break
			}
			q.raceAccess(dstWrite(min(i, 1)), dst, n, true, false)
			q.c.bytes.Add(n)
		}
		if err == nil {
			q.event(FaultCopyOverlap, p.Dst, 0, fmt.Sprintf("source [%#x, +%d) and a destination overlap; hardware leaves the result undefined, emud copies as memmove", p.Src, n))
		}
	}
	if err == nil && p.HasSignal && (q.n.inj == nil || !q.n.inj.dropAtomic(q)) {
		s := &p.Signal
		q.raceSignal()
		q.raceAccess(copyWrite, s.Addr, 8, true, true)
		fn, _ := atomicFn(s.Op)
		old := q.raceOld(s.Addr, 8)
		_, err = mem.Atomic(s.Addr, 8, func(old uint64) uint64 { return fn(old, s.Data, 0, 64) })
		q.raceSignalled(s.Addr, 8, old, atomicDelta(s.Op, s.Data))
		q.raceRelease(s.Addr)
	}
	if err != nil {
		q.halt(FaultVMHole, 0, err.Error())
		return false
	}
	return true
}
