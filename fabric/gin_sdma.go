package fabric

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/ring"
)

// GIN over emulated SDMA: RCCL's Anvil backend (NCCL_GIN_TYPE=7). For a
// peer in the rank's node, each GIN operation is lowered to real SDMA
// packets on the queue of its connection (GPU → peer, queue ctx mod
// QueuesPerPeer) of one engine.Node per node, whose flat address space
// maps the fabric ranks' allocations (the same bytes): a put is a
// COPY_LINEAR (the fused COPY_LINEAR_WAIT_SIGNAL with the signal in its
// signal block where the architecture lowers onto it), putValue a
// WRITE_LINEAR, a signal an ATOMIC ADD64 on the peer's slot, a get a
// COPY_LINEAR from the peer. The queue runs its packets in order, so in
// release runs a weak signal does order the earlier puts of its queue;
// the race detector does not take that for granted (each operation is a
// detector thread of its own and gets only GIN's documented edges, as on
// the NIC backend).

// NCCL_GIN_TYPE values (RCCL 2.31: "rocSHMEM GDA moved from 5 to 6 and
// Anvil SDMA from 6 to 7 because NCCL 2.31 placed EFA GDA at 5. The IB
// proxy remains NCCL_GIN_TYPE=2").
const (
	GinTypeIBProxy   = 2
	GinTypeGDA       = 6
	GinTypeAnvilSdma = 7
)

// ginTypeOf reads NCCL_GIN_TYPE: 0 when unset (RCCL's default, the proxy
// over the network: the NIC model here).
func ginTypeOf(env map[string]string) (int, error) {
	v, ok := env["NCCL_GIN_TYPE"]
	if !ok || strings.TrimSpace(v) == "" {
		return 0, nil
	}
	t, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || t < 1 || t > GinTypeAnvilSdma {
		return 0, fmt.Errorf("fabric: NCCL_GIN_TYPE=%q: want an integer in [1, 7]; 7 (Anvil SDMA) lowers intra-node GIN onto SDMA queues, the others run over the NIC model", v)
	}
	return t, nil
}

// GinType is the system's NCCL_GIN_TYPE (0 when unset).
func (sys *System) GinType() int { return sys.ginType }

// ginSdma is the SDMA side of the system's GIN, made with the first GIN
// dev comm when NCCL_GIN_TYPE=7.
type ginSdma struct {
	sys    *System
	model  model.Model
	fused  bool // the put's signal rides in COPY_LINEAR_WAIT_SIGNAL
	dial   ring.Dialect
	nodes  []*engine.Node // by node index, made on first use
	mapped []int          // per rank: allocations mapped into its node
	queues map[*engine.Queue]*sdmaQueue
}

func newGinSdma(sys *System) *ginSdma {
	m := sys.sdmaModel
	if m == nil {
		m = model.Default()
	}
	a := model.ArchOf(m)
	nNodes := len(sys.ranks) / sys.topo.LsaSize
	return &ginSdma{sys: sys, model: m, fused: a.Fused && a.LowerFused, dial: a.Dialect,
		nodes: make([]*engine.Node, nNodes), mapped: make([]int, len(sys.ranks)), queues: map[*engine.Queue]*sdmaQueue{}}
}

// sdmaFor reports whether o goes over SDMA: the backend is on, o is
// ncclGin's (ccoGda stays on its NICs) and the peer is in o's node.
func (sys *System) sdmaFor(o *ginOp) bool {
	return sys.gin != nil && sys.gin.sdma != nil && !o.gda && o.rank/sys.topo.LsaSize == o.peer/sys.topo.LsaSize
}

// SdmaNodes returns the SDMA nodes of the GIN backend (nil entries for nodes
// no operation used yet), or nil when NCCL_GIN_TYPE is not 7.
func (sys *System) SdmaNodes() []*engine.Node {
	if sys.gin == nil || sys.gin.sdma == nil {
		return nil
	}
	return sys.gin.sdma.nodes
}

func (sd *ginSdma) node(i int) *engine.Node {
	if sd.nodes[i] == nil {
		sys := sd.sys
		n, err := engine.NewNode(sys.s, engine.Config{GPUs: sys.topo.LsaSize, Stride: sys.memCap, Model: sd.model, Inject: sys.sdmaInj})
		if err != nil {
			panic(err) // the model was checked in NewSystem
		}
		base := i * sys.topo.LsaSize
		sp := n.Memory().Space
		n.Memory().SetOnNotify(func(addr, size uint64) {
			g := sp.GPUOf(addr)
			if g < 0 {
				return
			}
			off := addr - sp.SliceBase(g)
			sys.ranks[base+g].wl.Notify(off, off+size)
		})
		sd.nodes[i] = n
	}
	return sd.nodes[i]
}

