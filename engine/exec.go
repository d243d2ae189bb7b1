package engine

import (
	"encoding/binary"
	"fmt"

	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// prepare checks the head packet's operands before any time passes (the
// engine faults when it touches memory, which is at the start) and starts a
// COPY's data movement. It returns false if the queue halted. A POLL that
// does not hold parks the queue here.
func (q *Queue) prepare() bool {
	p := &q.head
	mem := q.n.mem
	q.poster = q.be.Poster(q.pos, q.pos+uint64(q.headLen))
	if q.n.s.Race() != nil {
		q.raceStart()
	}
	check := func(op string, addr, n uint64) bool {
		if err := mem.Check(op, addr, n); err != nil {
			q.halt(FaultVMHole, addr, err.Error())
			return false
		}
		return true
	}
	aligned := func(what string, addr, to uint64) bool {
		if addr%to != 0 {
			q.halt(FaultMisaligned, addr, fmt.Sprintf("%s address %#x is not %d-byte aligned", what, addr, to))
			return false
		}
		return true
	}
	switch p.Kind {
	case ring.KindNop:
		return true
	case ring.KindCopy:
		n := p.CopyBytes()
		if !check("copy source read", p.Src, n) || !check("copy destination write", p.Dst, n) {
			return false
		}
		if q.n.inj != nil && q.n.inj.stall(q, n) {
			q.x.active = true // never finishes: the engine stays held (inject.go)
			return true
		}
		q.setXferData(p.Src, p.Dst)
		q.startXfer(n, mem.HomeOf(p.Src), q.dsts(p.Dst))
		return true
	case ring.KindBroadcastCopy:
		n := p.CopyBytes()
		if !check("copy source read", p.Src, n) || !check("broadcast destination 1 write", p.Dst, n) ||
			!check("broadcast destination 2 write", broadcastDst2(p), n) {
			return false
		}
		if q.n.inj != nil && q.n.inj.stall(q, n) {
			q.x.active = true
			return true
		}
		q.setXferData(p.Src, p.Dst, broadcastDst2(p))
		q.startXfer(n, mem.HomeOf(p.Src), q.dsts(p.Dst, p.Dst2))
		return true
	case ring.KindAtomic:
		w := uint64(p.AtomicOp.Width())
		if _, ok := atomicFn(p.AtomicOp); !ok {
			q.halt(FaultIllegal, p.Addr, fmt.Sprintf("atomic op %v is not emulated", p.AtomicOp))
			return false
		}
		return aligned("atomic", p.Addr, w) && check("atomic", p.Addr, w)
	case ring.KindFence:
		return aligned("fence", p.Addr, 4) && check("fence write", p.Addr, 4)
	case ring.KindTrap:
		return true
	case ring.KindTimestamp:
		if p.SubOp == ring.TimestampSet {
			q.halt(FaultIllegal, 0, "TIMESTAMP set (sub_op 0) is not emulated")
			return false
		}
		return check("timestamp write", p.Addr, 8)
	case ring.KindWrite:
		return aligned("write", p.Dst, 4) && check("write", p.Dst, 4*uint64(len(p.Payload)))
	case ring.KindConstFill:
		n, ok := constFillBytes(p)
		if !ok {
			q.halt(FaultIllegal, p.Dst, "CONST_FILL: only dword fills (fillsize 2) are emulated")
			return false
		}
		return aligned("const fill", p.Dst, 4) && check("const fill", p.Dst, n)
	case ring.KindPoll:
		return q.startPoll()
	case ring.KindCopyWaitSignal, ring.KindMulticast, ring.KindSwap:
		return q.prepareFused()
	}
	q.halt(FaultIllegal, 0, fmt.Sprintf("%v is not emulated", p.Kind))
	return false
}

// dsts maps destination addresses to GPUs in a per-queue scratch array, so
// the per-packet path does not allocate.
func (q *Queue) dsts(addrs ...uint64) []int {
	d := q.dstBuf[:0]
	if d == nil {
		d = q.dstArr[:0] // a copy's or a broadcast's: no allocation per queue
	}
	for _, a := range addrs {
		d = append(d, q.n.mem.HomeOf(a))
	}
	q.dstBuf = d
	return d
}

// broadcastDst2 is where the second stream of a broadcast really lands:
// [inferred] (dst2 &^ 31) + (dst1 & 31), which is dst2 when the two are
// congruent mod 32.
func broadcastDst2(p *ring.Packet) uint64 { return p.Dst2&^31 | p.Dst&31 }

func constFillBytes(p *ring.Packet) (uint64, bool) {
	if p.Header>>30 != 2 {
		return 0, false
	}
	return uint64(p.Count) + 1, true
}

// apply performs the head packet's effect. Operands were checked by
// prepare, so errors here mean memory changed shape, which it cannot; they
// still halt rather than panic.
func (q *Queue) apply() bool {
	p := &q.head
	mem := q.n.mem
	q.n.s.SetWriter(q)
	var err error
	switch p.Kind {
	case ring.KindCopy, ring.KindBroadcastCopy:
		// The chunks moved as they crossed (data.go); an overlapping copy
		// moves now.
		if d := &q.x.data; d.overlap {
			n := p.CopyBytes()
			for i, dst := range d.dst[:q.x.nd] {
				q.raceAccess(copyRead, p.Src, n, false, false)
				if _, err = mem.Move(dst, p.Src, n); err != nil {
					break
				}
				q.raceAccess(dstWrite(i), dst, n, true, false)
				q.c.bytes.Add(n)
			}
			if err == nil {
				q.event(FaultCopyOverlap, p.Dst, 0, fmt.Sprintf("source [%#x, +%d) and destination [%#x, +%d) overlap; hardware leaves the result undefined, emud copies as memmove", p.Src, n, p.Dst, n))
			}
		}
	case ring.KindCopyWaitSignal, ring.KindMulticast, ring.KindSwap:
		return q.applyFused()
	case ring.KindAtomic:
		if q.n.inj == nil || !q.n.inj.dropAtomic(q) {
			q.raceSignal()
			q.raceAccess(copyWrite, p.Addr, uint64(p.AtomicOp.Width()), true, true)
			old := q.raceOld(p.Addr, p.AtomicOp.Width())
			err = q.atomic(p)
			q.raceSignalled(p.Addr, p.AtomicOp.Width(), old, atomicDelta(p.AtomicOp, p.Data))
			q.raceRelease(p.Addr)
		}
	case ring.KindFence:
		q.raceAccess(copyWrite, p.Addr, 4, true, true)
		err = mem.Store32(p.Addr, uint32(p.Data))
		q.raceRelease(p.Addr)
	case ring.KindTrap:
		q.event(FaultTrap, 0, p.Context, fmt.Sprintf("TRAP int_context %#x", p.Context))
	case ring.KindTimestamp:
		period := uint64(sim.Second) / q.n.cfg.TimestampHz
		err = mem.Store64(p.Addr, uint64(q.n.s.Now())/max(period, 1))
		q.raceAccess(copyWrite, p.Addr, 8, true, false)
	case ring.KindWrite:
		buf := make([]byte, 4*len(p.Payload))
		for i, d := range p.Payload {
			binary.LittleEndian.PutUint32(buf[4*i:], d)
		}
		err = mem.Write(p.Dst, buf)
		q.raceAccess(copyWrite, p.Dst, uint64(len(buf)), true, false)
	case ring.KindConstFill:
		n, _ := constFillBytes(p)
		buf := make([]byte, n)
		for i := uint64(0); i+4 <= n; i += 4 {
			binary.LittleEndian.PutUint32(buf[i:], uint32(p.Data))
		}
		err = mem.Write(p.Dst, buf)
		q.raceAccess(copyWrite, p.Dst, n, true, false)
	}
	if err != nil {
		q.halt(FaultVMHole, 0, err.Error())
		return false
	}
	return true
}

// rmw computes an atomic's new value from (old, src, cmp) at a width of
// bits (for the signed compares).
type rmw func(old, src, cmp uint64, bits int) uint64

func signed(v uint64, bits int) int64 {
	if bits == 32 {
		return int64(int32(v))
	}
	return int64(v)
}

// atomicOps maps bits 4:0 of the TC_OP code to the integer operation; the
// float operations are absent (not emulated). A table, not a switch of
// closures, because every signal is an ATOMIC.
var atomicOps = [32]rmw{
	0x07: func(_, src, _ uint64, _ int) uint64 { return src }, // SWAP
	0x08: func(old, src, cmp uint64, _ int) uint64 { // CMPSWAP
		if old == cmp {
			return src
		}
		return old
	},
	0x0f: func(old, src, _ uint64, _ int) uint64 { return old + src }, // ADD
	0x10: func(old, src, _ uint64, _ int) uint64 { return old - src }, // SUB
	0x11: func(old, src, _ uint64, b int) uint64 { // SMIN
		if signed(src, b) < signed(old, b) {
			return src
		}
		return old
	},
	0x12: func(old, src, _ uint64, _ int) uint64 { return min(old, src) }, // UMIN
	0x13: func(old, src, _ uint64, b int) uint64 { // SMAX
		if signed(src, b) > signed(old, b) {
			return src
		}
		return old
	},
	0x14: func(old, src, _ uint64, _ int) uint64 { return max(old, src) }, // UMAX
	0x15: func(old, src, _ uint64, _ int) uint64 { return old & src },     // AND
	0x16: func(old, src, _ uint64, _ int) uint64 { return old | src },     // OR
	0x17: func(old, src, _ uint64, _ int) uint64 { return old ^ src },     // XOR
	0x18: func(old, src, _ uint64, _ int) uint64 { // INC
		if old >= src {
			return 0
		}
		return old + 1
	},
	0x19: func(old, src, _ uint64, _ int) uint64 { // DEC
		if old == 0 || old > src {
			return src
		}
		return old - 1
	},
}

// atomicFn returns the operation of op, if emulated.
func atomicFn(op ring.AtomicOp) (rmw, bool) {
	if !op.Valid() {
		return nil, false
	}
	f := atomicOps[op&0x1f]
	return f, f != nil
}

func (q *Queue) atomic(p *ring.Packet) error {
	fn, _ := atomicFn(p.AtomicOp)
	w := p.AtomicOp.Width()
	src, cmp := p.Data, p.Cmp
	if w == 4 {
		src, cmp = src&0xffffffff, cmp&0xffffffff
	}
	_, err := q.n.mem.Atomic(p.Addr, w, func(old uint64) uint64 { return fn(old, src, cmp, 8*w) })
	return err
}

// ---- POLL_REGMEM ----

type pollState struct {
	start, deadline sim.Time
	interval        sim.Time
	finite          bool
	watch           sim.WatchHandle
	timer           sim.Timer
	reads           uint64
}

func (q *Queue) pollHolds() bool {
	if q.head.Kind != ring.KindPoll {
		return q.waitHolds()
	}
	v, err := q.n.mem.Load32(q.head.Addr)
	if err != nil {
		return false
	}
	return q.head.Func.Eval(v&q.head.Mask, q.head.Ref)
}

// startPoll reads the polled word once. If the condition holds, the packet
// completes like any other; if not, the queue parks on a subscription to
// the word, re-reading only at poll-interval ticks.
func (q *Queue) startPoll() bool {
	p := &q.head
	if !p.MemPoll {
		q.halt(FaultIllegal, 0, "POLL_REGMEM on a register (mem_poll = 0) is not emulated")
		return false
	}
	if p.Addr%4 != 0 {
		q.halt(FaultMisaligned, p.Addr, fmt.Sprintf("poll address %#x is not 4-byte aligned", p.Addr))
		return false
	}
	if err := q.n.mem.Check("poll read", p.Addr, 4); err != nil {
		q.halt(FaultVMHole, p.Addr, err.Error())
		return false
	}
	now := q.n.s.Now()
	q.poll = pollState{start: now, interval: q.n.model.Cost(model.PollInterval(p.Interval)), reads: 1}
	if ph := q.n.s.Perturb().Phase(q.poll.interval); ph > 0 {
		// The engine's re-read timer is not in step with the packet's start:
		// its ticks fall at now + ph + k·interval.
		q.poll.start = now + ph - q.poll.interval
	}
	if q.pollHolds() {
		q.raceAcquire(p.Addr)
		return true
	}
	q.state = qParked
	q.c.pollWaits.Inc()
	q.n.s.Trace(q.n.tk.park, q.subj, q.pos, p.Addr, uint64(p.Ref))
	if p.Retry != ring.RetryForever {
		// retry_count + 1 failed reads, at start + k·interval, k = 0..retry.
		q.poll.finite = true
		q.poll.deadline = now + sim.Time(p.Retry)*q.poll.interval
		q.poll.timer = q.n.s.At(q.poll.deadline, q.pollTimeout)
	}
	q.pollWatch()
	return true
}

func (q *Queue) pollWatch() {
	a, n := q.head.Addr, uint64(4)
	if q.head.Kind != ring.KindPoll {
		a, n = q.head.Wait.Addr, 8 // a fused packet's 64-bit wait
	}
	q.n.mem.Log().Track(a, int(n)) // its writes from now on, for the hang report
	q.poll.watch = q.n.mem.Watch().Watch(a, a+n, q.pollHolds, q.pollSample)
}

// pollSample runs after a write made the condition true: the engine sees it
// at its next read tick, if it still holds then.
func (q *Queue) pollSample() {
	if q.state != qParked {
		return
	}
	now, st := q.n.s.Now(), &q.poll
	if st.interval > 0 {
		k := (now - st.start + st.interval - 1) / st.interval
		if tick := st.start + k*st.interval; tick > now {
			q.n.s.At(tick, q.pollRead)
			return
		}
	}
	q.pollRead()
}

func (q *Queue) pollRead() {
	if q.state != qParked {
		return
	}
	st := &q.poll
	st.reads++
	if st.finite && q.n.s.Now() > st.deadline {
		return // the timeout event is handling it
	}
	if !q.pollHolds() {
		q.pollWatch()
		return
	}
	st.timer.Stop()
	q.raceAcquire(q.pollAddr())
	q.pollOver() // the gap after it is the model's PacketGap(POLL)
}

func (q *Queue) pollTimeout() {
	if q.state != qParked {
		return
	}
	q.poll.watch.Cancel()
	v, _ := q.n.mem.Load32(q.head.Addr)
	q.event(FaultPollTimeout, q.head.Addr, 0, fmt.Sprintf(
		"Polling register/memory timeout executing POLL_REG/MEM with finite timer: mem[%#x] & %#x %v %#x failed %d reads (value %#x)",
		q.head.Addr, q.head.Mask, q.head.Func, q.head.Ref, uint64(q.head.Retry)+1, v))
	if q.n.cfg.PollTimeout == PollTimeoutHalt {
		q.halt(FaultPollTimeout, q.head.Addr, "halted after POLL_TIMEOUT (PollTimeoutHalt)")
		return
	}
	q.pollOver()
}
