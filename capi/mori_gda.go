//go:build cgo

package main

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/mlx5"
	"github.com/emud-dev/emud/nic"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// MORI's ccoGda over emud's NIC (capi/doc.go, "MORI's ccoGda in C++"):
// ccoDevCommCreate with CCO_GDA_CONNECTION_FULL makes, for every peer and
// context, an mlx5 queue pair in the rank's GPU memory (send queue,
// doorbell record, UAR word, collapsed CQ, atomic buffer) and a signal
// block (signals, shadows, counters); MORI's device code writes WQEs and
// rings; package mlx5 is the NIC that takes them, over package nic's
// network, into the peer's memory.

// gdaMR is a memory region registered iova-0: a key names size bytes at
// base of GPU gpu; a WQE's address is an offset into it.
type gdaMR struct {
	gpu        int
	base, size uint64
	what       string
	va         bool // addressed by device address, not offset (MORI's atomic buffers: ibv_reg_mr)
}

// gdaReg names one rank's registration on a comm: the comm, how many
// GDA-visible registrations (windows, dev comms' signal blocks) its rank
// made before it, and the rank. Every rank makes the same collective
// calls in the same order (barrierAll checks it), so (uid, seq) is one
// window or dev comm across the ranks, and a rank finds a peer's key of it.
type gdaReg struct {
	uid  cco.UniqueId
	seq  int
	rank int
}

// gdaWin is a window's registration and its comm's ranks.
type gdaWin struct {
	reg    gdaReg
	nranks int
}

// gdaQP is one queue pair's memory and its NIC side.
type gdaQP struct {
	q                                  *mlx5.QP
	sq, cq, dbr, cqDbr, uar, ibuf, qpn uint64
	ibufKey                            uint32
	last                               uint64       // the UAR value seen last
	bell                               *race.Thread // the race detector's snapshot of the doorbell's storer
	wh                                 sim.WatchHandle
	dead                               bool
}

// gdaComm is one rank's GDA resources of one dev comm.
type gdaComm struct {
	c          *cco.Comm
	reg        gdaReg
	nctx       int
	nsig, nctr int
	sig        uint64 // signals, then shadows, then counters
	sigKey     uint32
	qps        map[[2]int]*gdaQP // by (peer, context)
}

// gdaTable is the GDA state of one emulation (seedReset makes it anew).
type gdaTable struct {
	mrs   map[uint32]gdaMR
	next  uint32
	seqs  map[cco.UniqueId]map[int]int
	keys  map[gdaReg]uint32
	wins  map[uint64]gdaWin // emud's window object -> its registration
	comms map[uint64]*gdaComm
	net   *nic.Network
	qpn   uint32
}

func newGdaTable() gdaTable {
	return gdaTable{mrs: map[uint32]gdaMR{}, next: 0x4d00, seqs: map[cco.UniqueId]map[int]int{}, keys: map[gdaReg]uint32{},
		wins: map[uint64]gdaWin{}, comms: map[uint64]*gdaComm{}, qpn: 0x100}
}

var gdaState = newGdaTable()

// gdaDefaultDepth is a send queue's WQEs when the requirements leave it
// to the provider: MORI's mlx5 endpoints take maxMsgsNum 4096.
const gdaDefaultDepth = 4096

// gdaRegister registers [base, base+size) of rank c.Rank's GPU under a new
// key as its next registration on comm uid.
func gdaRegister(c *cco.Comm, uid cco.UniqueId, base, size uint64, what string) gdaReg {
	s := gdaState.seqs[uid]
	if s == nil {
		s = map[int]int{}
		gdaState.seqs[uid] = s
	}
	r := gdaReg{uid: uid, seq: s[c.Rank], rank: c.Rank}
	s[c.Rank]++
	k := gdaState.next
	gdaState.next++
	gdaState.mrs[k] = gdaMR{gpu: rt.mem.GPUOf(base), base: base, size: size, what: what}
	gdaState.keys[r] = k
	return r
}