// addr maps rank r's offset off to its node's flat address, mapping the
// rank's allocations made since the last call.
func (sd *ginSdma) addr(r int, off uint64) uint64 {
	sys := sd.sys
	n := sd.node(r / sys.topo.LsaSize)
	g := r % sys.topo.LsaSize
	sp := n.Memory().Space
	rs := sys.ranks[r]
	for ; sd.mapped[r] < len(rs.mem); sd.mapped[r]++ {
		b := rs.mem[sd.mapped[r]]
		rounded := (b.n + lsa.PageSize - 1) / lsa.PageSize * lsa.PageSize
		data := b.data
		if data != nil {
			data = data[:rounded] // allocated with the page-rounded capacity (rankState.alloc)
		}
		if _, err := sp.AllocAt(sp.SliceBase(g)+b.off, rounded, fmt.Sprintf("rank %d allocation at %#x", r, b.off), func(_, _ uint64) ([]byte, error) { return data, nil }); err != nil {
			panic(err) // allocations are page-aligned and disjoint
		}
	}
	return sp.SliceBase(g) + off
}

// sdmaQueue is the client of one SDMA queue that GIN posts to.
type sdmaQueue struct {
	sd   *ginSdma
	q    *engine.Queue
	node int
	pkts map[uint64]*sdmaPkt // ring offset → what the packet does for its operation
}

type sdmaPkt struct {
	o    *ginOp
	data bool // moves the operation's data (COPY, WRITE)
	sig  bool // applies its signal (ATOMIC, or the fused packet's signal block)
	last bool // the operation's last packet
}

// queue returns the SDMA queue of o's connection (issuer → peer).
func (sd *ginSdma) queue(o *ginOp) (*sdmaQueue, error) {
	sys := sd.sys
	ni := o.rank / sys.topo.LsaSize
	n := sd.node(ni)
	q, err := n.Queue(o.rank%sys.topo.LsaSize, o.peer%sys.topo.LsaSize, o.ctx%n.Config().QueuesPerPeer)
	if err != nil {
		return nil, fmt.Errorf("GIN over SDMA: context %d from rank %d to rank %d: %w", o.ctx, o.rank, o.peer, err)
	}
	sq := sd.queues[q]
	if sq == nil {
		sq = &sdmaQueue{sd: sd, q: q, node: ni, pkts: map[uint64]*sdmaPkt{}}
		q.SetClient(sq)
		sd.queues[q] = sq
	}
	return sq, nil
}

// sdmaConnOf is connOf for an SDMA connection: no QP, the queue instead.
func (gs *ginSys) sdmaConnOf(o *ginOp) (*ginConn, error) {
	k := ginConnKey{o.rank, o.peer, o.ctx}
	c := gs.conns[k]
	if c == nil {
		sq, err := gs.sdma.queue(o)
		if err != nil {
			return nil, err
		}
		c = &ginConn{key: k, sq: sq, subj: gs.s.TraceSubject(fmt.Sprintf("GIN ctx %d rank %d → rank %d on %v", o.ctx, o.rank, o.peer, sq.q.ID()))}
		gs.conns[k] = c
	}
	return c, nil
}

// ginSdmaCheck refuses what the SDMA lowering cannot carry.
func (sys *System) ginSdmaCheck(o *ginOp) error {
	if o.kind == ginPutValue && (o.bytes < 4 || o.dstOff%4 != 0) {
		return fmt.Errorf("a %d-byte putValue at offset %#x: the SDMA backend writes putValue with WRITE_LINEAR, whole dwords, so it takes 4- or 8-byte values at 4-byte aligned offsets (the 1- and 2-byte forms are not modelled on SDMA)", o.bytes, o.dstOff)
	}
	return nil
}

