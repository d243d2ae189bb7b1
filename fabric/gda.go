package fabric

import (
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/nic"
	"github.com/emud-dev/emud/sim"
)

// MORI's ccoGda (include/mori/cco/cco_scale_out.hpp in ROCm/mori): the
// GDA (IBGDA RDMA) device layer, as a thin layer over the GIN machinery
// of gin.go on the same NIC model. Where MORI's semantics differ from
// NCCL's GIN the code below follows MORI; doc.go lists the differences.

// GdaConnection is ccoGdaConnectionType: which peers a rank has QPs to.
type GdaConnection uint8

const (
	// GdaConnectionNone is CCO_GDA_CONNECTION_NONE: no GDA QPs.
	GdaConnectionNone GdaConnection = iota
	// GdaConnectionFull is CCO_GDA_CONNECTION_FULL: every rank, this
	// node's included; the GDA team is the world.
	GdaConnectionFull
	// GdaConnectionCrossNode is CCO_GDA_CONNECTION_CROSSNODE (MORI's
	// default): the ranks of the other nodes; the GDA team is those ranks
	// with this rank at its node's first index.
	GdaConnectionCrossNode
	// GdaConnectionRail is CCO_GDA_CONNECTION_RAIL: the ranks of the same
	// LSA rank on the other nodes; the GDA team is indexed by node.
	GdaConnectionRail
)

func (c GdaConnection) String() string {
	switch c {
	case GdaConnectionNone:
		return "CCO_GDA_CONNECTION_NONE"
	case GdaConnectionFull:
		return "CCO_GDA_CONNECTION_FULL"
	case GdaConnectionCrossNode:
		return "CCO_GDA_CONNECTION_CROSSNODE"
	case GdaConnectionRail:
		return "CCO_GDA_CONNECTION_RAIL"
	}
	return fmt.Sprintf("ccoGdaConnectionType(%d)", uint8(c))
}

// GdaTeamMode is ccoTeamMode: how a peer argument is read.
type GdaTeamMode uint8

const (
	// GdaTeamWorld (CCO_TEAM_WORLD, the default): peer is a world rank.
	GdaTeamWorld GdaTeamMode = iota
	// GdaTeamLsa (CCO_TEAM_LSA): refused; MORI's resolveWorldPeer maps
	// every mode other than world as a GDA team index, so an LSA index
	// would silently name another rank.
	GdaTeamLsa
	// GdaTeamGda (CCO_TEAM_GDA): peer is an index of the GDA team.
	GdaTeamGda
)

// GdaPeerToWorld is MORI's GdaPeerToWorld: the world rank of GDA team
// index teamPeer as rank dc.Rank sees it, or -1 (NONE, or out of range).
func GdaPeerToWorld(dc DevComm, teamPeer int) int {
	rank, n := gdaTeam(dc)
	if teamPeer < 0 || teamPeer >= n {
		return -1
	}
	switch dc.GdaConnType {
	case GdaConnectionFull:
		return teamPeer
	case GdaConnectionRail:
		return teamPeer*dc.LsaSize + dc.LsaRank
	case GdaConnectionCrossNode:
		if teamPeer < rank {
			return teamPeer
		}
		if teamPeer == rank {
			return dc.Rank
		}
		return teamPeer + dc.LsaSize - 1
	}
	return -1
}

// WorldPeerToGda is MORI's WorldPeerToGda, the inverse: the GDA team index
// of world rank w, or -1 when w is not in rank dc.Rank's GDA team.
func WorldPeerToGda(dc DevComm, w int) int {
	if w < 0 || w >= dc.NRanks {
		return -1
	}
	nodeStart := dc.Rank / dc.LsaSize * dc.LsaSize
	switch dc.GdaConnType {
	case GdaConnectionFull:
		return w
	case GdaConnectionRail:
		if w%dc.LsaSize != dc.LsaRank {
			return -1
		}
		return w / dc.LsaSize
	case GdaConnectionCrossNode:
		switch {
		case w == dc.Rank:
			return nodeStart
		case w < nodeStart:
			return w
		case w < nodeStart+dc.LsaSize:
			return -1 // this node's other ranks: no QP
		}
		return w - dc.LsaSize + 1
	}
	return -1
}

// GdaTeam is ccoGda's rank and nRanks for dc, as its constructor derives
// them from the connection type (0, 0 under NONE).
func GdaTeam(dc DevComm) (rank, nRanks int) { return gdaTeam(dc) }

