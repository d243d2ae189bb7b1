package fabric

import (
	"fmt"
	"strings"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// ncclGin's signals, counters and flush: the reads, waits and resets of
// a context's signal slots and counters, and the completion of its
// operations.

// ---- signals, counters, flush ----

// ReadSignal is ncclGin::readSignal: the bottom bits of the signal (an
// acquire load).
func (gi *Gin) ReadSignal(sig GinSignal, bits int) uint64 {
	gi.checkSignal("ncclGin::readSignal", sig, bits, 64)
	g := gi.g
	v := g.load(int(sig))
	g.sys.ginRaceReadSignal(gi.t, g, int(sig), v)
	g.sys.ginRaceAcquireSlot(gi.t, g, int(sig))
	if op := g.lastSig[sig]; v != 0 && op != nil {
		if g.baseRead == nil {
			g.baseRead = map[int]ginBaseRead{}
		}
		g.baseRead[int(sig)] = ginBaseRead{who: gi.t.String(), at: g.sys.s.Now(), v: v, op: op, opAt: g.lastSigAt[sig]}
	}
	if bits < 64 {
		v &= uint64(1)<<bits - 1
	}
	return v
}

func (gi *Gin) checkSignal(call string, sig GinSignal, bits, maxBits int) {
	if int(sig) >= gi.g.nSig {
		gi.t.Fail(call, fmt.Errorf("signal %d is not below the dev comm's ginSignalCount %d", sig, gi.g.nSig))
	}
	if bits < 1 || bits > maxBits {
		gi.t.Fail(call, fmt.Errorf("bits %d outside [1, %d]", bits, maxBits))
	}
}

// WaitSignal is ncclGin::waitSignal: every thread of op waits until the
// bottom bits of the signal meet or exceed least by the rolling compare.
// It returns early if the host sets the abort flag (System.SetAbortFlag).
func (gi *Gin) WaitSignal(op kernel.Group, sig GinSignal, least uint64, bits int) {
	gi.checkSignal("ncclGin::waitSignal", sig, bits, 64)
	gi.call(op, ginWaitCall, ginArgs{kind: ginSignalOp, slot: int(sig), least: least, bits: bits, timeout: -1})
	op.Sync()
}

// WaitSignalTimeout is waitSignal with NCCL 2.31's device-side timeout:
// each thread gives up after timeoutCycles SM cycles (Model.ClockGHz) and
// returns WaitTimedOut, or WaitAborted once the abort flag is set; its
// status is its own.
func (gi *Gin) WaitSignalTimeout(op kernel.Group, sig GinSignal, least uint64, bits int, timeoutCycles uint64) WaitStatus {
	gi.checkSignal("ncclGin::waitSignal", sig, bits, 64)
	gi.call(op, ginWaitCall, ginArgs{kind: ginSignalOp, slot: int(sig), least: least, bits: bits, timeout: gi.g.sys.model.cycles(timeoutCycles)})
	st := gi.a.status
	op.Sync()
	return st
}

// ResetSignal is ncclGin::resetSignal: the signal becomes 0. It may not
// race with modifications of the signal (the race detector reports one
// that does).
func (gi *Gin) ResetSignal(sig GinSignal) {
	gi.checkSignal("ncclGin::resetSignal", sig, 64, 64)
	g := gi.g
	g.sys.ginRaceReset(gi.t, g, int(sig))
	g.store(int(sig), 0)
	g.mode[sig] = 0
	g.lastSig[sig] = nil
	delete(g.baseRead, int(sig))
	for k := range g.waited {
		if k.s == int(sig) {
			delete(g.waited, k) // a reset starts the slot's counts again
		}
	}
}

// ReadCounter is ncclGin::readCounter (bits ≤ 56).
func (gi *Gin) ReadCounter(c GinCounter, bits int) uint64 {
	gi.checkCounter("ncclGin::readCounter", c, bits)
	if t := gi.t.RaceThread(); t != nil {
		t.Acquire(&gi.g.ctrSync[c])
	}
	return gi.g.counter[c] & (uint64(1)<<bits - 1)
}

func (gi *Gin) checkCounter(call string, c GinCounter, bits int) {
	if int(c) >= len(gi.g.counter) {
		gi.t.Fail(call, fmt.Errorf("counter %d is not below the dev comm's ginCounterCount %d", c, len(gi.g.counter)))
	}
	if bits < 1 || bits > counterBits {
		gi.t.Fail(call, fmt.Errorf("bits %d outside [1, %d]: counters hold at most 56 bits", bits, counterBits))
	}
}

// WaitCounter is ncclGin::waitCounter.
func (gi *Gin) WaitCounter(op kernel.Group, c GinCounter, least uint64, bits int) {
	gi.checkCounter("ncclGin::waitCounter", c, bits)
	gi.call(op, ginWaitCall, ginArgs{kind: ginSignalOp, slot: int(c), least: least, bits: bits, ctr: true, timeout: -1})
	op.Sync()
}

// WaitCounterTimeout is waitCounter with a device-side timeout
// (WaitSignalTimeout).
func (gi *Gin) WaitCounterTimeout(op kernel.Group, c GinCounter, least uint64, bits int, timeoutCycles uint64) WaitStatus {
	gi.checkCounter("ncclGin::waitCounter", c, bits)
	gi.call(op, ginWaitCall, ginArgs{kind: ginSignalOp, slot: int(c), least: least, bits: bits, ctr: true, timeout: gi.g.sys.model.cycles(timeoutCycles)})
	st := gi.a.status
	op.Sync()
	return st
}

// ResetCounter is ncclGin::resetCounter.
func (gi *Gin) ResetCounter(c GinCounter) {
	gi.checkCounter("ncclGin::resetCounter", c, counterBits)
	gi.g.counter[c] = 0
}

var ginWaitCall = &kernel.Call[*ginArgs]{Name: "ncclGin::waitSignal", Run: func(g *kernel.Active, args []*ginArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		gr := a.gin.g
		sys := gr.sys
		if a.ctr {
			c := a.slot
			w := sim.Wait{List: gr.cwl, Lo: uint64(c), Hi: uint64(c) + 1,
				Pred: func() bool { return ginReached(gr.counter[c], a.least, a.bits) },
				Text: func() string {
					return fmt.Sprintf("%v in ncclGin::waitCounter: rank %d's counter %d to reach %d (%d bits); it holds %d; %s",
						t, gr.rank, c, a.least, a.bits, gr.counter[c], sys.ginCounterInflight(gr, c))
				}}
			sys.gin.enter(g, func() (sim.CauseKind, string) {
				return CauseGinSignalWaits, fmt.Sprintf("in ncclGin::waitCounter for its counter %d to reach %d; it holds %d; %s", c, a.least, gr.counter[c], sys.ginCounterInflight(gr, c))
			})
			a.status = sys.awaitAbortable(g.Actor(), gr.rank, w, a.timeout)
			sys.gin.leave(g)
			if rt := t.RaceThread(); rt != nil && a.status == WaitOK {
				rt.Acquire(&gr.ctrSync[c])
			}
			continue
		}
		s := a.slot
		if sys.debug {
			if err := gr.checkRewait(t, s, a.least, a.bits); err != nil {
				return t.Error("ncclGin::waitSignal", err)
			}
		}
		off := gr.slotOff(s)
		w := sim.Wait{List: sys.ranks[gr.rank].wl, Lo: off, Hi: off + 8,
			Pred: func() bool { return ginReached(gr.load(s), a.least, a.bits) },
			Text: func() string {
				return fmt.Sprintf("%v in ncclGin::waitSignal: rank %d's signal %d to reach %d (%d bits); it holds %d; %s",
					t, gr.rank, s, a.least, a.bits, gr.load(s), sys.ginSignalInflight(gr, s))
			}}
		sys.gin.enter(g, func() (sim.CauseKind, string) { return sys.signalCause(gr, s, a.least, a.bits) })
		a.status = sys.awaitAbortable(g.Actor(), gr.rank, w, a.timeout)
		sys.gin.leave(g)
		if a.status == WaitOK {
			sys.ginRaceWaitHeld(t, gr, s, a.least, a.bits)
			sys.ginRaceAcquireSlot(t, gr, s)
			if sys.debug {
				gr.waited[ginWaitKey{t, s}] = ginWaited{least: a.least, at: sys.s.Now()}
			}
		}
	}
	return nil
}}

