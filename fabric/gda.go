package fabric

import (
	"encoding/binary"
	"fmt"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/nic"
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