func gdaTeam(dc DevComm) (rank, n int) {
	switch dc.GdaConnType {
	case GdaConnectionFull:
		return dc.Rank, dc.NRanks
	case GdaConnectionRail:
		return dc.Rank / dc.LsaSize, dc.NRanks / dc.LsaSize
	case GdaConnectionCrossNode:
		return dc.Rank / dc.LsaSize * dc.LsaSize, dc.NRanks - dc.LsaSize + 1
	}
	return 0, 0
}

// GdaSignal is ccoGdaSignal_t; GdaCounter is ccoGdaCounter_t.
type (
	GdaSignal  uint32
	GdaCounter uint32
)

// GdaRemoteAction is a put's or signal's remote action: ccoGda_NoSignal,
// ccoGda_SignalInc or ccoGda_SignalAdd.
type GdaRemoteAction struct {
	set    bool
	inc    bool
	Signal GdaSignal
	Value  uint64
}

// GdaNoSignal is ccoGda_NoSignal{}.
func GdaNoSignal() GdaRemoteAction { return GdaRemoteAction{} }

// GdaSignalInc is ccoGda_SignalInc{id}: an RDMA fetch-add of 1 on the
// peer's signal id.
func GdaSignalInc(id GdaSignal) GdaRemoteAction {
	return GdaRemoteAction{set: true, inc: true, Signal: id, Value: 1}
}

// GdaSignalAdd is ccoGda_SignalAdd{id, value}.
func GdaSignalAdd(id GdaSignal, v uint64) GdaRemoteAction {
	return GdaRemoteAction{set: true, Signal: id, Value: v}
}

func (r GdaRemoteAction) name() string {
	switch {
	case !r.set:
		return "ccoGda_NoSignal"
	case r.inc:
		return "ccoGda_SignalInc"
	}
	return "ccoGda_SignalAdd"
}

// GdaCounterInc is ccoGda_CounterInc{id}, the local action of Counter.
type GdaCounterInc struct{ Counter GdaCounter }

// GdaRequest is ccoGdaRequest_t: what FlushAsync returns and Wait waits
// for (the QP and the operations posted on it up to the request).
type GdaRequest struct {
	QpIdx   int
	PostIdx uint64
	ops     []*ginOp
	g       *ginRank
}

// GdaBarrierHandle is ccoGdaBarrierHandle: the first slot of the barrier
// block in the signal pool and how many barriers it holds (0: disabled).
type GdaBarrierHandle struct {
	Signal0   uint32
	NBarriers int
}

// Gda is ccoGda<P> as one thread sees it: one GDA context of a dev comm.
type Gda struct {
	t   *kernel.Thread
	dc  DevComm
	g   *ginRank
	ctx int
	// Rank and NRanks are ccoGda's rank and nRanks: this rank's index in
	// its GDA team and the team's size, from the connection type.
	Rank, NRanks int
	a            gdaArgs
}

type gdaArgs struct {
	gda   *Gda
	op    kernel.Group
	call  string
	kind  ginOpKind
	mode  GdaTeamMode
	peer  int
	dst   Window
	dOff  uint64
	src   Window
	sOff  uint64
	bytes uint64
	value []byte
	ra    GdaRemoteAction
	// waits, flushes, counter
	slot  int
	least uint64
	bits  int
	ctr   bool
	req   GdaRequest
	inc   *GdaCounterInc
	all   bool
}

// NewGda is ccoGda<P>(devComm, contextIndex). The context picks the QP
// contextIndex mod gdaContextCount, as MORI's qpIdx does (an index beyond
// the count is not an error there, so it is not one here). It fails the
// kernel for a dev comm without GIN resources or a kernel on another GPU.
func NewGda(t *kernel.Thread, dc DevComm, contextIndex int) *Gda {
	const call = "ccoGda"
	if dc.st == nil {
		t.Fail(call, fmt.Errorf("the dev comm was not made by DevCommCreate"))
	}
	if dc.gin == nil {
		t.Fail(call, fmt.Errorf("rank %d: the dev comm has no GDA resources: request GinContextCount > 0 (gdaContextCount) and a GdaConnectionType", dc.Rank))
	}
	if contextIndex < 0 {
		t.Fail(call, fmt.Errorf("rank %d: contextIndex %d is negative", dc.Rank, contextIndex))
	}
	if t.GPU() != dc.Rank {
		t.Fail(call, fmt.Errorf("kernel on GPU %d uses rank %d's dev comm: launch rank r's kernels on GPU r", t.GPU(), dc.Rank))
	}
	r, n := gdaTeam(dc)
	gd := &Gda{t: t, dc: dc, g: dc.gin, ctx: contextIndex % dc.GinContextCount, Rank: r, NRanks: n}
	gd.a.gda = gd
	return gd
}