// ginWaitKey is one thread's waits on one signal slot (debug mode).
type ginWaitKey struct {
	t *kernel.Thread
	s int
}

// ginWaited is a thread's last satisfied wait on a slot: its target and
// when it returned.
type ginWaited struct {
	least uint64
	at    sim.Time
}

// checkRewait is debug mode's check of a wait that cannot wait for
// anything: the thread's previous satisfied wait on the same slot, with no
// reset since, was for at least as much, so this one is met by counts the
// previous one already saw. It is the shape of two barrier instances (or
// epochs) sharing one signal slot, where the second returns on the
// first's arrivals.
func (g *ginRank) checkRewait(t *kernel.Thread, s int, least uint64, bits int) error {
	if g.waited == nil {
		g.waited = map[ginWaitKey]ginWaited{}
	}
	prev, ok := g.waited[ginWaitKey{t, s}]
	if !ok || !ginReached(prev.least, least, bits) {
		return nil
	}
	return fmt.Errorf("GIN debug: rank %d's wait on its signal %d for %d is already met by the counts its wait for %d at %v saw (no resetSignal since): it orders nothing after the earlier wait. Two barrier instances (or epochs) on one signal slot see each other's counts: wait for the running total (epochs × arrivals) or give each instance its own signal index",
		g.rank, s, least, prev.least, prev.at)
}