// gdaKeyOf is rank's key of registration r (its peer's, the same window).
func gdaKeyOf(r gdaReg, rank int) (uint32, error) {
	r.rank = rank
	k, ok := gdaState.keys[r]
	if !ok {
		return 0, fmt.Errorf("rank %d has not registered the window or dev comm that is registration %d of this comm", rank, r.seq)
	}
	return k, nil
}

// gdaResolve is mlx5.Keys: the device address of n bytes at offset off of
// the region key names, which must be on GPU gpu.
func gdaResolve(key uint32, gpu int, off, n uint64) (uint64, error) {
	mr, ok := gdaState.mrs[key]
	if ok && mr.va {
		if off < mr.base {
			return 0, fmt.Errorf("%#x is below %s at %#x (key %#x)", off, mr.what, mr.base, key)
		}
		off -= mr.base
	}
	switch {
	case !ok:
		return 0, fmt.Errorf("no memory region has key %#x", key)
	case mr.gpu != gpu:
		return 0, fmt.Errorf("key %#x is %s on GPU %d, not GPU %d", key, mr.what, mr.gpu, gpu)
	case off > mr.size || n > mr.size-off:
		return 0, fmt.Errorf("[%#x, %#x) is past %s's %d bytes (key %#x)", off, off+n, mr.what, mr.size, key)
	}
	return mr.base + off, nil
}

// gdaNet is the network of the GDA queue pairs: one NIC per GPU.
func gdaNet() (*nic.Network, error) {
	if gdaState.net == nil {
		n, err := nic.New(rt.s, nic.DefaultModel(), rt.j.Node.GPUs(), 0, func(i int) string { return fmt.Sprintf("NIC of GPU %d", i) })
		if err != nil {
			return nil, err
		}
		gdaState.net = n
	}
	return gdaState.net, nil
}

// gdaReqs is what ccoDevCommCreate passes for GDA.
type gdaReqs struct {
	conn                   int // 1: FULL (the only type with peers on one node)
	signals, counters, ctx int
	depth                  int
}

// gdaCreate makes rank c.Rank's GDA resources of dev comm hd (before the
// dev comm's collective barrier: every rank's keys exist after it).
func gdaCreate(c *cco.Comm, uid cco.UniqueId, hd uint64, r gdaReqs) error {
	if r.conn == 0 || c.NRanks < 2 {
		return nil // NONE, or FULL with no peer: MORI collapses it to NONE
	}
	switch {
	case r.signals < 0 || r.counters < 0 || r.ctx < 0 || r.depth < 0:
		return fmt.Errorf("negative GDA requirement (gdaSignalCount %d, gdaCounterCount %d, gdaContextCount %d, gdaQueueDepth %d)", r.signals, r.counters, r.ctx, r.depth)
	case r.ctx == 0:
		r.ctx = 4 // MORI's comm default when the requirements leave it 0
	}
	depth := uint32(gdaDefaultDepth)
	if r.depth > 0 {
		depth = 1
		for depth < uint32(r.depth) {
			depth <<= 1
		}
		if depth > 1<<15 {
			return fmt.Errorf("gdaQueueDepth %d: emud's mlx5 send queues hold at most 32768 WQEs", r.depth)
		}
	}
	net, err := gdaNet()
	if err != nil {
		return err
	}
	g := c.LsaRank
	gc := &gdaComm{c: c, nctx: r.ctx, nsig: r.signals, nctr: r.counters, qps: map[[2]int]*gdaQP{}}
	size := uint64(2*r.signals+r.counters) * 8
	if gc.sig, err = rt.mem.Alloc(g, max(size, 8), fmt.Sprintf("rank %d's GDA signals and counters", c.Rank)); err != nil {
		return err
	}
	gc.reg = gdaRegister(c, uid, gc.sig, size, fmt.Sprintf("rank %d's GDA signal pool", c.Rank))
	gc.sigKey = gdaState.keys[gc.reg]
	for p := 0; p < c.NRanks; p++ {
		if p == c.Rank {
			continue
		}
		for x := 0; x < r.ctx; x++ {
			q, err := gdaNewQP(c, net, p, x, depth)
			if err != nil {
				return err
			}
			gc.qps[[2]int{p, x}] = q
		}
	}
	gdaState.comms[hd] = gc
	return nil
}