func (gd *Gda) call(op kernel.Group, c *kernel.Call[*gdaArgs], a gdaArgs) {
	if op.Thread() != gd.t {
		gd.t.Fail(a.call, fmt.Errorf("coop belongs to %v, not to this ccoGda's thread", op.Thread()))
	}
	op.Sync() // MORI's coop.sync() before the elected thread posts
	a.gda, a.op = gd, op
	gd.a = a
	kernel.Converge(gd.t, c, &gd.a)
	op.Sync()
}

// needWarp refuses a thread coop where MORI static_asserts one of at
// least a warp (the CQ poll lock is per warp).
func (gd *Gda) needWarp(call string, op kernel.Group) {
	if op.Scope() == kernel.ScopeThread {
		gd.t.Fail(call, fmt.Errorf("%s requires at least a warp coop (MORI refuses ccoCoopThread at compile time: concurrent per-thread CQ polls break its warp-level pollCqLock)", call))
	}
}

// Put is ccoGda::put: bytes of the local window src at srcOff to peer's
// dst at dstOff, then the remote action's atomic on the same QP.
func (gd *Gda) Put(op kernel.Group, mode GdaTeamMode, peer int, dst Window, dstOff uint64, src Window, srcOff uint64, bytes uint64, remote GdaRemoteAction) {
	gd.call(op, gdaIssueCall, gdaArgs{call: "ccoGda::put", kind: ginPut, mode: mode, peer: peer, dst: dst, dOff: dstOff, src: src, sOff: srcOff, bytes: bytes, ra: remote})
}

// PutValue is ccoGda::putValue: one value of size bytes (1, 2, 4 or 8) as
// an inline write.
func (gd *Gda) PutValue(op kernel.Group, mode GdaTeamMode, peer int, dst Window, dstOff uint64, value uint64, size int, remote GdaRemoteAction) {
	if size != 1 && size != 2 && size != 4 && size != 8 {
		gd.t.Fail("ccoGda::putValue", fmt.Errorf("a value of %d bytes: putValue supports types of at most 8 bytes (1, 2, 4 or 8)", size))
	}
	v := make([]byte, 8)
	binary.LittleEndian.PutUint64(v, value)
	gd.call(op, gdaIssueCall, gdaArgs{call: "ccoGda::putValue", kind: ginPutValue, mode: mode, peer: peer, dst: dst, dOff: dstOff, bytes: uint64(size), value: v[:size], ra: remote})
}

// Get is ccoGda::get: an RDMA read of peer's remote window into local.
// Its data is here once Flush (or Wait on a FlushAsync request) returns.
func (gd *Gda) Get(op kernel.Group, mode GdaTeamMode, peer int, remote Window, remoteOff uint64, local Window, localOff uint64, bytes uint64) {
	gd.call(op, gdaIssueCall, gdaArgs{call: "ccoGda::get", kind: ginGet, mode: mode, peer: peer, src: remote, sOff: remoteOff, dst: local, dOff: localOff, bytes: bytes})
}

// Signal is ccoGda::signal: the remote action alone (an RDMA atomic).
// ccoGda_NoSignal is refused: MORI's code would post +1 on signal 0.
func (gd *Gda) Signal(op kernel.Group, mode GdaTeamMode, peer int, remote GdaRemoteAction) {
	if !remote.set {
		gd.t.Fail("ccoGda::signal", fmt.Errorf("ccoGda_NoSignal: MORI's signal() then posts a fetch-add of 1 on the peer's signal 0 (its signalOp defaults to Inc at raddr 0); pass GdaSignalInc(0) if that is meant"))
	}
	gd.call(op, gdaIssueCall, gdaArgs{call: "ccoGda::signal", kind: ginSignalOp, mode: mode, peer: peer, ra: remote})
}

var gdaIssueCall = &kernel.Call[*gdaArgs]{Name: "ccoGda issue", Run: func(g *kernel.Active, args []*gdaArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		if a.op.ThreadRank() != 0 {
			continue
		}
		if err := a.gda.issue(t, a); err != nil {
			return t.Error(a.call, err)
		}
	}
	return nil
}}

