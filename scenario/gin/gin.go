package gin

import (
	"fmt"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/nic"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// program is which variant of the exchange a scenario runs.
type program uint8

const (
	progAllToAll program = iota
	progAllGather
	progHalvesWeak   // planted: weak signal on the second half only
	progHalvesStrong // twin
	progSharedSignal // planted: two blocks on one signal index
	progBlocks       // twin
	progResetLate    // planted: reset after peers may have signalled
	progResetBarrier // twin
	// GIN over SDMA (NCCL_GIN_TYPE=7, one node: sdma.go)
	progSdmaAllToAll
	progSdmaAllGather
	progSdmaSplitWeak   // planted: first part on context 0 unsignalled, the rest on context 1 with a weak signal
	progSdmaSplitSigned // twin: each part with a weak signal on its own context, wait for both
)

// sdma reports whether p runs GIN over SDMA.
func (p program) sdma() bool { return p >= progSdmaAllToAll }

var perf = &scenario.PerfShape{Type: "uint8", Elem: 1, Redop: "none", Per: scenario.ByRanks, Gran: 8, Bus: scenario.RingBus}

func init() {
	reg := func(name, summary string, p program, planted *scenario.Planted) {
		scenario.Register(&scenario.Scenario{Name: name, Summary: summary, Fabric: true, Perf: perf, Planted: planted,
			PerfModel:    func(scenario.Options) string { return "fabric GIN + nic (" + nicModelOf(p).Name + ")" },
			DefaultBytes: 64 << 10, Check: check, Usage: usage,
			Run: func(o scenario.Options) (*scenario.Outcome, error) { return run(name, o, p) }})
	}
	reg("gin-alltoall", "all-to-all over GIN across nodes: a put with a strong signal to every other rank, then wait for n−1 signals (NCCL device API, emulated NICs)", progAllToAll, nil)
	reg("gin-allgather", "all-gather over GIN across nodes: every rank puts its block to every other rank with a strong signal", progAllGather, nil)
	reg("gin-halves", "gin-alltoall with each block in two puts, the second with a strong signal (out-of-order network)", progHalvesStrong, nil)
	reg("gin-weak-signal", "PLANTED BUG: gin-halves with a weak signal on the second half, which implies only that half", progHalvesWeak,
		&scenario.Planted{Fixed: "gin-halves", Class: "a weak GIN signal relied on for an earlier put's data",
			Source: "NCCL 2.30.5 device API: weak signals imply only the put they are attached to", Ranks: 4, Bytes: 16 << 10})
	reg("gin-blocks", "gin-alltoall split over two thread blocks, each waiting on its own signal index", progBlocks, nil)
	reg("gin-shared-signal", "PLANTED BUG: gin-blocks with both blocks waiting on signal 0, so one block's peers can release the other", progSharedSignal,
		&scenario.Planted{Fixed: "gin-blocks", Class: "one GIN signal index shared by every thread block",
			Source: "GIN sync race reports: a relaxed entry barrier plus one signal index shared by all thread blocks", Ranks: 4, Bytes: 16 << 10})
	reg("gin-reset-barrier", "gin-alltoall whose kernels zero their signal, meet at a GIN barrier, then put (launches skewed by the seed)", progResetBarrier, nil)
	reg("gin-reset-after-signal", "PLANTED BUG: the kernels zero their signal without a barrier, after early peers may have signalled it", progResetLate,
		&scenario.Planted{Fixed: "gin-reset-barrier", Timing: true, Class: "a signal slot zeroed locally after a peer's one-sided signal landed",
			Source: "collective authors' incident reports: a signal pad zeroed after setup while a peer's signal may already be there", Ranks: 4, Bytes: 16 << 10})
}

func check(o scenario.Options) error {
	return checkProgram(o, false)
}

func checkProgram(o scenario.Options, sdma bool) error {
	switch {
	case o.Model != "" && !sdma:
		return fmt.Errorf("invalid --model %q: the GIN scenarios run on the network's own model (package nic), not an SDMA model", o.Model)
	case !o.Faults.Empty() && !sdma:
		return fmt.Errorf("invalid --faults %s: the faults are SDMA faults and the GIN scenarios have no SDMA queues", o.Faults)
	case o.Bytes%8 != 0:
		return fmt.Errorf("invalid --bytes %s: need a multiple of 8 (the halves programs split blocks on 4-byte bounds)", scenario.FormatBytes(o.Bytes))
	case o.Bytes > maxBytes:
		return fmt.Errorf("invalid --bytes %s: at most %s per pair", scenario.FormatBytes(o.Bytes), scenario.FormatBytes(maxBytes))
	case o.Ranks > MaxRanks:
		return fmt.Errorf("invalid --ranks %d: the GIN scenarios launch one thread per peer in one block, at most %d ranks", o.Ranks, MaxRanks)
	}
	if _, err := o.Topology().Normalize(); err != nil {
		return fmt.Errorf("invalid --lsa-size: %w", err)
	}
	return nil
}

// launchSkew bounds the seeded delay of each rank's launch in the reset
// programs: below the network's latency, so that at exact timing every
// reset comes before the first signal lands and only a realistic launch
// spread (--perturb 1) makes an early peer's signal land first.
const launchSkew = 2 * sim.Microsecond

// MaxRanks bounds --ranks: one thread per peer in a block of at most 1024
// threads.
const MaxRanks = 1024

// maxBytes bounds --bytes: every rank holds a block per rank three times.
const maxBytes = 16 << 20

// usage is every program's footprint: three windows of a block per rank
// on every rank, a lane per peer, every put in flight.
func usage(o scenario.Options) scenario.Usage {
	r := uint64(o.Ranks)
	return scenario.Usage{Backed: 3 * r * r * o.Bytes, Lanes: o.Ranks * roundUp(o.Ranks, 64), Ops: o.Ranks * o.Ranks, Host: 2 * r * r * o.Bytes} // the host's reads and the expected blocks
}

func roundUp(n, m int) int { return (n + m - 1) / m * m }

// rig is a built system: windows send (a block per peer), recv (a block
// per peer) and out (the planted programs' copies of what they received).
type rig struct {
	s               *sim.Sim
	sys             *fabric.System
	dcs             []fabric.DevComm
	send, recv, out []fabric.Window
	n               int
	b               uint64
	sdmaModel       string // GIN over SDMA: the engines' model
}

// nicSystem is a GIN or GDA scenario's fabric: the simulator under o's
// schedule, the system on NIC model m with memBytes of memory per rank, and
// every rank's comm.
func nicSystem(o scenario.Options, m nic.Model, memBytes uint64) (*sim.Sim, *fabric.System, []*fabric.Comm, error) {
	s := sim.New(sim.Config{Seed: o.Seed, Perturb: o.Perturb, Strategy: o.Strategy, PCT: o.PCT, Stop: o.Stop})
	sys, err := fabric.NewSystem(s, fabric.Config{Topology: o.Topology(), Env: map[string]string{}, Debug: o.Debug, Race: o.Race,
		Phantom: o.Phantom, Nic: &m, MemBytes: memBytes})
	if err != nil {
		return nil, nil, nil, err
	}
	comms, err := sys.CommInitAll(fabric.CommConfig{})
	if err != nil {
		return nil, nil, nil, err
	}
	return s, sys, comms, nil
}

// nicModelOf is p's network: nic.DefaultModel, out of order for the
// halves programs.
func nicModelOf(p program) nic.Model {
	m := nic.DefaultModel()
	if p == progHalvesWeak || p == progHalvesStrong {
		m.Name, m.Ordering, m.Jitter = "400g-ooo", nic.OutOfOrder, 4*sim.Microsecond
	}
	return m
}

// build builds p's system on NIC model nm (nil: nic.DefaultModel, or the
// out-of-order model of the halves programs).
func build(o scenario.Options, p program, nm *nic.Model) (*rig, error) {
	m := nicModelOf(p)
	if nm != nil {
		m = *nm
	}
	mem := 3*uint64(o.Ranks)*o.Bytes + 1<<20
	var s *sim.Sim
	var sys *fabric.System
	var comms []*fabric.Comm
	var err error
	if p.sdma() {
		s, sys, comms, err = sdmaSystem(o, mem)
	} else {
		s, sys, comms, err = nicSystem(o, m, mem)
	}
	if err != nil {
		return nil, err
	}
	r := &rig{s: s, sys: sys, n: o.Ranks, b: o.Bytes}
	if p.sdma() {
		r.sdmaModel = sdmaModelName(o)
	}
	for _, c := range comms {
		for _, w := range []*[]fabric.Window{&r.send, &r.recv, &r.out} {
			win, err := fabric.CommWindowRegister(c, uint64(o.Ranks)*o.Bytes, fabric.WinCollSymmetric)
			if err != nil {
				return nil, err
			}
			*w = append(*w, win)
		}
	}
	// Signals: 0 and 1 for the counting programs, one per sender for the
	// halves programs.
	reqs := fabric.DevCommRequirements{GinContextCount: 2, GinSignalCount: max(2, o.Ranks), GinBarrierCount: 1}
	for _, c := range comms {
		dc, err := fabric.DevCommCreate(c, reqs)
		if err != nil {
			return nil, err
		}
		r.dcs = append(r.dcs, dc)
	}
	return r, nil
}

// want is the block src sends dst.
func (r *rig) want(src, dst int, p program) []byte {
	if p == progAllGather || p == progSdmaAllGather {
		return scenario.PatternOf(r.b, 0, src, -1)
	}
	return scenario.PatternOf(r.b, 0, src, dst)
}

func run(name string, o scenario.Options, p program) (*scenario.Outcome, error) {
	return runOn(name, o, p, nil)
}

// runOn is run on NIC model m (nil: the program's own).
func runOn(name string, o scenario.Options, p program, m *nic.Model) (*scenario.Outcome, error) {
	r, err := build(o, p, m)
	if err != nil {
		return nil, err
	}
	for rank := range r.n {
		for q := range r.n {
			if o.Phantom {
				break // phantom windows hold no bytes to fill
			}
			if err := r.sys.Write(rank, r.send[rank], uint64(q)*r.b, r.want(rank, q, p)); err != nil {
				return nil, err
			}
		}
	}
	rng := r.s.Rand(0x9e5e7)
	for rank := range r.n {
		var delay sim.Time
		if p == progResetLate || p == progResetBarrier {
			delay = sim.Time(rng.Int64N(int64(launchSkew)))
		}
		dc := r.dcs[rank]
		r.s.Spawn(fmt.Sprintf("host%d", rank), func(a *sim.Actor) {
			a.Sleep(delay)
			grid := 1
			if p == progSharedSignal || p == progBlocks {
				grid = 2
			}
			_, err := kernel.Launch(r.s, kernel.Config{Name: name, GPU: rank, Grid: grid, Block: roundUp(r.n, 64)}, func(t *kernel.Thread) { r.kernel(t, dc, p) })
			if err != nil {
				r.s.Fail(err)
			}
		})
	}
	if err := r.s.Run(); err != nil {
		return nil, err
	}
	mdl := "fabric + nic (" + r.sys.Network().Model().Name + ")"
	if p.sdma() {
		mdl = "fabric GIN over SDMA (" + r.sdmaModel + ")"
	}
	out := &scenario.Outcome{Model: mdl, End: r.s.Now(), Seed: o.Seed, Digest: r.s.Digest()}
	moved := uint64(r.n-1) * r.b
	for rank := range r.n {
		out.Ranks = append(out.Ranks, scenario.RankResult{Rank: rank, Finish: r.s.Now(), BytesSent: moved, BytesReceived: moved})
	}
	if o.Phantom {
		return out, nil
	}
	var c scenario.Checker
	for rank := range r.n {
		for q := range r.n {
			if q == rank {
				continue
			}
			for _, w := range r.checked(p) {
				got, err := r.sys.Read(rank, w[rank], uint64(q)*r.b, r.b)
				if err != nil {
					return nil, err
				}
				c.Block(fmt.Sprintf("rank %d's block from rank %d", rank, q), got, r.want(q, rank, p))
			}
		}
	}
	if err := c.Err(name, o.Seed); err != nil {
		err.(*scenario.MismatchError).Outcome = out
		return nil, err
	}
	return out, nil
}

// checked are the windows the host checks: the receive window, and for
// the programs that copy on release, the copy.
func (r *rig) checked(p program) [][]fabric.Window {
	switch p {
	case progHalvesWeak, progHalvesStrong, progSharedSignal, progBlocks, progSdmaSplitWeak, progSdmaSplitSigned:
		return [][]fabric.Window{r.recv, r.out}
	}
	return [][]fabric.Window{r.recv}
}

func world(dc fabric.DevComm) fabric.Team {
	return fabric.Team{NRanks: dc.NRanks, Rank: dc.Rank, Stride: 1}
}

// kernel is one rank's program: thread i (1 ≤ i < n) handles peer
// rank + i; thread 0 of each block waits and, in the planted programs,
// copies what it was told has arrived.
func (r *rig) kernel(t *kernel.Thread, dc fabric.DevComm, p program) {
	n, b, me := r.n, r.b, dc.Rank
	i := t.ThreadIdx()
	gin := fabric.NewGin(t, dc, i%dc.GinContextCount)
	peer := (me + i) % n
	active := i > 0 && i < n
	blocks := p == progSharedSignal || p == progBlocks
	if blocks {
		active = active && i%2 == t.BlockIdx() // block k handles the peers of parity k
	}
	sig := fabric.GinSignal(0)
	if p == progBlocks {
		sig = fabric.GinSignal(t.BlockIdx())
	}
	switch p {
	case progResetLate:
		if i == 0 {
			gin.ResetSignal(0) // too late: an early peer may have signalled
		}
	case progResetBarrier:
		if i == 0 {
			gin.ResetSignal(0)
		}
		fabric.NewGinBarrierSession(t.BlockGroup(), gin, world(dc), dc.GinBarrier, 0).Sync(t.BlockGroup(), fabric.GinFenceNone)
	}
	src := uint64(peer) * b
	if p == progAllGather || p == progSdmaAllGather {
		src = 0
	}
	if p == progSdmaSplitWeak || p == progSdmaSplitSigned {
		r.sdmaSplit(t, dc, p, peer, active)
		return
	}
	dst := uint64(me) * b
	if active {
		switch p {
		case progHalvesWeak, progHalvesStrong:
			h := b / 2
			gin.Put(t.ThreadGroup(), world(dc), peer, r.recv[peer], dst, r.send[me], src, h, fabric.GinNone(), fabric.GinLocalNone())
			// One signal per sender, so each receiver thread copies its
			// sender's block as soon as that sender says it is there.
			ra := fabric.GinStrongSignalInc(fabric.GinSignal(me))
			if p == progHalvesWeak {
				ra = fabric.GinWeakSignalInc(fabric.GinSignal(me))
			}
			gin.Put(t.ThreadGroup(), world(dc), peer, r.recv[peer], dst+h, r.send[me], src+h, b-h, ra, fabric.GinLocalNone())
		default:
			gin.Put(t.ThreadGroup(), world(dc), peer, r.recv[peer], dst, r.send[me], src, b, fabric.GinStrongSignalInc(sig), fabric.GinLocalNone())
		}
	}
	if halves := p == progHalvesWeak || p == progHalvesStrong; halves {
		if !active {
			return
		}
		from := (me - i + n) % n // its thread i put to us
		gin.WaitSignal(t.ThreadGroup(), fabric.GinSignal(from), 1, 64)
		buf := make([]byte, b)
		dc.Load(t, r.recv[me], uint64(from)*b, buf)
		dc.Store(t, r.out[me], uint64(from)*b, buf)
		return
	}
	if i != 0 {
		return
	}
	want := uint64(n - 1)
	if blocks {
		want = uint64(countParity(n, t.BlockIdx()))
	}
	gin.WaitSignal(t.ThreadGroup(), sig, want, 64)
	if r.checkedCopy(p) {
		buf := make([]byte, b)
		for k := 1; k < n; k++ {
			if blocks && k%2 != t.BlockIdx() {
				continue
			}
			from := (me - k + n) % n // its thread k put to us
			dc.Load(t, r.recv[me], uint64(from)*b, buf)
			dc.Store(t, r.out[me], uint64(from)*b, buf)
		}
	}
}

func (r *rig) checkedCopy(p program) bool { return p == progSharedSignal || p == progBlocks }

// countParity is how many i in 1..n−1 have parity k.
func countParity(n, k int) int {
	c := 0
	for i := 1; i < n; i++ {
		if i%2 == k {
			c++
		}
	}
	return c
}
