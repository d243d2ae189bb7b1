package fabric

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/nic"
	"github.com/emud-dev/emud/sim"
)

// Gin is ncclGin as one thread sees it: one GIN context of a dev comm.
// Build it in every thread that uses it (NewGin is the constructor
// ncclGin(devComm, contextIndex)).
type Gin struct {
	t   *kernel.Thread
	dc  DevComm
	g   *ginRank
	ctx int
	a   ginArgs
}

type ginArgs struct {
	gin   *Gin
	op    kernel.Group
	kind  ginOpKind
	team  Team
	peer  int
	dst   Window
	dOff  uint64
	src   Window
	sOff  uint64
	bytes uint64
	value []byte
	ra    RemoteAction
	la    LocalAction
	// waits
	slot    int
	least   uint64
	bits    int
	ctr     bool
	timeout sim.Time // < 0: none
	status  WaitStatus
}

// NewGin is ncclGin(comm, contextIndex). It fails the kernel for a dev
// comm without GIN contexts, a context index out of range, or a kernel on
// another GPU than the dev comm's rank.
func NewGin(t *kernel.Thread, dc DevComm, contextIndex int) *Gin {
	const call = "ncclGin"
	if dc.st == nil {
		t.Fail(call, fmt.Errorf("the dev comm was not made by DevCommCreate"))
	}
	if dc.gin == nil {
		t.Fail(call, fmt.Errorf("rank %d: the dev comm has no GIN contexts: request ginContextCount > 0 in DevCommRequirements", dc.Rank))
	}
	if contextIndex < 0 || contextIndex >= dc.GinContextCount {
		t.Fail(call, fmt.Errorf("rank %d: contextIndex %d outside the dev comm's %d GIN contexts (ginContextCount)", dc.Rank, contextIndex, dc.GinContextCount))
	}
	if t.GPU() != dc.Rank {
		t.Fail(call, fmt.Errorf("kernel on GPU %d uses rank %d's dev comm: launch rank r's kernels on GPU r", t.GPU(), dc.Rank))
	}
	gi := &Gin{t: t, dc: dc, g: dc.gin, ctx: contextIndex}
	gi.a.gin = gi
	return gi
}

// Context is the context index.
func (gi *Gin) Context() int { return gi.ctx }

func (gi *Gin) call(op kernel.Group, c *kernel.Call[*ginArgs], a ginArgs) {
	if op.Thread() != gi.t {
		gi.t.Fail(c.Name, fmt.Errorf("coop belongs to %v, not to this ncclGin's thread", op.Thread()))
	}
	if op.Scope() == kernel.ScopeBlock {
		op.Sync()
	}
	a.gin, a.op = gi, op
	gi.a = a
	kernel.Converge(gi.t, c, &gi.a)
}

// Put is ncclGin::put: bytes from the local window src at srcOff to peer's
// (a rank of team) window dst at dstOff, with remote (a signal on the peer
// when the data has settled) and local (a counter here when the source has
// been read) actions. op's elected thread posts it; a coop defaults to the
// thread (kernel.Thread.ThreadGroup) in NCCL.
func (gi *Gin) Put(op kernel.Group, team Team, peer int, dst Window, dstOff uint64, src Window, srcOff uint64, bytes uint64, remote RemoteAction, local LocalAction) {
	gi.call(op, ginIssueCall, ginArgs{kind: ginPut, team: team, peer: peer, dst: dst, dOff: dstOff, src: src, sOff: srcOff, bytes: bytes, ra: remote, la: local})
}

// PutValue is ncclGin::putValue: one value of size bytes (1, 2, 4 or 8)
// passed by value, written at dstOff of peer's dst.
func (gi *Gin) PutValue(op kernel.Group, team Team, peer int, dst Window, dstOff uint64, value uint64, size int, remote RemoteAction, local LocalAction) {
	if size != 1 && size != 2 && size != 4 && size != 8 {
		gi.t.Fail("ncclGin::putValue", fmt.Errorf("a value of %d bytes: putValue takes one element of 1, 2, 4 or 8 bytes", size))
	}
	v := make([]byte, 8)
	binary.LittleEndian.PutUint64(v, value)
	gi.call(op, ginIssueCall, ginArgs{kind: ginPutValue, team: team, peer: peer, dst: dst, dOff: dstOff, bytes: uint64(size), value: v[:size], ra: remote, la: local})
}