// worldPeer resolves a peer argument and checks that this rank has a QP
// to it under the connection type.
func (gd *Gda) worldPeer(mode GdaTeamMode, peer int) (int, error) {
	dc := gd.dc
	if dc.GdaConnType == GdaConnectionNone {
		return 0, fmt.Errorf("rank %d's dev comm has gdaConnType CCO_GDA_CONNECTION_NONE: no GDA QPs", dc.Rank)
	}
	w := peer
	switch mode {
	case GdaTeamWorld:
	case GdaTeamGda:
		w = GdaPeerToWorld(dc, peer)
		if w < 0 {
			return 0, fmt.Errorf("GDA team index %d outside the team of %d ranks (%v)", peer, gd.NRanks, dc.GdaConnType)
		}
	case GdaTeamLsa:
		return 0, fmt.Errorf("CCO_TEAM_LSA: MORI's resolveWorldPeer reads it as a GDA team index, which names another rank; pass CCO_TEAM_WORLD or CCO_TEAM_GDA")
	default:
		return 0, fmt.Errorf("unknown team mode %d", mode)
	}
	if w < 0 || w >= dc.NRanks {
		return 0, fmt.Errorf("world rank %d outside the %d ranks", w, dc.NRanks)
	}
	if w == dc.Rank && dc.GdaConnType != GdaConnectionFull {
		return 0, fmt.Errorf("rank %d targets itself: %v gives no QP to self", dc.Rank, dc.GdaConnType)
	}
	if w != dc.Rank && WorldPeerToGda(dc, w) < 0 {
		return 0, fmt.Errorf("rank %d (node %d, LSA rank %d) is not connected to rank %d (node %d, LSA rank %d) under %v", w, w/dc.LsaSize, w%dc.LsaSize, dc.Rank, dc.Rank/dc.LsaSize, dc.LsaRank, dc.GdaConnType)
	}
	return w, nil
}

// strongOnWire: MORI posts a put's signal as an atomic WQE after the data
// WQE on the same QP, with no fence. On an in-order (RC) transport the
// responder executes them in order, so the signal implies every earlier
// operation on the QP (GIN's strong signal); on an out-of-order model the
// emulator gives it only its own put (GIN's weak signal).
func (sys *System) strongOnWire() bool {
	return sys.gin.net.Model().Ordering == nic.InOrder
}

func (gd *Gda) issue(t *kernel.Thread, a *gdaArgs) error {
	g, sys := gd.g, gd.g.sys
	me := gd.dc.Rank
	peer, err := gd.worldPeer(a.mode, a.peer)
	if err != nil {
		return err
	}
	pg := sys.comms[peer].ginOf(g)
	if pg == nil {
		return fmt.Errorf("rank %d has no dev comm matching rank %d's", peer, me)
	}
	if a.ra.set && int(a.ra.Signal) >= g.nSig {
		return fmt.Errorf("%s signal %d is not below the dev comm's gdaSignalCount %d (GinSignalCount)", a.ra.name(), a.ra.Signal, g.nSig)
	}
	o := &ginOp{kind: a.kind, rank: me, peer: peer, ctx: gd.ctx, who: t.String(), bytes: a.bytes, g: g, pg: pg, value: a.value, gda: true}
	if a.ra.set {
		o.ra = RemoteAction{kind: sigWeakAdd, Signal: GinSignal(a.ra.Signal), Value: a.ra.Value}
		if sys.strongOnWire() {
			o.ra.kind, o.strong = sigStrongAdd, true
		}
	}
	if err := bindWindows(sys, o, a.kind, a.dst, a.dOff, a.src, a.sOff, a.bytes); err != nil {
		return err
	}
	sys.gdaPost(t, o)
	return nil
}

// gdaPost posts o and records it as a WQE awaiting its completion.
func (sys *System) gdaPost(t *kernel.Thread, o *ginOp) {
	sys.ginPost(t, o)
	o.conn.wqes = append(o.conn.wqes, o)
}

// gdaDone: o has settled. Its CQE arrives now for a get (the data is
// here) and one latency later for a write or atomic (the responder's
// acknowledgement travels back).
func (sys *System) gdaDone(o *ginOp) {
	done := func() {
		o.cqe = true
		c := o.conn
		for i, x := range c.wqes {
			if x == o {
				c.wqes = append(c.wqes[:i], c.wqes[i+1:]...)
				break
			}
		}
		o.g.fwl.Notify(0, 1)
	}
	if o.kind == ginGet {
		done()
		return
	}
	sys.s.AfterWork(sys.gin.net.Model().Latency, done)
}

// ---- signals ----

func (gd *Gda) checkSlot(call string, s GdaSignal, bits int) {
	if int(s) >= gd.g.nSig {
		gd.t.Fail(call, fmt.Errorf("signal %d is not below the dev comm's gdaSignalCount %d", s, gd.g.nSig))
	}
	if bits < 1 || bits > 64 {
		gd.t.Fail(call, fmt.Errorf("bits %d outside [1, 64]", bits))
	}
}

func gdaMask(bits int) uint64 {
	if bits >= 64 {
		return ^uint64(0)
	}
	return uint64(1)<<bits - 1
}

