package fabric

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// CFT counted writes and waits (NCCL 2.32.3, "Compute Fabric Transport
// (CFT) counted-write and wait support"; NVSHMEM's "Using Counted Writes"
// page describes the same operation: a write whose delivered payload
// bytes are added to a 64-bit counter at the destination, contributions of
// many writes accumulating on one counter, waited for by byte count).

// CountedAlign is the alignment of a counted window's buffer and of every
// counter in it.
const CountedAlign = 256

// countKey names one counter: the rank holding it and its big-VA offset.
type countKey struct {
	rank int
	off  uint64
}

// checkCountedWindow refuses a WinCftCounted window the emulator cannot
// take. Buffers are page aligned here, so the 256-byte alignment a counted
// window needs is checked on its size.
func checkCountedWindow(rank int, bytes uint64, flags WinFlags) error {
	const call = "ncclCommWindowRegister"
	if flags&WinCftCounted == 0 {
		return nil
	}
	if flags&WinCollSymmetric == 0 {
		return errf(InvalidArgument, call, "rank %d: NCCL_WIN_CFT_COUNTED without NCCL_WIN_COLL_SYMMETRIC: counted windows are CFT windows, bound to the LEs", rank)
	}
	if bytes%CountedAlign != 0 {
		return errf(InvalidArgument, call, "rank %d: a counted window of %d B: NCCL_WIN_CFT_COUNTED needs a 256-byte aligned buffer (%d B is not a multiple of 256)", rank, bytes, bytes)
	}
	return nil
}

// checkCounter validates a counted write's counter on every destination
// and records the bytes it will add.
func (sys *System) checkCounter(o *fop, off uint64) error {
	if off%CountedAlign != 0 {
		return fmt.Errorf("counter offset %#x is not 256-byte aligned: a counted write's counter is 8 bytes at a 256-byte aligned offset", off)
	}
	if off < o.leOff+o.bytes && o.leOff < off+8 {
		return fmt.Errorf("counter [%#x, %#x) overlaps the data [%#x, %#x): the counter must not be written by its own data", off, off+8, o.leOff, o.leOff+o.bytes)
	}
	for _, d := range o.dsts() {
		if !sys.inCounted(d, off) {
			return fmt.Errorf("counter [%#x, %#x) on rank %d is not inside a window registered with NCCL_WIN_CFT_COUNTED", off, off+8, d)
		}
		if sys.ranks[d].bytes(off, 8) == nil {
			return fmt.Errorf("counter at %#x on rank %d is in a phantom window, which holds no bytes to count in", off, d)
		}
	}
	if sys.counting == nil {
		sys.counting, sys.countedStatus = map[countKey]uint64{}, map[countKey]WaitStatus{}
	}
	for _, d := range o.dsts() {
		sys.counting[countKey{d, off}] += o.bytes
	}
	return nil
}

func (sys *System) inCounted(rank int, off uint64) bool {
	for _, s := range sys.ranks[rank].counted {
		if off >= s.off && off+8 <= s.off+s.n {
			return true
		}
	}
	return false
}

func (sys *System) loadCounter(rank int, off uint64) uint64 {
	return binary.LittleEndian.Uint64(sys.ranks[rank].bytes(off, 8))
}

// countDelivered adds n delivered bytes of o to its counter on rank d, as
// one system-scope atomic: the detector sees an atomic write that releases
// the delivery (and everything the op did before it).
func (sys *System) countDelivered(o *fop, d int, n uint64) {
	b := sys.ranks[d].bytes(o.counterOff, 8)
	binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)+n)
	k := countKey{d, o.counterOff}
	sys.counting[k] -= min(n, sys.counting[k])
	if o.race != nil {
		dt := sys.s.Race()
		sp := sys.rankSpace(dt, d)
		dt.Access(o.race.t, sp, o.counterOff, o.counterOff+8, race.Access{Info: &race.Info{Kind: race.KindFabric, OpKind: race.OpFabric, Who: o.race.write.Who, Op: o.call() + " counter add"}, Write: true, Atomic: true, Proxy: race.ProxyFabric})
		// The counter reaching a value orders the delivered bytes for the
		// waiter's proxy too: the add releases them across the proxies.
		o.race.t.FenceRelease(race.ProxyFabric, race.ProxyGeneric)
		o.race.t.FenceRelease(race.ProxyFabric, race.ProxyFabric)
		o.race.t.Release(dt.AddrSync(sp, o.counterOff))
	}
	sys.ranks[d].wl.Notify(o.counterOff, o.counterOff+8)
}