// Flush is ncclGin::flush: every thread of op waits until the operations
// its threads issued on this context are locally consumed: a put's source
// may be reused, a get's data is here. It says nothing of a put's data at
// the peer.
func (gi *Gin) Flush(op kernel.Group) {
	gi.call(op, ginFlushCall, ginArgs{timeout: -1})
	op.Sync()
}

// FlushTimeout is flush with a device-side timeout (WaitSignalTimeout);
// every thread of op returns the coop's status. Operations it gave up on
// stay pending for the next flush.
func (gi *Gin) FlushTimeout(op kernel.Group, timeoutCycles uint64) WaitStatus {
	gi.call(op, ginFlushCall, ginArgs{timeout: gi.g.sys.model.cycles(timeoutCycles)})
	st := gi.a.status
	op.Sync()
	return st
}

var ginFlushCall = &kernel.Call[*ginArgs]{Name: "ncclGin::flush", Run: func(g *kernel.Active, args []*ginArgs) error {
	var ops []*ginOp
	var gr *ginRank
	timeout := sim.Time(-1)
	var taken []ginTaken
	for i, t := range g.Lanes() {
		a := args[i]
		gr = a.gin.g
		timeout = a.timeout
		a.status = WaitOK
		k := ginThreadKey{t, a.gin.ctx}
		ops = append(ops, gr.pending[k]...)
		taken = append(taken, ginTaken{k, gr.pending[k]})
		delete(gr.pending, k)
	}
	if len(ops) == 0 {
		return nil
	}
	all := func() bool {
		for _, o := range ops {
			if !o.consumed {
				return false
			}
		}
		return true
	}
	st := gr.sys.awaitAbortable(g.Actor(), gr.rank, sim.Wait{List: gr.fwl, Lo: 0, Hi: 1, Pred: all, Text: func() string {
		var left []string
		for _, o := range ops {
			if !o.consumed {
				left = append(left, o.describe()+" "+o.where())
			}
		}
		return fmt.Sprintf("%v in ncclGin::flush: %d operations not yet consumed: %s", g.Lanes()[0], len(left), strings.Join(left, "; "))
	}}, timeout)
	if st != WaitOK {
		// Not consumed yet: the next flush waits for them again.
		for _, tk := range taken {
			for _, o := range tk.ops {
				if !o.consumed {
					gr.pending[tk.k] = append(gr.pending[tk.k], o)
				}
			}
		}
	}
	for i, t := range g.Lanes() {
		a := args[i]
		a.status = st
		if st != WaitOK {
			continue
		}
		if rt := t.RaceThread(); rt != nil {
			for _, o := range ops {
				rt.Acquire(&o.sentSync)
			}
		}
	}
	return nil
}}

type ginTaken struct {
	k   ginThreadKey
	ops []*ginOp
}
