package gin

import (
	"fmt"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// The GIN scenarios over SDMA (NCCL_GIN_TYPE=7, RCCL's Anvil backend):
// one node whose GIN operations are SDMA packets on the node's engine
// queues (package fabric, gin_sdma.go). --model picks the engines' model
// (gfx950 posts the fused COPY_LINEAR_WAIT_SIGNAL), --faults injects
// engine faults.

func init() {
	reg := func(name, summary string, p program, planted *scenario.Planted) {
		scenario.Register(&scenario.Scenario{Name: name, Summary: summary, Fabric: true, Perf: perf, Planted: planted,
			DefaultBytes: 64 << 10, Check: checkSdma, Usage: usage,
			PerfModel: func(o scenario.Options) string { return "GIN over SDMA, engines " + sdmaModelName(o) },
			Run:       func(o scenario.Options) (*scenario.Outcome, error) { return run(name, o, p) }})
	}
	reg("gin-sdma-alltoall", "all-to-all over GIN on one node with NCCL_GIN_TYPE=7 (RCCL's Anvil backend): each put with a strong signal is an SDMA COPY + signal on the pair's queue", progSdmaAllToAll, nil)
	reg("gin-sdma-allgather", "all-gather over GIN on one node with NCCL_GIN_TYPE=7: every rank's block goes to every other rank as SDMA packets", progSdmaAllGather, nil)
	reg("gin-sdma-split", "gin-sdma-alltoall with each block in two puts on two GIN contexts (two SDMA queues on two engines), each with a weak signal; the receiver waits for both", progSdmaSplitSigned, nil)
	reg("gin-sdma-weak-split", "PLANTED BUG: gin-sdma-split with only the second put signalled, weakly: it implies only its own put, and the first runs on another queue and engine", progSdmaSplitWeak,
		&scenario.Planted{Fixed: "gin-sdma-split", Class: "a weak GIN signal relied on for an earlier put's data (on SDMA only a queue is in order, and contexts are separate queues)",
			Source: "NCCL 2.30.5 device API: weak signals imply only the put they are attached to; RCCL's Anvil backend (NCCL_GIN_TYPE=7) runs GIN on SDMA queues", Ranks: 4, Bytes: 320 << 10})
}

func checkSdma(o scenario.Options) error {
	if err := checkProgram(o, true); err != nil {
		return err
	}
	if o.LsaSize != 0 && o.LsaSize != o.Ranks {
		return fmt.Errorf("invalid --lsa-size %d: the gin-sdma scenarios run on one node (--lsa-size %d or none): GIN over SDMA serves intra-node peers", o.LsaSize, o.Ranks)
	}
	if o.Ranks > maxSdmaRanks {
		return fmt.Errorf("invalid --ranks %d: a node's SDMA engines hold queues for at most %d GPUs with two GIN contexts each", o.Ranks, maxSdmaRanks)
	}
	if _, err := model.Load(o.Model); err != nil {
		return fmt.Errorf("invalid --model: %w", err)
	}
	return nil
}

// maxSdmaRanks: each GPU opens a queue per peer and context (2); MI355X's
// 14 xGMI engines hold 8 queues each.
const maxSdmaRanks = 32

func sdmaModelName(o scenario.Options) string {
	m, err := model.Load(o.Model)
	if err != nil {
		return o.Model
	}
	return m.Name()
}

// sdmaSystem is nicSystem for GIN over SDMA: one node, NCCL_GIN_TYPE=7,
// the engines on o's model and fault plan.
func sdmaSystem(o scenario.Options, memBytes uint64) (*sim.Sim, *fabric.System, []*fabric.Comm, error) {
	m, err := model.Load(o.Model)
	if err != nil {
		return nil, nil, nil, err
	}
	s := sim.New(sim.Config{Seed: o.Seed, Perturb: o.Perturb, Strategy: o.Strategy, PCT: o.PCT, Stop: o.Stop})
	topo := o.Topology()
	topo.LsaSize = o.Ranks
	cfg := fabric.Config{Topology: topo, Env: map[string]string{"NCCL_GIN_TYPE": "7"}, Debug: o.Debug, Race: o.Race,
		Phantom: o.Phantom, MemBytes: memBytes, Sdma: m}
	if !o.Faults.Empty() {
		cfg.SdmaInject = o.Faults.For(s, o.Ranks, 2)
	}
	sys, err := fabric.NewSystem(s, cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	comms, err := sys.CommInitAll(fabric.CommConfig{})
	if err != nil {
		return nil, nil, nil, err
	}
	return s, sys, comms, nil
}

// sdmaSplit is the split programs' kernel: thread i puts its block to
// peer rank + i in two parts, the first (three quarters) on context 0 and
// the rest on context 1, which over SDMA are two queues on two engines
// that run at once; it then waits for its sender's signal and copies the
// block. The planted form signals only the second part, weakly; the twin
// signals each part (a weak signal implies its own put) and waits for
// both.
func (r *rig) sdmaSplit(t *kernel.Thread, dc fabric.DevComm, p program, peer int, active bool) {
	if !active {
		return
	}
	n, b, me := r.n, r.b, dc.Rank
	first := min(b, (7*b/8+7)&^7)
	g0, g1 := fabric.NewGin(t, dc, 0), fabric.NewGin(t, dc, 1)
	sig := fabric.GinSignal(me) // one per sender: the receiver's thread for it copies at once
	dst, src := uint64(me)*b, uint64(peer)*b
	ra0, want := fabric.GinWeakSignalInc(sig), uint64(2)
	if p == progSdmaSplitWeak {
		ra0, want = fabric.GinNone(), 1
	}
	g0.Put(t.ThreadGroup(), world(dc), peer, r.recv[peer], dst, r.send[me], src, first, ra0, fabric.GinLocalNone())
	g1.Put(t.ThreadGroup(), world(dc), peer, r.recv[peer], dst+first, r.send[me], src+first, b-first, fabric.GinWeakSignalInc(sig), fabric.GinLocalNone())
	from := (me - t.ThreadIdx() + n) % n // its thread i put to us
	g0.WaitSignal(t.ThreadGroup(), fabric.GinSignal(from), want, 64)
	buf := make([]byte, b)
	dc.Load(t, r.recv[me], uint64(from)*b, buf)
	dc.Store(t, r.out[me], uint64(from)*b, buf)
}