// PutCounted is ncclCft::putCounted: Put, and as each part of the data is
// delivered its byte count is added to the 8-byte counter at counterOff on
// the destination (an LE offset, as leOff, inside a counted window,
// 256-byte aligned, not overlapping the data). There is no cpMask form.
func (c *Cft) PutCounted(op kernel.Group, le CftLeId, leOff, counterOff uint64, smemSrc int, bytes uint32) {
	c.issueCounted(op, opPut, le, leOff, counterOff, smemSrc, bytes)
}

// PutMultimemCounted is ncclCft::putMultimemCounted: PutMultimem, each
// member's counter counting only the bytes delivered to that member.
func (c *Cft) PutMultimemCounted(op kernel.Group, le CftLeId, leOff, counterOff uint64, smemSrc int, bytes uint32) {
	c.issueCounted(op, opPutMC, le, leOff, counterOff, smemSrc, bytes)
}

func (c *Cft) issueCounted(op kernel.Group, kind opKind, le CftLeId, leOff, counterOff uint64, smem int, bytes uint32) {
	if op.Thread() != c.t {
		c.t.Fail("ncclCft::"+opNames[kind]+"Counted", fmt.Errorf("OpCoop belongs to %v, not to this ncclCft's thread", op.Thread()))
	}
	if op.Scope() == kernel.ScopeBlock {
		op.Sync()
	}
	c.a = opArgs{c: c, op: op, kind: kind, le: le, leOff: leOff, smem: smem, bytes: uint64(bytes), mask: FullMask, counted: true, counterOff: counterOff}
	kernel.Converge(c.t, issueCall, &c.a)
}

// countedArgs is one lane's waitCounted.
type countedArgs struct {
	sys      *System
	coop     kernel.Group
	rank     int
	off      uint64
	expected uint64
	timeout  sim.Time
	st       WaitStatus
}

// WaitCounted is waitCounted(coop, order, proxy, localCounter, expected,
// abortFlag): coop's thread 0 waits until its rank's counter at off of the
// local counted window w holds at least expected bytes (a plain compare:
// 64-bit byte counts do not wrap in practice), or until the rank's abort
// flag is set (System.SetAbortFlag; NCCL passes the flag as an argument,
// here it is the comm's). With an acquire order (acquire, acq_rel,
// seq_cst) the counter reaching expected orders the delivered bytes before
// the threads of coop, for the proxy given (ProxyGeneric for loads); a
// relaxed wait orders nothing, and reading the data after it is a race.
func WaitCounted(coop kernel.Group, dc DevComm, order MemoryOrder, proxy ProxyType, w Window, off, expected uint64) WaitStatus {
	return waitCounted(coop, dc, order, proxy, w, off, expected, -1)
}

// WaitCountedTimeout is WaitCounted whose thread 0 gives up after
// timeoutCycles SM cycles (Model.ClockGHz) with WaitTimedOut.
func WaitCountedTimeout(coop kernel.Group, dc DevComm, order MemoryOrder, proxy ProxyType, w Window, off, expected, timeoutCycles uint64) WaitStatus {
	d := sim.Time(0)
	if dc.st != nil {
		d = dc.st.sys.model.cycles(timeoutCycles)
	}
	return waitCounted(coop, dc, order, proxy, w, off, expected, d)
}

func waitCounted(coop kernel.Group, dc DevComm, order MemoryOrder, proxy ProxyType, w Window, off, expected uint64, timeout sim.Time) WaitStatus {
	const call = "waitCounted"
	t := coop.Thread()
	if dc.st == nil {
		t.Fail(call, fmt.Errorf("the dev comm was not made by DevCommCreate"))
	}
	sys := dc.st.sys
	switch {
	case order < Relaxed || order > SeqCst || order == Release:
		t.Fail(call, fmt.Errorf("order %v: a wait takes relaxed, acquire, acq_rel or seq_cst", order))
	case proxy != ProxyGeneric && proxy != ProxyFabric:
		t.Fail(call, fmt.Errorf("proxy %v is not Generic or Fabric", proxy))
	case w.sys != sys || w.WorldRank != dc.Rank:
		t.Fail(call, fmt.Errorf("the counter's window is not rank %d's own: waitCounted polls a local counter", dc.Rank))
	case w.Flags&WinCftCounted == 0:
		t.Fail(call, fmt.Errorf("the counter's window was not registered with NCCL_WIN_CFT_COUNTED"))
	case off%CountedAlign != 0 || off+8 > w.Bytes:
		t.Fail(call, fmt.Errorf("counter offset %#x: a counter is 8 bytes at a 256-byte aligned offset inside the window's %d B", off, w.Bytes))
	}
	if sys.countedStatus == nil {
		sys.counting, sys.countedStatus = map[countKey]uint64{}, map[countKey]WaitStatus{}
	}
	coop.Sync()
	a := &countedArgs{sys: sys, coop: coop, rank: dc.Rank, off: w.bigOffset() + off, expected: expected, timeout: timeout}
	kernel.Converge(t, countedWaitCall, a)
	coop.Sync()
	// Thread 0 waited; the coop's threads return its status.
	st := sys.countedStatus[countKey{dc.Rank, a.off}]
	if coop.Scope() == kernel.ScopeThread {
		st = a.st
	}
	if hasAcquire(order) {
		if d := sys.s.Race(); d != nil {
			if rt := t.RaceThread(); rt != nil {
				sp := sys.rankSpace(d, dc.Rank)
				d.Access(rt, sp, a.off, a.off+8, race.Access{Info: t.RaceInfo("waitCounted counter read", 3), Atomic: true})
				rt.Acquire(d.AddrSync(sp, a.off))
			}
		}
		MemFence(coop, dc, AcquireOrderOf(order), ProxyFabric, proxy, FenceScopeSys)
	}
	return st
}