// QP memory: the send queue, then the CQ's one entry, the doorbell
// record, the CQ's record, the UAR word and the atomic buffer.
const (
	gdaCQOff    = 0
	gdaDbrOff   = 64
	gdaCqDbrOff = 72
	gdaUAROff   = 80
	gdaIbufOff  = 128
	gdaTail     = 192
)

func gdaNewQP(c *cco.Comm, net *nic.Network, peer, ctx int, depth uint32) (*gdaQP, error) {
	g := c.LsaRank
	pg := peer % c.LsaSize // the peer's GPU: ranks are node-major, one node
	name := fmt.Sprintf("rank %d -> rank %d context %d", c.Rank, peer, ctx)
	sqBytes := uint64(depth) * mlx5.BB
	base, err := rt.mem.Alloc(g, sqBytes+gdaTail, "GDA queue pair "+name)
	if err != nil {
		return nil, err
	}
	t := base + sqBytes
	// MORI fills its CQ with 0xff: an untouched entry reads "nothing
	// completed" (wqe_counter 0xffff), not "WQE 0 done".
	if err := rt.mem.Fill(t+gdaCQOff, mlx5.CQESize, 0xff); err != nil {
		return nil, err
	}
	link, err := net.NewQP(g, pg, name)
	if err != nil {
		return nil, err
	}
	back, err := net.NewQP(pg, g, name+" (read responses)")
	if err != nil {
		return nil, err
	}
	gdaState.qpn++
	q := &gdaQP{sq: base, cq: t + gdaCQOff, dbr: t + gdaDbrOff, cqDbr: t + gdaCqDbrOff, uar: t + gdaUAROff, ibuf: t + gdaIbufOff, qpn: uint64(gdaState.qpn)}
	q.ibufKey = gdaState.next
	gdaState.next++
	gdaState.mrs[q.ibufKey] = gdaMR{gpu: g, base: q.ibuf, size: 64, what: "the atomic buffer of QP " + name, va: true}
	cfg := mlx5.Config{Name: name, QPN: gdaState.qpn, GPU: g, Peer: pg, SQ: base, WQEs: depth, DBRec: q.dbr,
		CQ: q.cq, CQEs: 1, Collapsed: true, Link: link, Back: back, Latency: net.Model().Latency, Mem: rt.mem, Keys: gdaResolve,
		Fail: func(err error) { rt.s.Fail(err) }, InOrder: net.Model().Ordering == nic.InOrder}
	if d := rt.s.Race(); d != nil {
		cfg.Race, cfg.Space = d, d.Space(rt.mem, "LSA memory")
	}
	q.q, err = mlx5.New(rt.s, cfg)
	if err != nil {
		return nil, err
	}
	q.watch()
	return q, nil
}

// watch waits for the next UAR store that changes the word: MORI rings
// with the last WQE's control qword, which names the WQE's index, so
// consecutive doorbells differ.
func (q *gdaQP) watch() {
	q.wh = rt.mem.Watch().Watch(q.uar, q.uar+8, func() bool {
		v, err := rt.mem.Load64(q.uar)
		rang := err == nil && v != q.last
		if d, t := rt.s.Race(), rt.s.RaceCurrent(); rang && d != nil && t != nil {
			// What the storer did so far, as it stores (it runs on).
			q.bell = d.NewThread(fmt.Sprintf("doorbell store of QP %#x", q.qpn))
			d.Fork(t, q.bell)
		}
		return rang
	}, func() {
		if q.dead {
			return
		}
		q.last, _ = rt.mem.Load64(q.uar)
		bell := q.bell
		q.bell = nil
		q.q.Doorbell(bell)
		q.watch()
	})
}