// ReadSignal is ccoGda::readSignal: the slot's value less what waits have
// consumed (its shadow), at bits.
func (gd *Gda) ReadSignal(id GdaSignal, bits int) uint64 {
	gd.checkSlot("ccoGda::readSignal", id, bits)
	g := gd.g
	v := (g.load(int(id)) - g.shadow[id]) & gdaMask(bits)
	g.sys.ginRaceAcquireSlot(gd.t, g, int(id))
	return v
}

// WaitSignal is ccoGda::waitSignal: op's thread 0 waits until the slot's
// value less its shadow reaches least (a plain unsigned compare at bits,
// not GIN's rolling one), then consumes least (shadow += least).
func (gd *Gda) WaitSignal(op kernel.Group, id GdaSignal, least uint64, bits int) {
	gd.checkSlot("ccoGda::waitSignal", id, bits)
	gd.call(op, gdaWaitCall, gdaArgs{call: "ccoGda::waitSignal", slot: int(id), least: least, bits: bits})
}

// ResetSignal is ccoGda::resetSignal: the slot and its shadow become 0 (a
// plain store, which races with any signal it is not ordered with).
func (gd *Gda) ResetSignal(id GdaSignal) {
	gd.checkSlot("ccoGda::resetSignal", id, 64)
	g := gd.g
	g.sys.ginRaceReset(gd.t, g, int(id))
	g.store(int(id), 0)
	g.shadow[id] = 0
}

// gdaWaitSlot is waitSignalImpl on slot s of gr for lane t of g.
func (sys *System) gdaWaitSlot(g *kernel.Active, t *kernel.Thread, gr *ginRank, s int, least uint64, bits int, what, hint string) {
	mask := gdaMask(bits)
	delta := func() uint64 { return (gr.load(s) - gr.shadow[s]) & mask }
	off := gr.slotOff(s)
	w := sim.Wait{List: sys.ranks[gr.rank].wl, Lo: off, Hi: off + 8,
		Pred: func() bool { return delta() >= least },
		Text: func() string {
			return fmt.Sprintf("%v in %s: rank %d's signal %d to reach %d past its shadow %d (%d bits); it holds %d; %s",
				t, what, gr.rank, s, least, gr.shadow[s], bits, gr.load(s), sys.ginSignalInflight(gr, s))
		}}
	sys.gin.enter(g, func() (sim.CauseKind, string) {
		return CauseGinSignalWaits, fmt.Sprintf("in %s for its signal %d to rise %d past its shadow %d; it holds %d (delta %d); %s%s",
			what, s, least, gr.shadow[s], gr.load(s), delta(), sys.ginSignalInflight(gr, s), hint)
	})
	g.Actor().Await(w)
	sys.gin.leave(g)
	gr.shadow[s] = (gr.shadow[s] + least) & mask
	sys.ginRaceAcquireSlot(t, gr, s)
}

var gdaWaitCall = &kernel.Call[*gdaArgs]{Name: "ccoGda::waitSignal", Run: func(g *kernel.Active, args []*gdaArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		if a.op.ThreadRank() != 0 {
			continue
		}
		gr := a.gda.g
		sys := gr.sys
		if !a.ctr {
			sys.gdaWaitSlot(g, t, gr, a.slot, a.least, a.bits, "ccoGda::waitSignal", "")
			continue
		}
		c, mask := a.slot, gdaMask(a.bits)
		w := sim.Wait{List: gr.cwl, Lo: uint64(c), Hi: uint64(c) + 1,
			Pred: func() bool { return gr.counter[c]&mask >= a.least },
			Text: func() string {
				return fmt.Sprintf("%v in ccoGda::waitCounter: rank %d's counter %d to reach %d (%d bits); it holds %d: a counter rises only by ccoGda::counter",
					t, gr.rank, c, a.least, a.bits, gr.counter[c])
			}}
		sys.gin.enter(g, func() (sim.CauseKind, string) {
			return CauseGinSignalWaits, fmt.Sprintf("in ccoGda::waitCounter for its counter %d to reach %d; it holds %d, and only ccoGda::counter raises it", c, a.least, gr.counter[c])
		})
		g.Actor().Await(w)
		sys.gin.leave(g)
		if rt := t.RaceThread(); rt != nil {
			rt.Acquire(&gr.ctrSync[c])
		}
	}
	return nil
}}

// ---- counters ----

func (gd *Gda) checkCounter(call string, c GdaCounter, bits int) {
	if int(c) >= len(gd.g.counter) {
		gd.t.Fail(call, fmt.Errorf("counter %d is not below the dev comm's gdaCounterCount %d", c, len(gd.g.counter)))
	}
	if bits < 1 || bits > 64 {
		gd.t.Fail(call, fmt.Errorf("bits %d outside [1, 64]", bits))
	}
}