var countedWaitCall = &kernel.Call[*countedArgs]{Name: "waitCounted", Run: func(g *kernel.Active, args []*countedArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		if a.coop.ThreadRank() != 0 {
			continue
		}
		sys := a.sys
		k := countKey{a.rank, a.off}
		w := sim.Wait{List: sys.ranks[a.rank].wl, Lo: a.off, Hi: a.off + 8,
			Pred: func() bool { return sys.loadCounter(a.rank, a.off) >= a.expected },
			Text: func() string {
				v, fly := sys.loadCounter(a.rank, a.off), sys.counting[k]
				why := "the counted writes in flight will bring it there"
				if v+fly < a.expected {
					why = fmt.Sprintf("even with them it reaches only %d: the producers deliver fewer bytes than the wait expects (the expected count must be the sum of every producer's bytes of this epoch), or the counter was not reset between epochs", v+fly)
				}
				return fmt.Sprintf("%v in waitCounted: rank %d's counter at %#x to reach %d bytes; it holds %d, and %d bytes of counted writes to it are issued but not delivered; %s", t, a.rank, a.off, a.expected, v, fly, why)
			}}
		sys.countedEnter(g, func() string {
			v, fly := sys.loadCounter(a.rank, a.off), sys.counting[k]
			if v+fly < a.expected {
				return fmt.Sprintf("in waitCounted for its counter at %#x to reach %d bytes; it holds %d and the counted writes in flight add %d: the producers deliver fewer bytes than the wait expects (the expected count must be the sum of every producer's bytes of this epoch), or the counter was not reset between epochs", a.off, a.expected, v, fly)
			}
			return fmt.Sprintf("in waitCounted for its counter at %#x to reach %d bytes; it holds %d and %d bytes of counted writes to it are in flight", a.off, a.expected, v, fly)
		})
		a.st = sys.awaitAbortable(g.Actor(), a.rank, w, a.timeout)
		delete(sys.countedWaits, g.Wave())
		sys.countedStatus[k] = a.st
	}
	return nil
}}

// CauseCountedWaits is the hang cause of a waitCounted whose counter will
// not reach its expected byte count.
const CauseCountedWaits sim.CauseKind = "cft-counted"

type countedWait struct {
	rank, block, wave int
	text              func() string
}

// countedEnter records what g's wave waits for, for the hang report.
func (sys *System) countedEnter(g *kernel.Active, text func() string) {
	if sys.countedWaits == nil {
		sys.countedWaits = map[*kernel.Wave]*countedWait{}
		sys.s.AddDiagnoser(sim.LayerAPI, "counted", sys.countedDiagnose)
	}
	t := g.Lanes()[0]
	sys.countedWaits[g.Wave()] = &countedWait{rank: t.GPU(), block: t.BlockIdx(), wave: t.WaveIdx(), text: text}
}

func (sys *System) countedDiagnose() sim.Diagnosis {
	ws := make([]*countedWait, 0, len(sys.countedWaits))
	for _, w := range sys.countedWaits {
		ws = append(ws, w)
	}
	slices.SortFunc(ws, func(a, b *countedWait) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.block, b.block), cmp.Compare(a.wave, b.wave))
	})
	var out sim.Diagnosis
	for _, w := range ws {
		out.Causes = append(out.Causes, sim.Cause{Kind: CauseCountedWaits, Layer: sim.LayerAPI, Ranks: []int{w.rank}, Text: w.text()})
	}
	return out
}
