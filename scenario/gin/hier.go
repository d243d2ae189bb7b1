package gin

import (
	"encoding/binary"
	"fmt"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/nic"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// gin-hier-allreduce is a u32 sum all-reduce in three phases, the shape of
// a hierarchical all-reduce on a multi-node job: inside each node (its LSA
// domain, the CFT flat team) every rank CFT-reds chunk p of its input into
// node peer p's accumulator and the node meets at a CFT barrier (a
// reduce-scatter); across nodes each rank exchanges its chunk's partial
// sum with its rail (the same LSA rank on every other node) by GIN puts
// with a strong signal and adds them up; inside the node again every rank
// CFT-puts its final chunk to every node peer (an all-gather) before a
// second barrier. The host checks every rank's output against the sum of
// all inputs.

func init() {
	scenario.Register(&scenario.Scenario{Name: "gin-hier-allreduce", Fabric: true,
		Summary: "hierarchical u32 sum all-reduce: CFT reduce-scatter inside each node, GIN across nodes on the rail, CFT all-gather inside the node",
		Perf:    &scenario.PerfShape{Type: "uint32", Elem: 4, Redop: "sum", Per: scenario.One, Gran: 16, Bus: func(n float64) float64 { return 2 * (n - 1) / n }},
		Bytes:   "per rank (a multiple of 16)", DefaultBytes: 8 << 10,
		PerfModel: hierPerfModel, Check: checkHier, Usage: hierUsage, Run: func(o scenario.Options) (*scenario.Outcome, error) { return runHier("gin-hier-allreduce", o, true) }})
	scenario.Register(&scenario.Scenario{Name: "gin-hier-no-barrier", Fabric: true,
		Summary: "PLANTED BUG: gin-hier-allreduce without the CFT barrier after the intra-node reduce-scatter, so the cross-node GIN put reads a partial sum the node peers' CFT reds have not finished",
		Bytes:   "per rank (a multiple of 16)", DefaultBytes: 8 << 10,
		Planted: &scenario.Planted{Fixed: "gin-hier-allreduce", Timing: true, Class: "a hierarchical all-reduce's cross-node GIN step missing the intra-node barrier: the put's source is read before the node's CFT reds into it have landed",
			Source: "CFT's ordering (package fabric doc: another rank's red is visible only once a barrier with release and acquire orders it); the hierarchical all-reduce shape of NCCL's device API (CFT/LSA inside a node, GIN across)", Ranks: 4, Bytes: 4 << 10, LsaSize: 2},
		PerfModel: hierPerfModel, Check: checkHier, Usage: hierUsage, Run: func(o scenario.Options) (*scenario.Outcome, error) { return runHier("gin-hier-no-barrier", o, false) }})
}

// hierPerfModel names perf's model: the CFT fabric's inside the node,
// the NIC model's across.
func hierPerfModel(scenario.Options) string {
	return "the CFT fabric's model + nic (" + nic.DefaultModel().Name + ")"
}

func checkHier(o scenario.Options) error {
	topo, err := o.Topology().Normalize()
	if err != nil {
		return fmt.Errorf("invalid --lsa-size: %w", err)
	}
	padded := hierChunk(o.Bytes, topo.LsaSize) * uint64(topo.LsaSize)
	switch {
	case o.Model != "":
		return fmt.Errorf("invalid --model %q: gin-hier-allreduce runs on the fabric's and the network's own models", o.Model)
	case !o.Faults.Empty():
		return fmt.Errorf("invalid --faults %s: gin-hier-allreduce has no SDMA queues", o.Faults)
	case o.Phantom:
		return fmt.Errorf("invalid --phantom: the ranks add the partial sums they load, which a phantom window does not hold")
	case topo.CftSize != topo.LsaSize:
		return fmt.Errorf("invalid --cft-size %d: the intra-node phases use the CFT flat team as the node, so it must be --lsa-size %d", topo.CftSize, topo.LsaSize)
	case o.Bytes == 0 || o.Bytes%16 != 0:
		return fmt.Errorf("invalid --bytes %s: need a positive multiple of 16 (CFT moves whole 16-byte units)", scenario.FormatBytes(o.Bytes))
	case 16+padded > uint64(kernel.MaxSharedBytes):
		return fmt.Errorf("invalid --bytes %s: a rank stages its input (padded to %s, one 16-byte-aligned chunk per node rank) in shared memory, at most %s", scenario.FormatBytes(o.Bytes), scenario.FormatBytes(padded), scenario.FormatBytes(uint64(kernel.MaxSharedBytes)-16))
	}
	return nil
}

func hierUsage(o scenario.Options) scenario.Usage {
	r := uint64(o.Ranks)
	return scenario.Usage{Backed: 5 * r * o.Bytes, Shared: r * (16 + o.Bytes), Lanes: 32 * o.Ranks, Ops: 2 * o.Ranks * max(o.LsaSize, 1), Host: 3 * r * o.Bytes}
}

// hierChunk is each node rank's chunk: ⌈bytes / g⌉ rounded up to 16 B;
// the buffers are padded to g chunks with zeros, which add nothing.
func hierChunk(bytes uint64, g int) uint64 {
	return ((bytes+uint64(g)-1)/uint64(g) + 15) &^ 15
}

func addInto(dst []byte, src []byte) {
	for i := 0; i+4 <= len(dst); i += 4 {
		binary.LittleEndian.PutUint32(dst[i:], binary.LittleEndian.Uint32(dst[i:])+binary.LittleEndian.Uint32(src[i:]))
	}
}

// runHier runs the all-reduce; without rsBarrier (the planted
// gin-hier-no-barrier) the ranks skip the CFT barrier that closes the
// reduce-scatter and go straight to the GIN step.
func runHier(name string, o scenario.Options, rsBarrier bool) (*scenario.Outcome, error) {
	topo, err := o.Topology().Normalize()
	if err != nil {
		return nil, err
	}
	n, g := o.Ranks, topo.LsaSize
	nodes := n / g
	chunk := hierChunk(o.Bytes, g)
	b := chunk * uint64(g) // the padded buffer
	s := sim.New(sim.Config{Seed: o.Seed, Perturb: o.Perturb, Strategy: o.Strategy, PCT: o.PCT, Stop: o.Stop})
	sys, err := fabric.NewSystem(s, fabric.Config{Topology: o.Topology(), Env: map[string]string{}, Debug: o.Debug, Race: o.Race, MemBytes: 5*b + uint64(nodes)*chunk + 1<<20})
	if err != nil {
		return nil, err
	}
	comms, err := sys.CommInitAll(fabric.CommConfig{})
	if err != nil {
		return nil, err
	}
	var in, acc, rail, out []fabric.Window
	for _, c := range comms {
		for _, w := range []struct {
			ws *[]fabric.Window
			n  uint64
		}{{&in, b}, {&acc, b}, {&rail, uint64(nodes) * chunk}, {&out, b}} {
			win, err := fabric.CommWindowRegister(c, w.n, fabric.WinCollSymmetric)
			if err != nil {
				return nil, err
			}
			*w.ws = append(*w.ws, win)
		}
	}
	var dcs []fabric.DevComm
	reqs := fabric.DevCommRequirements{CftCaps: fabric.CapCft, CftBarrierCount: 1, GinContextCount: 1, GinSignalCount: 1, GinConnectionType: fabric.GinConnectionRail}
	for _, c := range comms {
		dc, err := fabric.DevCommCreate(c, reqs)
		if err != nil {
			return nil, err
		}
		dcs = append(dcs, dc)
	}
	want := make([]byte, b)
	for r := range n {
		x := make([]byte, b)
		copy(x, scenario.PatternOf(o.Bytes, 0, r, -1))
		addInto(want, x)
		if err := sys.Write(r, in[r], 0, x); err != nil {
			return nil, err
		}
		if err := sys.Write(r, acc[r], 0, x); err != nil { // the accumulator starts as the own input
			return nil, err
		}
	}
	sum := fabric.RedOp{Op: redop.Sum, Type: redop.U32}
	for r := range n {
		dc := dcs[r]
		_, err := kernel.Launch(s, kernel.Config{Name: name, GPU: r, Grid: 1, Block: 32, WaveSize: 32, SharedBytes: 16 + int(b)}, func(t *kernel.Thread) {
			warp := t.WarpGroup()
			l := dc.LsaRank
			node := dc.Rank / g
			if t.Lane() == 0 {
				buf := make([]byte, b)
				dc.Load(t, in[dc.Rank], 0, buf)
				t.SharedStore(16, buf)
			}
			fabric.MemFence(warp, dc, fabric.Release, fabric.ProxyGeneric, fabric.ProxyFabric, fabric.FenceScopeCta)
			cft := fabric.NewCft(warp, dc, 0)
			bar := fabric.NewCftBarrierSession(warp, dc, 0, false)
			// 1. Reduce-scatter inside the node: chunk p to node rank p.
			for p := t.Lane(); p < g; p += 32 {
				if p == l {
					continue
				}
				le, off := fabric.GetPeerLeInfo(acc[dc.Rank], uint64(p)*chunk, node*g+p, dc)
				cft.Red(t.ThreadGroup(), le, off, sum, 16+p*int(chunk), uint32(chunk))
			}
			cft.Submit(t.ThreadGroup())
			cft.Flush(warp)
			if rsBarrier {
				bar.Sync(warp, fabric.AcqRel, fabric.ProxyFabric, fabric.ProxyGeneric)
			}
			// 2. Across nodes on the rail: the partial of chunk l to every
			// other node's rank l, then add theirs.
			gin := fabric.NewGin(t, dc, 0)
			railTeam := fabric.Team{NRanks: nodes, Rank: node, Stride: g}
			for q := t.Lane(); q < nodes; q += 32 {
				if q == node {
					continue
				}
				gin.Put(t.ThreadGroup(), railTeam, q, rail[q*g+l], uint64(node)*chunk, acc[dc.Rank], uint64(l)*chunk, chunk, fabric.GinStrongSignalInc(0), fabric.GinLocalNone())
			}
			gin.WaitSignal(warp, 0, uint64(nodes-1), 64)
			if t.Lane() == 0 {
				total := make([]byte, chunk)
				part := make([]byte, chunk)
				dc.Load(t, acc[dc.Rank], uint64(l)*chunk, total)
				for q := range nodes {
					if q != node {
						dc.Load(t, rail[dc.Rank], uint64(q)*chunk, part)
						addInto(total, part)
					}
				}
				dc.Store(t, out[dc.Rank], uint64(l)*chunk, total)
				t.SharedStore(16, total)
			}
			// 3. All-gather inside the node.
			fabric.MemFence(warp, dc, fabric.Release, fabric.ProxyGeneric, fabric.ProxyFabric, fabric.FenceScopeCta)
			for p := t.Lane(); p < g; p += 32 {
				if p == l {
					continue
				}
				le, off := fabric.GetPeerLeInfo(out[dc.Rank], uint64(l)*chunk, node*g+p, dc)
				cft.Put(t.ThreadGroup(), le, off, 16, uint32(chunk))
			}
			cft.Submit(t.ThreadGroup())
			cft.Flush(warp)
			bar.Sync(warp, fabric.AcqRel, fabric.ProxyFabric, fabric.ProxyGeneric)
			gin.Flush(warp)
		})
		if err != nil {
			return nil, err
		}
	}
	if err := s.Run(); err != nil {
		return nil, err
	}
	res := &scenario.Outcome{Model: "fabric (" + sys.Model().Name + ") + nic (" + sys.Network().Model().Name + ")", End: s.Now(), Seed: o.Seed, Digest: s.Digest(), Steps: s.Steps()}
	for r := range n {
		res.Ranks = append(res.Ranks, scenario.RankResult{Rank: r, Finish: s.Now(), BytesSent: 2*(b-chunk) + uint64(nodes-1)*chunk, BytesReceived: 2*(b-chunk) + uint64(nodes-1)*chunk})
	}
	var ck scenario.Checker
	for r := range n {
		got, err := sys.Read(r, out[r], 0, o.Bytes)
		if err != nil {
			return nil, err
		}
		ck.Block(fmt.Sprintf("rank %d's sum", r), got, want[:o.Bytes])
	}
	if err := ck.Err(name, o.Seed); err != nil {
		err.(*scenario.MismatchError).Outcome = res
		return nil, err
	}
	return res, nil
}
