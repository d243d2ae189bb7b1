package fabric

import (
	"encoding/binary"
	"fmt"

	"github.com/emud-dev/emud/kernel"
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