// Counter is ccoGda::counter: op's threads wait for the completion of
// every operation posted on this context's QPs to the GDA team (MORI's
// quietUntil, CQ polls), then thread 0 adds 1 to local's counter (nil:
// ccoGda_NoSignal, the quiet alone). Unlike GIN's ncclGin_CounterInc it is
// not attached to an operation, and it counts completions (the peer
// acknowledged), not source reads.
func (gd *Gda) Counter(op kernel.Group, local *GdaCounterInc) {
	gd.needWarp("ccoGda::counter", op)
	if local != nil {
		gd.checkCounter("ccoGda::counter", local.Counter, 64)
	}
	gd.call(op, gdaFlushCall, gdaArgs{call: "ccoGda::counter", all: true, inc: local})
}

// ReadCounter is ccoGda::readCounter.
func (gd *Gda) ReadCounter(c GdaCounter, bits int) uint64 {
	gd.checkCounter("ccoGda::readCounter", c, bits)
	if t := gd.t.RaceThread(); t != nil {
		t.Acquire(&gd.g.ctrSync[c])
	}
	return gd.g.counter[c] & gdaMask(bits)
}

// WaitCounter is ccoGda::waitCounter: a plain compare (value at bits ≥
// least), not rolling.
func (gd *Gda) WaitCounter(op kernel.Group, c GdaCounter, least uint64, bits int) {
	gd.checkCounter("ccoGda::waitCounter", c, bits)
	gd.call(op, gdaWaitCall, gdaArgs{call: "ccoGda::waitCounter", slot: int(c), least: least, bits: bits, ctr: true})
}

// ResetCounter is ccoGda::resetCounter.
func (gd *Gda) ResetCounter(c GdaCounter) {
	gd.checkCounter("ccoGda::resetCounter", c, 64)
	gd.g.counter[c] = 0
	gd.g.cwl.Notify(uint64(c), uint64(c)+1)
}

// ---- completion ----

// Flush is ccoGda::flush: op's threads wait for the completion of every
// operation posted so far on this context's QPs to every GDA team peer,
// by any thread of the rank (a CQ covers the QP, not the poster). A
// completion is the responder's acknowledgement: the data is at the peer,
// which is more than GIN's flush promises.
func (gd *Gda) Flush(op kernel.Group) {
	gd.needWarp("ccoGda::flush", op)
	gd.call(op, gdaFlushCall, gdaArgs{call: "ccoGda::flush", all: true})
}

// FlushPeer is ccoGda::flush(peer): the same for one peer's QP.
func (gd *Gda) FlushPeer(op kernel.Group, mode GdaTeamMode, peer int) {
	gd.needWarp("ccoGda::flush", op)
	gd.call(op, gdaFlushCall, gdaArgs{call: "ccoGda::flush", mode: mode, peer: peer})
}

// FlushAsync is ccoGda::flushAsync: op's thread 0 gets a request for the
// operations posted so far on peer's QP; Wait waits for them. Other
// threads of op get a zero request (MORI writes outRequest from thread 0).
func (gd *Gda) FlushAsync(op kernel.Group, mode GdaTeamMode, peer int) GdaRequest {
	gd.call(op, gdaFlushAsyncCall, gdaArgs{call: "ccoGda::flushAsync", mode: mode, peer: peer})
	return gd.a.req
}

// Wait is ccoGda::wait: op's thread 0 waits for its request's operations
// to complete.
func (gd *Gda) Wait(op kernel.Group, req GdaRequest) {
	gd.needWarp("ccoGda::wait", op)
	gd.call(op, gdaWaitReqCall, gdaArgs{call: "ccoGda::wait", req: req})
}

// qpOps is the operations posted on rank gd's QP of its context to world
// peer w that have not completed.
func (gd *Gda) qpOps(w int) []*ginOp {
	c := gd.g.sys.gin.conns[ginConnKey{gd.dc.Rank, w, gd.ctx}]
	if c == nil {
		return nil
	}
	return append([]*ginOp(nil), c.wqes...)
}

func (gd *Gda) teamPeers() []int {
	var out []int
	for p := range gd.NRanks {
		if p == gd.Rank {
			continue
		}
		out = append(out, GdaPeerToWorld(gd.dc, p))
	}
	return out
}