// Signal is ncclGin::signal: remote's signal on peer without data.
func (gi *Gin) Signal(op kernel.Group, team Team, peer int, remote RemoteAction) {
	if remote.kind == sigNone {
		gi.t.Fail("ncclGin::signal", fmt.Errorf("ncclGin_None: signal needs a signal action"))
	}
	gi.call(op, ginIssueCall, ginArgs{kind: ginSignalOp, team: team, peer: peer, ra: remote})
}

// Get is ncclGin::get (NCCL 2.30.3): bytes of peer's window remote at
// remoteOff into the local window local at localOff. Flush makes the data
// visible here.
func (gi *Gin) Get(op kernel.Group, team Team, peer int, remote Window, remoteOff uint64, local Window, localOff uint64, bytes uint64) {
	gi.call(op, ginIssueCall, ginArgs{kind: ginGet, team: team, peer: peer, src: remote, sOff: remoteOff, dst: local, dOff: localOff, bytes: bytes})
}

var ginIssueCall = &kernel.Call[*ginArgs]{Name: "ncclGin issue", Run: func(g *kernel.Active, args []*ginArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		if !elected(g, t, a.op.Scope()) {
			continue
		}
		if err := a.gin.issue(t, a); err != nil {
			return t.Error(ginOpNames[a.kind], err)
		}
	}
	return nil
}}

// issue validates one operation and posts it on its QP.
func (gi *Gin) issue(t *kernel.Thread, a *ginArgs) error {
	g, sys := gi.g, gi.g.sys
	me := gi.dc.Rank
	if a.team.NRanks < 1 || a.peer < 0 || a.peer >= a.team.NRanks {
		return fmt.Errorf("peer %d is not a rank of the team (%d ranks)", a.peer, a.team.NRanks)
	}
	peer := gi.dc.TeamRankToWorld(a.team, a.peer)
	if peer < 0 || peer >= len(sys.ranks) {
		return fmt.Errorf("team rank %d is world rank %d, outside the %d ranks", a.peer, peer, len(sys.ranks))
	}
	if g.conn == GinConnectionRail && peer != me && sys.topo.LsaRank(peer) != sys.topo.LsaRank(me) {
		return fmt.Errorf("rank %d (LSA rank %d) is not on rank %d's rail (LSA rank %d): with %v a peer must be in the rail team", peer, sys.topo.LsaRank(peer), me, sys.topo.LsaRank(me), g.conn)
	}
	pg := sys.comms[peer].ginOf(g)
	if pg == nil {
		return fmt.Errorf("rank %d has no GIN dev comm matching rank %d's", peer, me)
	}
	o := &ginOp{kind: a.kind, rank: me, peer: peer, ctx: gi.ctx, who: t.String(), bytes: a.bytes, ra: a.ra, la: a.la, g: g, pg: pg, value: a.value}
	if err := gi.checkActions(o); err != nil {
		return err
	}
	if err := bindWindows(sys, o, a.kind, a.dst, a.dOff, a.src, a.sOff, a.bytes); err != nil {
		return err
	}
	if sys.sdmaFor(o) {
		if err := sys.ginSdmaCheck(o); err != nil {
			return err
		}
	}
	o.strong = a.ra.kind == sigStrongInc || a.ra.kind == sigStrongAdd || (g.strong && (a.ra.kind == sigInc || a.ra.kind == sigAdd))
	k := ginThreadKey{t, gi.ctx}
	g.pending[k] = append(g.pending[k], o)
	sys.ginPost(t, o)
	return nil
}

func (gi *Gin) checkActions(o *ginOp) error {
	if o.ra.kind != sigNone && (int(o.ra.Signal) >= gi.g.nSig) {
		return fmt.Errorf("%s signal %d is not below the dev comm's ginSignalCount %d", o.ra.name(), o.ra.Signal, gi.g.nSig)
	}
	if o.la.set && int(o.la.Counter) >= len(gi.g.counter) {
		return fmt.Errorf("ncclGin_CounterInc counter %d is not below the dev comm's ginCounterCount %d", o.la.Counter, len(gi.g.counter))
	}
	if o.kind == ginGet && (o.ra.kind != sigNone || o.la.set) {
		return fmt.Errorf("get takes no signal or counter action")
	}
	return nil
}

// checkWin checks [off, off+n) against w; windows are symmetric, so the
// same offset is valid on every rank.
func checkWin(sys *System, what string, w Window, off, n uint64) error {
	if w.sys != sys {
		return fmt.Errorf("the %s window was not registered on this system", what)
	}
	if off+n < off || off+n > w.Bytes {
		return fmt.Errorf("%s range [%d, %d) outside the window's %d B", what, off, off+n, w.Bytes)
	}
	return nil
}

