package fabric

import (
	"encoding/binary"
	"fmt"

	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/nic"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// GinConnection is ncclGinConnectionType: which peers a rank's GIN
// contexts connect to.
type GinConnection uint8

const (
	// GinConnectionFull connects every rank to every rank.
	GinConnectionFull GinConnection = iota
	// GinConnectionRail connects a rank only to the ranks of its rail: the
	// ranks of the same LSA rank on the other nodes.
	GinConnectionRail
)

func (c GinConnection) String() string {
	if c == GinConnectionRail {
		return "NCCL_GIN_CONNECTION_RAIL"
	}
	return "NCCL_GIN_CONNECTION_FULL"
}

// GinSignal is ncclGinSignal_t: the index of a signal of the dev comm.
type GinSignal uint32

// GinCounter is ncclGinCounter_t: the index of a counter of the dev comm.
type GinCounter uint32

// GinBarrierHandle is where a dev comm's GIN barriers live (the
// railGinBarrier field): the first signal slot of the barrier block and
// how many barriers it holds.
type GinBarrierHandle struct {
	First     int
	NBarriers int
}

// signalKind is a RemoteAction's kind.
type signalKind uint8

const (
	sigNone signalKind = iota
	sigStrongInc
	sigStrongAdd
	sigWeakInc
	sigWeakAdd
	sigInc // deprecated ncclGin_SignalInc: strength from ginStrongSignalsRequired
	sigAdd // deprecated ncclGin_SignalAdd
)

// RemoteAction is a put's or signal's action at the destination on
// settlement: nothing, or raise a signal (strong or weak, Inc or Add).
type RemoteAction struct {
	kind   signalKind
	Signal GinSignal
	Value  uint64
}

// GinNone is ncclGin_None: no action.
func GinNone() RemoteAction { return RemoteAction{} }

// GinStrongSignalInc is ncclGin_StrongSignalInc{signal}: +1, and its
// visibility implies every earlier put of the context to that peer.
func GinStrongSignalInc(s GinSignal) RemoteAction {
	return RemoteAction{kind: sigStrongInc, Signal: s, Value: 1}
}

// GinStrongSignalAdd is ncclGin_StrongSignalAdd{signal, value}.
func GinStrongSignalAdd(s GinSignal, v uint64) RemoteAction {
	return RemoteAction{kind: sigStrongAdd, Signal: s, Value: v}
}

// GinWeakSignalInc is ncclGin_WeakSignalInc{signal}: +1, implying only the
// data of the put it is attached to.
func GinWeakSignalInc(s GinSignal) RemoteAction {
	return RemoteAction{kind: sigWeakInc, Signal: s, Value: 1}
}

// GinWeakSignalAdd is ncclGin_WeakSignalAdd{signal, value}.
func GinWeakSignalAdd(s GinSignal, v uint64) RemoteAction {
	return RemoteAction{kind: sigWeakAdd, Signal: s, Value: v}
}

// GinSignalInc is the deprecated ncclGin_SignalInc: strong when the dev
// comm was created with GinStrongSignalsRequired, weak otherwise.
func GinSignalInc(s GinSignal) RemoteAction { return RemoteAction{kind: sigInc, Signal: s, Value: 1} }

// GinSignalAdd is the deprecated ncclGin_SignalAdd.
func GinSignalAdd(s GinSignal, v uint64) RemoteAction {
	return RemoteAction{kind: sigAdd, Signal: s, Value: v}
}

func (r RemoteAction) inc() bool {
	return r.kind == sigStrongInc || r.kind == sigWeakInc || r.kind == sigInc
}

func (r RemoteAction) name() string {
	return [...]string{"ncclGin_None", "ncclGin_StrongSignalInc", "ncclGin_StrongSignalAdd", "ncclGin_WeakSignalInc",
		"ncclGin_WeakSignalAdd", "ncclGin_SignalInc", "ncclGin_SignalAdd"}[r.kind]
}

// LocalAction is a put's action on the issuing rank when its source has
// been consumed: nothing, or raise a counter.
type LocalAction struct {
	set     bool
	Counter GinCounter
}

// GinLocalNone is ncclGin_None as a local action.
func GinLocalNone() LocalAction { return LocalAction{} }

// GinCounterInc is ncclGin_CounterInc{counter}: +1 on local completion
// (the source was read), which says nothing of the remote side.
func GinCounterInc(c GinCounter) LocalAction { return LocalAction{set: true, Counter: c} }

// GinFence is ncclGinFenceLevel: which earlier operations a GIN barrier
// drains (bit flags).
type GinFence uint8

const (
	GinFenceNone GinFence = 0
	// GinFencePut: puts other members issued to the caller before the
	// barrier are visible after it.
	GinFencePut GinFence = 1
	// GinFenceGet: gets the caller issued before the barrier have landed.
	GinFenceGet GinFence = 2
)

// counterBits is the width of a counter: values of at most 56 bits.
const counterBits = 56

// ginRank is the emulator's GIN state of one dev comm.
type ginRank struct {
	sys     *System
	rank    int
	nCtx    int
	strong  bool // ginStrongSignalsRequired
	conn    GinConnection
	sigOff  uint64 // big-VA offset of the signal array
	nSig    int    // user signals (barrier slots follow)
	nBar    int
	barSize int            // team size of the barriers (world)
	mode    []uint8        // per slot: 0 untouched since reset, 1 Inc, 2 Add
	counter []uint64       // per counter
	cwl     *sim.WatchList // counters: [c, c+1) for counter c
	fwl     *sim.WatchList // flushes: any consumption
	ctrSync []race.Sync
	pending map[ginThreadKey][]*ginOp // issued by a thread, not yet consumed
	epochs  []uint64                  // per barrier: completed syncs
	// For the hang report (signalCause): per slot, the last operation
	// whose signal landed on it and when, and the last readSignal that
	// returned a value counting such a signal (a baseline taken late).
	lastSig   []*ginOp
	lastSigAt []sim.Time
	baseRead  map[int]ginBaseRead
	waited    map[ginWaitKey]ginWaited // debug mode: each thread's last satisfied wait per slot

	// ccoGda (gda.go)
	gdaConn GdaConnection
	gdaBar  GdaBarrierHandle
	shadow  []uint64 // per slot: the signal value waits have consumed (signalShadows)
}

// ginBaseRead is a readSignal that returned v at time at, by who, after
// op's signal had landed on the slot at opAt.
type ginBaseRead struct {
	who  string
	at   sim.Time
	v    uint64
	op   *ginOp
	opAt sim.Time
}

type ginThreadKey struct {
	t   *kernel.Thread
	ctx int
}

// ginSys is the network side of the system, built with the first dev comm
// that asks for GIN contexts.
type ginSys struct {
	s     *sim.Sim
	net   *nic.Network
	conns map[ginConnKey]*ginConn
	tk    sim.TraceKind // "gin.settle", in the run's digest
	waits map[*kernel.Wave]*ginWait
	sdma  *ginSdma // NCCL_GIN_TYPE=7: intra-node operations over SDMA (gin_sdma.go)
}

type ginConnKey struct{ src, dst, ctx int }

// ginConn is one context's connection from one rank to another: its QP
// and the operations on it that have not settled at the destination, in
// issue order (a strong signal waits for all of them).
type ginConn struct {
	key    ginConnKey
	qp     *nic.QP
	subj   sim.TraceSubject
	sq     *sdmaQueue // GIN over SDMA (gin_sdma.go): the queue instead of a QP
	open   []*ginOp   // posted, not yet part of the settled prefix, in issue order
	wqes   []*ginOp   // ccoGda: posted, completion (CQE) not yet arrived, in post order
	prefix race.Sync  // the settlement of every operation before open[0]
}

type ginOpKind uint8

const (
	ginPut ginOpKind = iota
	ginPutValue
	ginSignalOp
	ginGet
	ginBarrier
)

var ginOpNames = [...]string{"ncclGin::put", "ncclGin::putValue", "ncclGin::signal", "ncclGin::get", "ncclGinBarrierSession::sync"}

var gdaOpNames = [...]string{"ccoGda::put", "ccoGda::putValue", "ccoGda::signal", "ccoGda::get", "ccoGdaBarrierSession::sync"}

// name is the operation's API name: NCCL's for GIN, MORI's for ccoGda.
func (o *ginOp) name() string {
	if o.gda {
		return gdaOpNames[o.kind]
	}
	return ginOpNames[o.kind]
}

// ginOp is one GIN operation in flight.
type ginOp struct {
	kind     ginOpKind
	rank     int // issuing rank
	peer     int // world rank of the other side
	ctx      int
	who      string // the issuing lane
	dstOff   uint64 // big-VA offset at the destination (the issuer for a get)
	srcOff   uint64 // big-VA offset at the source (the peer for a get)
	bytes    uint64
	value    []byte // putValue's payload
	ra       RemoteAction
	la       LocalAction
	strong   bool
	g        *ginRank // issuer's dev comm state
	pg       *ginRank // peer's dev comm state (its signals)
	conn     *ginConn
	consumed bool // source read (put) or data landed (get)
	settled  bool // data landed at the destination
	signaled bool
	data     []byte
	msg      *nic.Message
	sdmaEnd  uint64 // GIN over SDMA: the ring offset after the operation's packets

	race *race.Thread // nil when the detector is off
	// raceRd is, over SDMA, the thread of the COPY's source reads: the
	// packet reads and writes at once, and local completion (counter,
	// flush) must publish the reads without the writes
	raceRd *race.Thread
	// ccoGda (gda.go): the operation was posted by MORI's API, and when
	// its completion (CQE) has arrived
	gda bool
	cqe bool

	rinfoRead  *race.Info
	rinfoWrite *race.Info
	sentSync   race.Sync
	doneSync   race.Sync
}

func (o *ginOp) describe() string {
	switch o.kind {
	case ginGet:
		return fmt.Sprintf("%s of %d B from rank %d by %s", o.name(), o.bytes, o.peer, o.who)
	case ginSignalOp, ginBarrier:
		return fmt.Sprintf("%s to rank %d by %s", o.name(), o.peer, o.who)
	}
	return fmt.Sprintf("%s of %d B to rank %d by %s", o.name(), o.bytes, o.peer, o.who)
}

// ginSetup builds the network on the first GIN dev comm.
func (sys *System) ginSetup() *ginSys {
	if sys.gin != nil {
		return sys.gin
	}
	m := nic.DefaultModel()
	if sys.nicModel != nil {
		m = *sys.nicModel
	}
	chunk := uint64(0)
	if sys.phantom {
		chunk = 256 << 10 // nothing to copy: coarse packets, fewer events
	}
	n, err := nic.New(sys.s, m, len(sys.ranks), chunk, func(i int) string {
		return fmt.Sprintf("node %d NIC %d (rank %d)", i/sys.topo.LsaSize, i%sys.topo.LsaSize, i)
	})
	if err != nil {
		panic(err) // the model was checked in NewSystem
	}
	if sys.railsOnly {
		g := sys.topo.LsaSize
		n.SetUnreachable(func(src, dst int) bool { return src%g != dst%g },
			"a rail-only network, where NIC i of a node reaches only NIC i of the other nodes")
	}
	sys.gin = &ginSys{s: sys.s, net: n, conns: map[ginConnKey]*ginConn{}, tk: sys.s.TraceKind("gin.settle"), waits: map[*kernel.Wave]*ginWait{}}
	if sys.ginType == GinTypeAnvilSdma {
		sys.gin.sdma = newGinSdma(sys)
	}
	sys.s.AddDiagnoser(sim.LayerAPI, "gin", sys.gin.diagnose)
	return sys.gin
}

// Network returns the system's network of NICs, or nil before a dev comm
// with GIN contexts exists.
func (sys *System) Network() *nic.Network {
	if sys.gin == nil {
		return nil
	}
	return sys.gin.net
}

// ginCreate adds the GIN resources of reqs to dc: the signal array
// (signals, then the barrier slots) as a symmetric allocation, counters,
// and the rank's NIC.
func (c *Comm) ginCreate(dc *DevComm, reqs DevCommRequirements) error {
	const call = "ncclDevCommCreate"
	switch {
	case reqs.GinContextCount < 0 || reqs.GinSignalCount < 0 || reqs.GinCounterCount < 0 || reqs.GinBarrierCount < 0:
		return errf(InvalidArgument, call, "rank %d: negative GIN context, signal, counter or barrier count", c.Rank)
	case reqs.GinContextCount == 0 && (reqs.GinSignalCount > 0 || reqs.GinCounterCount > 0 || reqs.GinBarrierCount > 0):
		return errf(InvalidArgument, call, "rank %d: GIN signals, counters or barriers requested with ginContextCount 0", c.Rank)
	case reqs.GinContextCount == 0 && (reqs.GdaConnectionType != GdaConnectionNone || reqs.RailGdaBarrierCount > 0):
		return errf(InvalidArgument, call, "rank %d: gdaConnectionType %v or railGdaBarrierCount %d with ginContextCount 0: ccoGda's gdaContextCount is GinContextCount here", c.Rank, reqs.GdaConnectionType, reqs.RailGdaBarrierCount)
	case reqs.GinContextCount == 0:
		return nil
	case reqs.GinContextCount > MaxGinContexts:
		return errf(InvalidArgument, call, "rank %d: ginContextCount %d above the %d contexts a NIC offers here", c.Rank, reqs.GinContextCount, MaxGinContexts)
	case reqs.GinConnectionType > GinConnectionRail:
		return errf(InvalidArgument, call, "rank %d: unknown GIN connection type %d", c.Rank, reqs.GinConnectionType)
	case reqs.GdaConnectionType > GdaConnectionRail:
		return errf(InvalidArgument, call, "rank %d: unknown gdaConnectionType %d", c.Rank, reqs.GdaConnectionType)
	case reqs.RailGdaBarrierCount < 0:
		return errf(InvalidArgument, call, "rank %d: railGdaBarrierCount %d is negative", c.Rank, reqs.RailGdaBarrierCount)
	}
	sys := c.sys
	sys.ginSetup()
	nSlots := reqs.GinSignalCount + reqs.GinBarrierCount*c.NRanks
	// MORI sizes the rail barriers for the rail team (nNodes slots each)
	// and enables them only with GDA QPs and more than one node.
	nNodes := c.NRanks / sys.topo.LsaSize
	railBars := 0
	if reqs.GdaConnectionType != GdaConnectionNone && nNodes > 1 {
		railBars = reqs.RailGdaBarrierCount
	}
	gdaBar := GdaBarrierHandle{Signal0: uint32(nSlots), NBarriers: railBars}
	nSlots += railBars * nNodes
	g := &ginRank{sys: sys, rank: c.Rank, nCtx: reqs.GinContextCount, strong: reqs.GinStrongSignalsRequired, conn: reqs.GinConnectionType,
		nSig: reqs.GinSignalCount, nBar: reqs.GinBarrierCount, barSize: c.NRanks, mode: make([]uint8, nSlots),
		counter: make([]uint64, reqs.GinCounterCount), ctrSync: make([]race.Sync, reqs.GinCounterCount),
		cwl: sys.s.NewWatchList(fmt.Sprintf("rank %d GIN counters", c.Rank)), fwl: sys.s.NewWatchList(fmt.Sprintf("rank %d GIN flushes", c.Rank)), pending: map[ginThreadKey][]*ginOp{},
		epochs: make([]uint64, reqs.GinBarrierCount), lastSig: make([]*ginOp, nSlots), lastSigAt: make([]sim.Time, nSlots), gdaConn: reqs.GdaConnectionType, gdaBar: gdaBar, shadow: make([]uint64, nSlots)}
	if nSlots > 0 {
		off, err := c.symAlloc(call, uint64(nSlots)*8, fmt.Sprintf("dev comm %d GIN signals", c.devs), false)
		if err != nil {
			return err
		}
		g.sigOff = off
	}
	dc.GinContextCount = reqs.GinContextCount
	dc.GinSignalCount = reqs.GinSignalCount
	dc.GinCounterCount = reqs.GinCounterCount
	dc.GinBarrier = GinBarrierHandle{First: reqs.GinSignalCount, NBarriers: reqs.GinBarrierCount}
	dc.GdaConnType = reqs.GdaConnectionType
	dc.RailGdaBarrier = gdaBar
	dc.gin = g
	return nil
}

// MaxGinContexts bounds ginContextCount (NCCL's GIN plugins offer a few per
// NIC; the emulator's QPs are cheap, the bound only catches nonsense).
const MaxGinContexts = 64

func (g *ginRank) slotOff(s int) uint64 { return g.sigOff + uint64(s)*8 }

func (g *ginRank) load(s int) uint64 {
	b := g.sys.ranks[g.rank].bytes(g.slotOff(s), 8)
	return binary.LittleEndian.Uint64(b)
}

func (g *ginRank) store(s int, v uint64) {
	off := g.slotOff(s)
	binary.LittleEndian.PutUint64(g.sys.ranks[g.rank].bytes(off, 8), v)
	g.sys.ranks[g.rank].wl.Notify(off, off+8)
}

// ginReached is GIN's rolling compare at a width of bits: v has met
// least when v − least, taken modulo 2^bits, is below 2^(bits−1).
func ginReached(v, least uint64, bits int) bool {
	if bits >= 64 {
		return v-least < 1<<63
	}
	mask := uint64(1)<<bits - 1
	return (v-least)&mask < 1<<(bits-1)
}

// conn returns the connection of context ctx from rank src to rank dst.
func (gs *ginSys) connOf(src, dst, ctx int) *ginConn {
	k := ginConnKey{src, dst, ctx}
	c := gs.conns[k]
	if c == nil {
		qp, err := gs.net.NewQP(src, dst, fmt.Sprintf("QP ctx %d rank %d → rank %d", ctx, src, dst))
		if err != nil {
			panic(err) // ranks were checked by the caller
		}
		c = &ginConn{key: k, qp: qp, subj: gs.s.TraceSubject(qp.Name())}
		gs.conns[k] = c
	}
	return c
}