var gdaFlushAsyncCall = &kernel.Call[*gdaArgs]{Name: "ccoGda::flushAsync", Run: func(g *kernel.Active, args []*gdaArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		a.req = GdaRequest{}
		if a.op.ThreadRank() != 0 {
			continue
		}
		w, err := a.gda.worldPeer(a.mode, a.peer)
		if err != nil {
			return t.Error(a.call, err)
		}
		ops := a.gda.qpOps(w)
		c := a.gda.g.sys.gin.connOf(a.gda.dc.Rank, w, a.gda.ctx)
		a.req = GdaRequest{QpIdx: w*a.gda.dc.GinContextCount + a.gda.ctx, PostIdx: uint64(len(c.wqes)), ops: ops, g: a.gda.g}
	}
	return nil
}}

var gdaWaitReqCall = &kernel.Call[*gdaArgs]{Name: "ccoGda::wait", Run: func(g *kernel.Active, args []*gdaArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		if a.op.ThreadRank() != 0 {
			continue
		}
		if a.req.g != nil && a.req.g != a.gda.g {
			return t.Error(a.call, fmt.Errorf("the request came from another dev comm"))
		}
		gdaAwait(g, t, a.gda.g, a.req.ops, "ccoGda::wait")
	}
	return nil
}}

var gdaFlushCall = &kernel.Call[*gdaArgs]{Name: "ccoGda::flush", Run: func(g *kernel.Active, args []*gdaArgs) error {
	// The coop's threads split the peers (MORI strides them over the
	// coop); all of them wait here, so the elected lane waits for all.
	for i, t := range g.Lanes() {
		a := args[i]
		if a.op.ThreadRank() != 0 {
			continue
		}
		gd := a.gda
		peers := gd.teamPeers()
		if !a.all {
			w, err := gd.worldPeer(a.mode, a.peer)
			if err != nil {
				return t.Error(a.call, err)
			}
			peers = []int{w}
		}
		var ops []*ginOp
		for _, w := range peers {
			ops = append(ops, gd.qpOps(w)...)
		}
		gdaAwait(g, t, gd.g, ops, a.call)
		if a.inc != nil {
			gr := gd.g
			c := a.inc.Counter
			gr.counter[c]++
			if rt := t.RaceThread(); rt != nil {
				rt.Release(&gr.ctrSync[c])
			}
			gr.cwl.Notify(uint64(c), uint64(c)+1)
		}
	}
	return nil
}}

// gdaAwait waits for every op's completion; the lane then acquires their
// settlement (a completion means the data reached the peer).
func gdaAwait(g *kernel.Active, t *kernel.Thread, gr *ginRank, ops []*ginOp, what string) {
	if len(ops) > 0 {
		g.Actor().Await(sim.Wait{List: gr.fwl, Lo: 0, Hi: 1, Pred: func() bool {
			for _, o := range ops {
				if !o.cqe {
					return false
				}
			}
			return true
		}, Text: func() string {
			var left []string
			for _, o := range ops {
				if !o.cqe {
					l, n := o.msg.Landed()
					left = append(left, fmt.Sprintf("%s on %s (%s → %s, %d/%d packets landed)", o.describe(), o.msg.QP().Name(), o.msg.QP().Src().Name(), o.msg.QP().Dst().Name(), l, n))
				}
			}
			return fmt.Sprintf("%v in %s: %d operations without a completion: %s", t, what, len(left), strings.Join(left, "; "))
		}})
	}
	if rt := t.RaceThread(); rt != nil {
		for _, o := range ops {
			rt.Acquire(&o.doneSync)
		}
	}
}

// ---- the GDA barrier ----

// GdaBarrierSession is ccoGdaBarrierSession<P, Coop>: a barrier over the
// GDA team in the rail barrier slots (DevComm.RailGdaBarrier).
//
// Sync is MORI's: every member posts an atomic +1 to slot signal0 +
// index·nRanks + (its GDA rank) at every other member, then waits (and
// consumes 1 of) slot signal0 + index·nRanks + p for each member p. MORI
// sizes the pool nBarriers × nNodes, which fits the rail team; a team
// larger than that (FULL or CROSSNODE with several GPUs per node) would
// index past it, and Sync refuses. Under CROSSNODE the ranks of a node
// share one GDA rank (the node's first), so their arrivals land on the
// same slot and the barrier hangs; the emulator does what MORI's code does.
type GdaBarrierSession struct {
	t     *kernel.Thread
	gda   *Gda
	h     GdaBarrierHandle
	index int
	a     gdaBarArgs
}

type gdaBarArgs struct {
	b    *GdaBarrierSession
	coop kernel.Group
}

