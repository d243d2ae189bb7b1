package gin

import (
	"fmt"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/nic"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// The planted GIN bugs of barriers and init, each with its fixed twin:
//
//   - gin-bcast-block-barrier: a broadcast from rank 0 over bcastBlocks
//     thread blocks whose barrier is per block (index = block) while only
//     block 0 of the root puts; each block of a receiver takes its
//     baseline of signal 0 after its own barrier and waits for
//     baseline + 1. Barrier k orders the receivers' block k only with the
//     root's block k, which puts nothing, so when a block k is late the
//     root's put has landed before the baseline is read and the block
//     waits for a second signal that never comes (twin gin-bcast: the
//     root's block k puts slice k with signal k, the block of the barrier
//     that orders it, and each receiver's block k takes its baseline
//     before that barrier).
//   - gin-barrier-alias: two rounds of puts spread over two GIN contexts,
//     each closed by a hand-rolled all-contexts barrier (a strong signal
//     on every context to every peer, then a wait for contexts × peers
//     arrivals) on one shared signal: the second barrier sees the first
//     one's counts, returns at once, and its round's data is copied
//     before it lands (twin gin-barrier-distinct: each barrier instance
//     on its own signal index).
//   - gin-init-unreachable: the ring all-gather of per-rank handles that
//     GIN runs at init (ncclGinIbAllGather), on a rail-only network where
//     a rank's ring neighbour (rank + 1, another rail of the same node)
//     has an unreachable NIC: the first put is lost and the neighbour
//     spins for ever in its first signal wait, which the hang report
//     names with the QP and NICs (twin gin-init-rail-ring: the ring runs
//     along the rail, the ranks of the same LSA rank on every node, the
//     peers a rail connection has, all reachable).

type bugProgram uint8

const (
	progBcastBlockBarrier bugProgram = iota // planted
	progBcastPerBlock                       // twin
	progBarrierAlias                        // planted
	progBarrierDistinct                     // twin
	progInitWorldRing                       // planted
	progInitRailRing                        // twin
)

// bcastBlocks is the broadcast's grid: four thread blocks per rank.
const bcastBlocks = 4

// barCtxs is the barrier programs' GIN context count.
const barCtxs = 2

func init() {
	reg := func(name, summary string, p bugProgram, planted *scenario.Planted) {
		scenario.Register(&scenario.Scenario{Name: name, Summary: summary, Fabric: true, Planted: planted,
			DefaultBytes: 64 << 10, Check: checkBug(p), Usage: usage,
			PerfModel: func(scenario.Options) string { return "fabric GIN + nic (" + nic.DefaultModel().Name + ")" },
			Run:       func(o scenario.Options) (*scenario.Outcome, error) { return runBug(name, o, p) }})
	}
	reg("gin-bcast", "broadcast from rank 0 over 4 thread blocks: the root's block k puts slice k with signal k after barrier k, each receiver's block k reads its baseline before barrier k", progBcastPerBlock, nil)
	reg("gin-bcast-block-barrier", "PLANTED BUG: gin-bcast with only the root's block 0 putting, while the barrier is per block and each block reads its baseline after it", progBcastBlockBarrier,
		&scenario.Planted{Fixed: "gin-bcast", Class: "a per-block GIN barrier while only block 0 puts: the root's put can land before a receiver block reads its baseline signal",
			Timing: true, Source: "ROCm/rocm-systems#11142 review (rccl-tests GIN broadcast): bar is per block index, only block 0 issues the puts", Ranks: 4, Bytes: 16 << 10})
	reg("gin-barrier-distinct", "two rounds of puts over two GIN contexts, each closed by an all-contexts barrier on its own signal index", progBarrierDistinct, nil)
	reg("gin-barrier-alias", "PLANTED BUG: gin-barrier-distinct with both barrier instances on one signal, so the second sees the first one's counts", progBarrierAlias,
		&scenario.Planted{Fixed: "gin-barrier-distinct", Class: "a second all-contexts GIN barrier in one kernel seeing the first one's counts on a shared signal slot",
			Source: "ROCm/rocm-systems#11569 and #11021: Anvil SDMA shares one signal array across logical contexts, so a second ncclGinAllContexts barrier can complete on a stale count", Ranks: 4, Bytes: 16 << 10})
	reg("gin-init-rail-ring", "GIN init's ring all-gather of per-rank handles along the rail (rank + lsa-size) on a rail-only network", progInitRailRing, nil)
	reg("gin-init-unreachable", "PLANTED BUG: GIN init's ring all-gather over the world ring (rank + 1) on a rail-only network: the neighbour's NIC is unreachable and the wait spins for ever", progInitWorldRing,
		&scenario.Planted{Fixed: "gin-init-rail-ring", Faults: "rail-only network (cross-rail NICs unreachable)", Class: "GIN init spinning for ever when a ring neighbour's NIC is unreachable",
			Source: "NVIDIA/nccl#2318 and #2203: ncclGinIbAllGather spins forever if the RDMA fabric between ring neighbours is disconnected (NICs on disjoint rails)", Ranks: 4, Bytes: 8, LsaSize: 2})
}

func checkBug(p bugProgram) func(scenario.Options) error {
	return func(o scenario.Options) error {
		if err := check(o); err != nil {
			return err
		}
		if p == progBarrierAlias || p == progBarrierDistinct {
			if o.Bytes%16 != 0 {
				return fmt.Errorf("invalid --bytes %s: need a multiple of 16 (two rounds of 8-byte-aligned halves)", scenario.FormatBytes(o.Bytes))
			}
		}
		return nil
	}
}

// bugRig is a planted program's system: windows send, recv and out of
// n × bytes each, one dev comm per rank.
type bugRig struct {
	s               *sim.Sim
	sys             *fabric.System
	dcs             []fabric.DevComm
	send, recv, out []fabric.Window
	n               int
	b               uint64
	g               int // ranks per node
}

func buildBug(o scenario.Options, p bugProgram) (*bugRig, error) {
	topo, err := o.Topology().Normalize()
	if err != nil {
		return nil, err
	}
	m := nic.DefaultModel()
	s := sim.New(sim.Config{Seed: o.Seed, Perturb: o.Perturb, Strategy: o.Strategy, PCT: o.PCT, Stop: o.Stop})
	sys, err := fabric.NewSystem(s, fabric.Config{Topology: o.Topology(), Env: map[string]string{}, Debug: o.Debug, Race: o.Race,
		Phantom: o.Phantom, Nic: &m, MemBytes: 3*uint64(o.Ranks)*o.Bytes + 1<<20,
		NicRailsOnly: p == progInitWorldRing || p == progInitRailRing})
	if err != nil {
		return nil, err
	}
	comms, err := sys.CommInitAll(fabric.CommConfig{})
	if err != nil {
		return nil, err
	}
	r := &bugRig{s: s, sys: sys, n: o.Ranks, b: o.Bytes, g: topo.LsaSize}
	for _, c := range comms {
		for _, w := range []*[]fabric.Window{&r.send, &r.recv, &r.out} {
			win, err := fabric.CommWindowRegister(c, uint64(o.Ranks)*o.Bytes, fabric.WinCollSymmetric)
			if err != nil {
				return nil, err
			}
			*w = append(*w, win)
		}
	}
	reqs := fabric.DevCommRequirements{GinContextCount: 1, GinSignalCount: 1}
	switch p {
	case progBcastBlockBarrier, progBcastPerBlock:
		reqs.GinSignalCount, reqs.GinBarrierCount = bcastBlocks, bcastBlocks
	case progBarrierAlias, progBarrierDistinct:
		reqs.GinContextCount, reqs.GinSignalCount = barCtxs, 2
	}
	for _, c := range comms {
		dc, err := fabric.DevCommCreate(c, reqs)
		if err != nil {
			return nil, err
		}
		r.dcs = append(r.dcs, dc)
	}
	return r, nil
}

// handle is rank q's init handle (the value GIN's init all-gathers: an
// rkey, an address).
func handle(q int) uint64 { return 0x9e37_0000_0000 | uint64(q) }

func runBug(name string, o scenario.Options, p bugProgram) (*scenario.Outcome, error) {
	r, err := buildBug(o, p)
	if err != nil {
		return nil, err
	}
	n, b := r.n, r.b
	if !o.Phantom {
		for rank := range n {
			for q := range n {
				if err := r.sys.Write(rank, r.send[rank], uint64(q)*b, scenario.PatternOf(b, 0, rank, q)); err != nil {
					return nil, err
				}
			}
		}
	}
	for rank := range n {
		dc := r.dcs[rank]
		grid := 1
		if p == progBcastBlockBarrier || p == progBcastPerBlock {
			grid = bcastBlocks
		}
		_, err := kernel.Launch(r.s, kernel.Config{Name: name, GPU: rank, Grid: grid, Block: roundUp(n, 64)}, func(t *kernel.Thread) {
			switch p {
			case progBcastBlockBarrier, progBcastPerBlock:
				r.bcast(t, dc, p)
			case progBarrierAlias, progBarrierDistinct:
				r.rounds(t, dc, p)
			default:
				r.initRing(t, dc, p)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	if err := r.s.Run(); err != nil {
		return nil, err
	}
	out := &scenario.Outcome{Model: "fabric + nic (" + r.sys.Network().Model().Name + ")", End: r.s.Now(), Seed: o.Seed, Digest: r.s.Digest(), Steps: r.s.Steps()}
	for rank := range n {
		out.Ranks = append(out.Ranks, scenario.RankResult{Rank: rank, Finish: r.s.Now()})
	}
	if o.Phantom {
		return out, nil
	}
	var c scenario.Checker
	switch p {
	case progBcastBlockBarrier, progBcastPerBlock:
		want := scenario.PatternOf(b, 0, 0, 0) // the root's send block 0
		for rank := 1; rank < n; rank++ {
			for _, w := range [][]fabric.Window{r.recv, r.out} {
				got, err := r.sys.Read(rank, w[rank], 0, b)
				if err != nil {
					return nil, err
				}
				c.Block(fmt.Sprintf("rank %d's broadcast block", rank), got, want)
			}
		}
	case progBarrierAlias, progBarrierDistinct:
		for rank := range n {
			for q := range n {
				if q == rank {
					continue
				}
				for _, w := range [][]fabric.Window{r.recv, r.out} {
					got, err := r.sys.Read(rank, w[rank], uint64(q)*b, b)
					if err != nil {
						return nil, err
					}
					c.Block(fmt.Sprintf("rank %d's block from rank %d", rank, q), got, scenario.PatternOf(b, 0, q, rank))
				}
			}
		}
	default:
		for rank := range n {
			for _, q := range r.ringMembers(rank, p) {
				got, err := r.sys.Read(rank, r.recv[rank], uint64(q)*8, 8)
				if err != nil {
					return nil, err
				}
				want := make([]byte, 8)
				for i := range 8 {
					want[i] = byte(handle(q) >> (8 * i))
				}
				c.Block(fmt.Sprintf("rank %d's init handle of rank %d", rank, q), got, want)
			}
		}
	}
	if err := c.Err(name, o.Seed); err != nil {
		err.(*scenario.MismatchError).Outcome = out
		return nil, err
	}
	return out, nil
}

// slice is block k's part [lo, hi) of a b-byte broadcast in 8-byte units.
func slice(b uint64, k int) (lo, hi uint64) {
	units := b / 8
	return units * uint64(k) / bcastBlocks * 8, units * uint64(k+1) / bcastBlocks * 8
}

// bcast is one block of the broadcast from rank 0; thread i of the root's
// putting block puts to rank i.
func (r *bugRig) bcast(t *kernel.Thread, dc fabric.DevComm, p bugProgram) {
	k, i, me, b := t.BlockIdx(), t.ThreadIdx(), dc.Rank, r.b
	gin := fabric.NewGin(t, dc, 0)
	bar := fabric.NewGinBarrierSession(t.BlockGroup(), gin, world(dc), dc.GinBarrier, uint32(k))
	sig := fabric.GinSignal(k)
	lo, hi := slice(b, k)
	var base uint64
	if p == progBcastPerBlock {
		if i == 0 {
			base = gin.ReadSignal(sig, 64) // before the barrier that orders the root's block k
		}
		bar.Sync(t.BlockGroup(), fabric.GinFenceNone)
		if me == 0 && i > 0 && i < r.n && hi > lo {
			gin.Put(t.ThreadGroup(), world(dc), i, r.recv[i], lo, r.send[0], lo, hi-lo, fabric.GinStrongSignalInc(sig), fabric.GinLocalNone())
		}
	} else {
		sig = 0
		bar.Sync(t.BlockGroup(), fabric.GinFenceNone)
		if i == 0 {
			base = gin.ReadSignal(sig, 64) // too late: the root's block 0 may have put already
		}
		if me == 0 && k == 0 && i > 0 && i < r.n {
			gin.Put(t.ThreadGroup(), world(dc), i, r.recv[i], 0, r.send[0], 0, b, fabric.GinStrongSignalInc(sig), fabric.GinLocalNone())
		}
	}
	if me == 0 || i != 0 || hi == lo && p == progBcastPerBlock {
		return
	}
	gin.WaitSignal(t.ThreadGroup(), sig, base+1, 64)
	buf := make([]byte, hi-lo)
	dc.Load(t, r.recv[me], lo, buf)
	dc.Store(t, r.out[me], lo, buf)
}

// allCtxBarrier is a hand-rolled all-contexts barrier on signal slot:
// thread i (1 ≤ i < n) raises peer me + i's slot by one on every context
// with a strong signal (so it implies this rank's earlier puts to that
// peer on every context), then thread 0 waits for want arrivals.
func (r *bugRig) allCtxBarrier(t *kernel.Thread, dc fabric.DevComm, gins []*fabric.Gin, slot fabric.GinSignal, want uint64) {
	i, me := t.ThreadIdx(), dc.Rank
	if i > 0 && i < r.n {
		for _, g := range gins {
			g.Signal(t.ThreadGroup(), world(dc), (me+i)%r.n, fabric.GinStrongSignalInc(slot))
		}
	}
	if i == 0 {
		gins[0].WaitSignal(t.ThreadGroup(), slot, want, 64)
	}
	t.SyncThreads()
}

// rounds puts each block to every peer in two rounds (halves), thread i's
// peer on context (i + round) mod 2, each round closed by an all-contexts
// barrier; thread 0 then copies the round's received halves.
func (r *bugRig) rounds(t *kernel.Thread, dc fabric.DevComm, p bugProgram) {
	i, me, n, b := t.ThreadIdx(), dc.Rank, r.n, r.b
	gins := make([]*fabric.Gin, barCtxs)
	for c := range gins {
		gins[c] = fabric.NewGin(t, dc, c)
	}
	h := b / 2
	per := uint64(barCtxs * (n - 1)) // arrivals of one barrier
	for round := range 2 {
		off := uint64(round) * h
		if i > 0 && i < n {
			peer := (me + i) % n
			gins[(i+round)%barCtxs].Put(t.ThreadGroup(), world(dc), peer, r.recv[peer], uint64(me)*b+off, r.send[me], uint64(peer)*b+off, h, fabric.GinNone(), fabric.GinLocalNone())
		}
		slot, want := fabric.GinSignal(round), per
		if p == progBarrierAlias {
			slot = 0 // planted: the second instance counts on the first one's slot
		}
		r.allCtxBarrier(t, dc, gins, slot, want)
		if i == 0 {
			buf := make([]byte, h)
			for q := range n {
				if q != me {
					dc.Load(t, r.recv[me], uint64(q)*b+off, buf)
					dc.Store(t, r.out[me], uint64(q)*b+off, buf)
				}
			}
		}
		t.SyncThreads()
	}
}

// ringNext is rank's successor on the init ring: rank + 1 over the world,
// or rank + lsa-size along its rail.
func (r *bugRig) ringNext(rank int, p bugProgram) int {
	if p == progInitRailRing {
		return (rank + r.g) % r.n
	}
	return (rank + 1) % r.n
}

// ringMembers are the ranks on rank's init ring other than itself, in the
// order their handles reach it.
func (r *bugRig) ringMembers(rank int, p bugProgram) []int {
	var ms []int
	prev := func(q int) int {
		if p == progInitRailRing {
			return (q - r.g + r.n) % r.n
		}
		return (q - 1 + r.n) % r.n
	}
	for q := prev(rank); q != rank; q = prev(q) {
		ms = append(ms, q)
	}
	return ms
}

// initRing is GIN init's ring all-gather (ncclGinIbAllGather's shape):
// thread 0 writes its handle into its table, then at step s puts the
// handle it got at step s − 1 (its own at step 0) into its successor's
// table with a strong signal and waits for its predecessor's step-s put.
func (r *bugRig) initRing(t *kernel.Thread, dc fabric.DevComm, p bugProgram) {
	if t.ThreadIdx() != 0 {
		return
	}
	me := dc.Rank
	gin := fabric.NewGin(t, dc, 0)
	next := r.ringNext(me, p)
	members := r.ringMembers(me, p)
	fwd := me
	for s := range members {
		gin.PutValue(t.ThreadGroup(), world(dc), next, r.recv[next], uint64(fwd)*8, handle(fwd), 8, fabric.GinStrongSignalInc(0), fabric.GinLocalNone())
		gin.WaitSignal(t.ThreadGroup(), 0, uint64(s+1), 64)
		fwd = members[s]
	}
	gin.Flush(t.ThreadGroup())
}