// ginPostSdma lowers o onto its queue's packets and rings them: the
// issuing lane reserves, writes and submits as MORI's issuer does.
func (sys *System) ginPostSdma(t *kernel.Thread, o *ginOp) {
	gs := sys.gin
	sd := gs.sdma
	sys.ginRaceStart(t, o)
	if o.race != nil && (o.kind == ginPut || o.kind == ginPutValue) { // local completion publishes no write; a get's flush must publish its writes, so a get keeps one thread
		d := sys.s.Race()
		o.raceRd = d.NewThread(fmt.Sprintf("rank %d SDMA: %s reads", o.rank, o.name()))
		d.Fork(t.RaceThread(), o.raceRd)
	}
	c, err := gs.sdmaConnOf(o)
	if err != nil {
		sys.s.Fail(err)
		return
	}
	o.conn = c
	if o.kind != ginGet {
		o.conn.open = append(o.conn.open, o)
	}
	sq := o.conn.sq
	var slot uint64
	hasSig := o.kind == ginBarrier || o.ra.kind != sigNone
	if hasSig {
		slot = sd.addr(o.peer, o.pg.slotOff(int(o.ra.Signal)))
	}
	var pkts []ring.Packet
	var roles []sdmaPkt
	add := func(p ring.Packet, data, sig bool) {
		pkts = append(pkts, p)
		roles = append(roles, sdmaPkt{o: o, data: data, sig: sig})
	}
	switch o.kind {
	case ginPut, ginGet:
		src, dst := sd.addr(o.rank, o.srcOff), sd.addr(o.peer, o.dstOff)
		if o.kind == ginGet {
			src, dst = sd.addr(o.peer, o.srcOff), sd.addr(o.rank, o.dstOff)
		}
		for lo := uint64(0); lo < o.bytes; lo += ring.MaxCopyBytes {
			n := min(o.bytes-lo, ring.MaxCopyBytes)
			if hasSig && lo+n == o.bytes && sd.fused {
				add(ring.CopyWaitSignal(sd.dial, dst+lo, src+lo, n, nil, &ring.SignalBlock{Op: ring.AtomicOpAdd64, Addr: slot, Data: o.ra.Value}), lo+n == o.bytes, true)
				hasSig = false
				continue
			}
			add(ring.Copy(dst+lo, src+lo, n), lo+n == o.bytes, false)
		}
	case ginPutValue:
		v := make([]byte, 8)
		copy(v, o.value)
		dw := []uint32{binary.LittleEndian.Uint32(v)}
		if o.bytes == 8 {
			dw = append(dw, binary.LittleEndian.Uint32(v[4:]))
		}
		add(ring.WriteLinear(sd.addr(o.peer, o.dstOff), dw), true, false)
	}
	if hasSig {
		add(ring.AtomicAdd64(slot, o.ra.Value), len(pkts) == 0, true)
	}
	if len(pkts) == 0 { // a zero-byte put or get without a signal: nothing to move
		sys.sdmaData(o)
		sys.sdmaLast(o)
		return
	}
	roles[len(roles)-1].last = true
	units := make([]uint64, len(pkts))
	total := uint64(0)
	for i := range pkts {
		units[i] = (uint64(pkts[i].Size()) + ring.Unit - 1) / ring.Unit
		total += units[i] * ring.Unit
	}
	a := t.Wave().Actor()
	q := sq.q
	base, err := q.Reserve(a, total)
	if err != nil {
		sys.s.Fail(fmt.Errorf("GIN over SDMA: %s: %w", o.describe(), err))
		return
	}
	at := base
	for i := range pkts {
		if err := q.WritePacket(at, int(units[i]), &pkts[i]); err != nil {
			sys.s.Fail(fmt.Errorf("GIN over SDMA: %s: %w", o.describe(), err))
			return
		}
		q.Posted(at, t)
		r := roles[i]
		sq.pkts[at] = &r
		at += units[i] * ring.Unit
	}
	o.sdmaEnd = base + total
	if err := q.Submit(a, base, base+total); err != nil {
		sys.s.Fail(fmt.Errorf("GIN over SDMA: %s: %w", o.describe(), err))
	}
}

// Retired is engine.Client: the packet at pos did its part of its
// operation.
func (sq *sdmaQueue) Retired(pos uint64) {
	p := sq.pkts[pos]
	if p == nil {
		return // padding or another producer's packet
	}
	delete(sq.pkts, pos)
	sys := sq.sd.sys
	if p.data {
		sys.sdmaData(p.o)
	}
	if p.sig {
		sys.sdmaSignaled(p.o)
	}
	if p.last {
		sys.sdmaLast(p.o)
	}
}

// RaceThread is engine.Client: the operation's own detector thread.
func (sq *sdmaQueue) RaceThread(pos uint64) *race.Thread {
	if p := sq.pkts[pos]; p != nil {
		return p.o.race
	}
	return nil
}