// NewGdaBarrierSession is the ccoGdaBarrierSession constructor.
func NewGdaBarrierSession(coop kernel.Group, gda *Gda, h GdaBarrierHandle, index uint32) *GdaBarrierSession {
	const call = "ccoGdaBarrierSession"
	t := coop.Thread()
	if gda == nil || gda.t != t {
		t.Fail(call, fmt.Errorf("the ccoGda belongs to another thread"))
	}
	g := gda.g
	if h != g.gdaBar {
		t.Fail(call, fmt.Errorf("barrier handle %+v is not this dev comm's railGdaBarrier %+v", h, g.gdaBar))
	}
	if int(index) >= h.NBarriers {
		why := ""
		if h.NBarriers == 0 {
			why = " (MORI enables the rail barriers only with GDA QPs and more than one node)"
		}
		t.Fail(call, fmt.Errorf("rank %d: barrier index %d is not below railGdaBarrier.nBarriers %d%s", g.rank, index, h.NBarriers, why))
	}
	b := &GdaBarrierSession{t: t, gda: gda, h: h, index: int(index)}
	b.a.b = b
	return b
}

// GdaBarrier is ccoGdaBarrier: a session and its Sync in one call.
func GdaBarrier(coop kernel.Group, gda *Gda, h GdaBarrierHandle, index uint32) {
	NewGdaBarrierSession(coop, gda, h, index).Sync(coop)
}

// Sync is ccoGdaBarrierSession::sync.
func (b *GdaBarrierSession) Sync(coop kernel.Group) {
	const call = "ccoGdaBarrierSession::sync"
	if coop.Thread() != b.t {
		b.t.Fail(call, fmt.Errorf("coop belongs to %v, not to this session's thread", coop.Thread()))
	}
	b.gda.needWarp(call, coop)
	gd := b.gda
	nNodes := gd.dc.NRanks / gd.dc.LsaSize
	if need, have := (b.index+1)*gd.NRanks, b.h.NBarriers*nNodes; need > have {
		b.t.Fail(call, fmt.Errorf("barrier %d over a GDA team of %d ranks (%v) uses slots up to signal0+%d, but MORI sizes the pool for the rail team: %d barriers × %d nodes = %d slots; use CCO_GDA_CONNECTION_RAIL", b.index, gd.NRanks, gd.dc.GdaConnType, need, b.h.NBarriers, nNodes, have))
	}
	coop.Sync()
	b.a.coop = coop
	kernel.Converge(b.t, gdaBarCall, &b.a)
	coop.Sync()
}

var gdaBarCall = &kernel.Call[*gdaBarArgs]{Name: "ccoGdaBarrierSession::sync", Run: func(g *kernel.Active, args []*gdaBarArgs) error {
	for i, t := range g.Lanes() {
		a := args[i]
		if a.coop.ThreadRank() != 0 {
			continue
		}
		if err := a.b.sync(g, t); err != nil {
			return t.Error("ccoGdaBarrierSession::sync", err)
		}
	}
	return nil
}}

func (b *GdaBarrierSession) sync(g *kernel.Active, t *kernel.Thread) error {
	gd := b.gda
	gr := gd.g
	sys := gr.sys
	base := int(b.h.Signal0) + b.index*gd.NRanks
	// Phase 1: signal every peer, rotated from this rank as MORI does.
	var order []int
	for i := range gd.NRanks - 1 {
		order = append(order, (gd.Rank+1+i)%gd.NRanks)
	}
	for _, p := range order {
		w := GdaPeerToWorld(gd.dc, p)
		pg := sys.comms[w].ginOf(gr)
		if pg == nil {
			return fmt.Errorf("rank %d has no dev comm matching rank %d's", w, gd.dc.Rank)
		}
		o := &ginOp{kind: ginBarrier, rank: gd.dc.Rank, peer: w, ctx: gd.ctx, who: t.String(), g: gr, pg: pg, gda: true,
			ra: RemoteAction{kind: sigWeakAdd, Signal: GinSignal(base + gd.Rank), Value: 1}}
		if sys.strongOnWire() {
			o.ra.kind, o.strong = sigStrongAdd, true
		}
		sys.gdaPost(t, o)
	}
	hint := ""
	if gd.dc.GdaConnType == GdaConnectionCrossNode && gd.dc.LsaSize > 1 {
		hint = fmt.Sprintf(". Under %v every rank of a node has the node's first rank as its GDA rank, so all of a node's ranks arrive on one slot and the slots of the others stay 0: MORI's barrier needs CCO_GDA_CONNECTION_RAIL (or one GPU per node)", gd.dc.GdaConnType)
	}
	// Phase 2: each peer's reciprocal signal.
	for _, p := range order {
		sys.gdaWaitSlot(g, t, gr, base+p, 1, 64, fmt.Sprintf("ccoGdaBarrierSession::sync (barrier %d, from GDA rank %d = world rank %d)", b.index, p, GdaPeerToWorld(gd.dc, p)), hint)
	}
	return nil
}