// gdaFree ends dev comm hd's queue pairs (ccoDevCommDestroy). Their memory
// stays allocated: partial, a program that makes and destroys GDA dev
// comms in a loop grows its GPUs' memory by their queues each round.
func gdaFree(hd uint64) {
	gc := gdaState.comms[hd]
	if gc == nil {
		return
	}
	for _, q := range gc.qps {
		q.dead = true
		q.wh.Cancel()
		q.q.Close()
	}
	delete(gdaState.comms, hd)
}

// gdaEndpointCall is EMUD_H_MORI_GDA_EP: a = dev comm handle, peer,
// context; it returns the send queue, doorbell record, UAR, CQ, CQ
// record, atomic buffer, its key, the QP number, the queue's WQEs and
// CQEs in a[0..9] (zero for this rank itself, which has no QP), then the
// peer's key of the signal pool, this rank's, the pool's base, the
// signal and counter counts, and the contexts in a[10..15]. A dev comm
// without GDA returns all zero.
func gdaEndpointCall(a []uint64) error {
	hd, peer, ctx := a[0], int(a[1]), int(a[2])
	clear(a)
	gc := gdaState.comms[hd]
	if gc == nil {
		return nil
	}
	if peer < 0 || peer >= gc.c.NRanks || ctx < 0 || ctx >= gc.nctx {
		return fmt.Errorf("GDA endpoint of peer %d context %d: the dev comm has %d ranks and %d contexts", peer, ctx, gc.c.NRanks, gc.nctx)
	}
	if q := gc.qps[[2]int{peer, ctx}]; q != nil {
		a[0], a[1], a[2], a[3], a[4], a[5] = q.sq, q.dbr, q.uar, q.cq, q.cqDbr, q.ibuf
		a[6], a[7], a[8], a[9] = uint64(q.ibufKey), q.qpn, uint64(q.q.Depth()), 1
	}
	pk, err := gdaKeyOf(gc.reg, peer)
	if err != nil {
		return err
	}
	a[10], a[11], a[12] = uint64(pk), uint64(gc.sigKey), gc.sig
	a[13], a[14], a[15] = uint64(gc.nsig), uint64(gc.nctr), uint64(gc.nctx)
	return nil
}

// gdaWindowKeyCall is EMUD_H_MORI_GDA_KEY: a = emud's window object, peer;
// it returns the peer's key of the window in a[2], this rank's in a[3] and
// the comm's ranks in a[4].
func gdaWindowKeyCall(a []uint64) error {
	w, ok := gdaState.wins[a[0]]
	if !ok {
		return fmt.Errorf("window %#x: not one ccoWindowRegister made", a[0])
	}
	if a[1] >= uint64(w.nranks) {
		return fmt.Errorf("window key of peer %d: the comm has %d ranks", a[1], w.nranks)
	}
	pk, err := gdaKeyOf(w.reg, int(a[1]))
	if err != nil {
		return err
	}
	a[2], a[3], a[4] = uint64(pk), uint64(gdaState.keys[w.reg]), uint64(w.nranks)
	return nil
}

// gdaDoneCall is EMUD_H_MORI_GDA_DONE: a = dev comm handle, the endpoints
// array's device address, an endpoint's size, doneIdx's offset in it.
// MORI's quiet reads a CQE with plain loads and then advances doneIdx
// with an atomic: the race detector takes the completion edge there.
func gdaDoneCall(a []uint64) error {
	gc := gdaState.comms[a[0]]
	if gc == nil {
		return nil
	}
	if a[2] == 0 || a[3]+4 > a[2] {
		return fmt.Errorf("endpoint size %d, doneIdx at %d: not a field of it", a[2], a[3])
	}
	for k, q := range gc.qps {
		q.q.AddDoneWord(a[1] + uint64(k[0]*gc.nctx+k[1])*a[2] + a[3])
	}
	return nil
}