// ginOf is c's GIN dev comm that corresponds to g (the same creation
// order: the k-th GIN dev comm of every rank).
func (c *Comm) ginOf(g *ginRank) *ginRank {
	mine := c.sys.comms[g.rank].gins
	for i, x := range mine {
		if x == g && i < len(c.gins) {
			return c.gins[i]
		}
	}
	return nil
}

// ---- the network side ----

// ginPost puts o on the wire: a put's packets read the source as they
// leave and land at the destination; a get asks the peer's NIC, whose
// packets read there and land here.
func (sys *System) ginPost(t *kernel.Thread, o *ginOp) {
	if sys.sdmaFor(o) {
		sys.ginPostSdma(t, o)
		return
	}
	gs := sys.gin
	sys.ginRaceStart(t, o)
	src, dst := o.rank, o.peer
	if o.kind == ginGet {
		src, dst = o.peer, o.rank
	}
	o.conn = gs.connOf(o.rank, o.peer, o.ctx)
	if o.kind != ginGet {
		o.conn.open = append(o.conn.open, o) // strong signals order after it
	}
	// A get's data comes back from the peer's NIC.
	qp := gs.connOf(src, dst, o.ctx).qp
	phantom := (o.kind == ginPut || o.kind == ginGet) && sys.ranks[src].bytes(o.srcOff, 0) == nil
	if (o.kind == ginPut || o.kind == ginGet) && !phantom && o.bytes > 0 {
		o.data = make([]byte, o.bytes)
	}
	m := &nic.Message{Op: o.describe(), Bytes: o.bytes}
	m.Read = func(lo, hi uint64) {
		switch {
		case o.kind == ginPutValue:
			copy(o.data[lo:hi], o.value[lo:hi])
		case o.data != nil:
			copy(o.data[lo:hi], sys.ranks[src].bytes(o.srcOff+lo, hi-lo))
		}
		sys.ginRaceRead(o, src, lo, hi)
	}
	m.Sent = func() {
		if o.kind != ginGet {
			sys.ginConsumed(o)
		}
	}
	m.Land = func(lo, hi uint64) {
		if o.data != nil {
			copy(sys.ranks[dst].bytes(o.dstOff+lo, hi-lo), o.data[lo:hi])
		}
		sys.ginRaceWrite(o, dst, lo, hi)
		if hi > lo {
			sys.ranks[dst].wl.Notify(o.dstOff+lo, o.dstOff+hi)
		}
	}
	m.Done = func() {
		sys.ginSettled(o)
		if o.gda {
			sys.gdaDone(o)
		}
	}
	o.msg = m
	if o.kind == ginPutValue {
		o.data = make([]byte, o.bytes)
	}
	qp.Post(m)
}

// ginConsumed: o's source has been read (put) or its data landed (get):
// the local action and flush.
func (sys *System) ginConsumed(o *ginOp) {
	o.consumed = true
	rt := o.race
	if o.raceRd != nil {
		rt = o.raceRd // GIN over SDMA: the source reads alone
	}
	if rt != nil {
		rt.Release(&o.sentSync)
	}
	if o.la.set {
		g := o.g
		g.counter[o.la.Counter]++
		if rt != nil {
			rt.Release(&g.ctrSync[o.la.Counter])
		}
		g.cwl.Notify(uint64(o.la.Counter), uint64(o.la.Counter)+1)
	}
	o.g.fwl.Notify(0, 1)
}

// ginSettled: every packet of o has landed. A weak signal (or none) is
// applied now; a strong one once every earlier operation of the
// connection has settled, which the connection's settled prefix tracks.
func (sys *System) ginSettled(o *ginOp) {
	o.settled = true
	sys.s.Trace(sys.gin.tk, o.conn.subj, uint64(o.kind), o.dstOff, o.bytes)
	if o.race != nil {
		o.race.Release(&o.doneSync)
	}
	if o.kind == ginGet {
		sys.ginConsumed(o)
		return
	}
	if !o.strong {
		sys.ginSignal(o)
	}
	c := o.conn
	for len(c.open) > 0 && c.open[0].settled {
		h := c.open[0]
		c.open = c.open[1:]
		if h.strong {
			if h.race != nil {
				h.race.Acquire(&c.prefix) // every earlier operation's settlement
			}
			sys.ginSignal(h)
		}
		if h.race != nil {
			h.race.Release(&c.prefix)
		}
	}
}