// RaceReader is engine.Client: a COPY's source reads run on their own
// thread, which local completion publishes.
func (sq *sdmaQueue) RaceReader(pos uint64) *race.Thread {
	if p := sq.pkts[pos]; p != nil {
		return p.o.raceRd
	}
	return nil
}

// RaceSignal is engine.Client: a strong signal first acquires the
// settlement of every earlier operation of its connection (GIN's rule,
// the edge the NIC backend gives too); a weak one acquires nothing.
func (sq *sdmaQueue) RaceSignal(pos uint64) {
	p := sq.pkts[pos]
	if p == nil || p.o.race == nil || !p.o.strong {
		return
	}
	p.o.race.Acquire(&p.o.conn.prefix)
}

// RaceAddr is engine.Client: the node's flat address as the fabric rank
// memory the lanes' accesses are tracked in.
func (sq *sdmaQueue) RaceAddr(d *race.Detector, addr uint64) (race.SpaceID, uint64) {
	sys := sq.sd.sys
	sp := sq.sd.nodes[sq.node].Memory().Space
	g := sp.GPUOf(addr)
	return sys.rankSpace(d, sq.node*sys.topo.LsaSize+g), addr - sp.SliceBase(g)
}

// RaceInfo is engine.Client: the packet's accesses are its GIN
// operation's (OpGin, or OpGinSignal for a signal's ATOMIC), so a report
// names the operation and gives GIN's advice; the packet stays named.
func (sq *sdmaQueue) RaceInfo(pos uint64, in *race.Info) {
	p := sq.pkts[pos]
	if p == nil || p.o.rinfoWrite == nil {
		return
	}
	o := p.o
	in.OpKind = race.OpGin
	in.Who = o.rinfoWrite.Who
	switch {
	case strings.Contains(in.Op, "source read"):
		in.Op = fmt.Sprintf("%s source read (%s on %v)", o.name(), in.Op, sq.q.ID())
	case p.sig && !p.data:
		in.OpKind = race.OpGinSignal
		in.Op = fmt.Sprintf("%s (%s on %v)", o.ra.name(), in.Op, sq.q.ID())
	default:
		in.Op = fmt.Sprintf("%s write (%s on %v)", o.name(), in.Op, sq.q.ID())
	}
}

// sdmaData: o's data packet retired: its source has been read and its
// data landed (one packet does both), so it is consumed and settled.
func (sys *System) sdmaData(o *ginOp) {
	o.settled = true
	sys.s.Trace(sys.gin.tk, o.conn.subj, uint64(o.kind), o.dstOff, o.bytes)
	if o.race != nil {
		o.race.Release(&o.doneSync)
	}
	if o.kind == ginGet {
		sys.ginConsumed(o)
		return
	}
	sys.ginConsumed(o)
	if o.race != nil {
		o.race.Release(&o.conn.prefix) // for the strong signals after it
	}
}

// sdmaSignaled: the engine applied o's signal (the ATOMIC, or the fused
// packet's signal block): the Inc/Add bookkeeping of ginSignal.
func (sys *System) sdmaSignaled(o *ginOp) {
	if !sys.ginSignalMode(o) {
		return
	}
	o.signaled = true
	if o.kind != ginPut && o.kind != ginPutValue { // a signal-only op consumes nothing
		if !o.settled {
			sys.sdmaData(o)
		}
	}
}

// sdmaLast: o's last packet retired: it leaves its connection's open list.
func (sys *System) sdmaLast(o *ginOp) {
	if !o.settled {
		sys.sdmaData(o)
	}
	c := o.conn
	for i, h := range c.open {
		if h == o {
			c.open = append(c.open[:i], c.open[i+1:]...)
			break
		}
	}
}

// sdmaWhere names the queue and engine an SDMA operation waits on, with
// the queue's state and read pointer against the operation's end.
func (o *ginOp) sdmaWhere() string {
	q := o.conn.sq.q
	return fmt.Sprintf("on %v (engine %v, %s; rptr %#x, the operation's packets end at %#x)", q.ID(), q.Engine(), q.State(), q.Rptr(), o.sdmaEnd)
}

// where names where o is for a hang report: its NIC and QP, or its SDMA
// queue and engine.
func (o *ginOp) where() string {
	if o.conn != nil && o.conn.sq != nil {
		return o.sdmaWhere()
	}
	l, n := o.msg.Landed()
	qp := o.msg.QP()
	return fmt.Sprintf("on %s (%s → %s, %d/%d packets landed)", qp.Name(), qp.Src().Name(), qp.Dst().Name(), l, n)
}