// ginSignal applies o's remote action at the peer.
// ginSignalMode records whether o's signal is an Inc or an Add on its
// slot; in debug mode mixing them without a reset fails the run (false).
func (sys *System) ginSignalMode(o *ginOp) bool {
	pg, slot := o.pg, int(o.ra.Signal)
	mode := uint8(2)
	if o.ra.inc() {
		mode = 1
	}
	if m := pg.mode[slot]; m != 0 && m != mode && sys.debug {
		sys.s.Fail(fmt.Errorf("GIN debug: %s by %s on rank %d's signal %d, which a %s raised since its last reset: SignalInc may not be mixed with other signal-modifying operations without an intervening resetSignal",
			o.ra.name(), o.who, o.peer, slot, map[uint8]string{1: "SignalInc", 2: "SignalAdd"}[m]))
		return false
	}
	pg.mode[slot] = mode
	return true
}

func (sys *System) ginSignal(o *ginOp) {
	if o.ra.kind == sigNone && o.kind != ginBarrier {
		return
	}
	pg := o.pg
	slot := int(o.ra.Signal)
	if !sys.ginSignalMode(o) {
		return
	}
	pg.lastSig[slot], pg.lastSigAt[slot] = o, sys.s.Now()
	sys.ginRaceSignal(o, slot, pg.load(slot))
	pg.store(slot, pg.load(slot)+o.ra.Value)
	o.signaled = true
}

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

// ginSignalInflight names the operations in flight whose remote action
// targets rank gr's slot s: the NIC, QP and operation a waiter waits for.
func (sys *System) ginSignalInflight(gr *ginRank, s int) string {
	in := sys.ginSignalOps(gr, s)
	if len(in) == 0 {
		return "no operation in flight signals it: it is waiting for an operation nobody posted (or one that already settled without reaching the value)"
	}
	return "in flight to it: " + strings.Join(in, "; ")
}

// ginSignalOps describes each operation in flight that will signal slot s
// of gr.
func (sys *System) ginSignalOps(gr *ginRank, s int) []string {
	var in []string
	for _, c := range sys.gin.sortedConns() {
		if c.key.dst != gr.rank {
			continue
		}
		for _, o := range c.open {
			if o.pg == gr && o.slot() == s && !o.signaled {
				if c.sq != nil {
					in = append(in, fmt.Sprintf("%s (%s)", o.describe(), o.sdmaWhere()))
					continue
				}
				l, n := o.msg.Landed()
				lost := ""
				if why, ok := o.msg.QP().Unreachable(); ok {
					lost = fmt.Sprintf("; %s is unreachable from %s (%s): its packets are lost and it never lands", o.msg.QP().Dst().Name(), o.msg.QP().Src().Name(), why)
				}
				in = append(in, fmt.Sprintf("%s (%s, %s → %s, %d/%d packets landed%s)", o.describe(), c.qp.Name(), c.qp.Src().Name(), c.qp.Dst().Name(), l, n, lost))
			}
		}
	}
	return in
}

func (o *ginOp) slot() int {
	if o.ra.kind == sigNone && o.kind != ginBarrier {
		return -1
	}
	return int(o.ra.Signal)
}

func (sys *System) ginCounterInflight(gr *ginRank, c int) string {
	n := 0
	for _, ops := range gr.pending {
		for _, o := range ops {
			if o.la.set && int(o.la.Counter) == c && !o.consumed {
				n++
			}
		}
	}
	return fmt.Sprintf("%d operations with ncclGin_CounterInc on it not yet consumed", n)
}

func (gs *ginSys) sortedConns() []*ginConn {
	out := make([]*ginConn, 0, len(gs.conns))
	for _, c := range gs.conns {
		out = append(out, c)
	}
	sortConns(out)
	return out
}

// bindWindows checks the windows a put, putValue or get names and sets
// o's offsets in the system's memory (GIN's and ccoGda's calls alike).
func bindWindows(sys *System, o *ginOp, kind ginOpKind, dst Window, dOff uint64, src Window, sOff, bytes uint64) error {
	switch kind {
	case ginPut, ginPutValue:
		if err := checkWin(sys, "destination", dst, dOff, bytes); err != nil {
			return err
		}
		o.dstOff = dst.bigOffset() + dOff
		if kind == ginPut {
			if err := checkWin(sys, "source", src, sOff, bytes); err != nil {
				return err
			}
			o.srcOff = src.bigOffset() + sOff
		}
	case ginGet:
		if err := checkWin(sys, "remote", src, sOff, bytes); err != nil {
			return err
		}
		if err := checkWin(sys, "local", dst, dOff, bytes); err != nil {
			return err
		}
		o.srcOff, o.dstOff = src.bigOffset()+sOff, dst.bigOffset()+dOff
	}
	return nil
}
