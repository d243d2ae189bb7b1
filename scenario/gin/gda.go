package gin

import (
	"fmt"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/nic"
	"github.com/emud-dev/emud/scenario"
)

// gda-allgather is an all-gather across nodes on MORI's ccoGda: every
// rank puts its --bytes block to each rank of its GDA team with
// ccoGda_SignalInc(0), waits for (consumes) one signal per peer, then the
// ranks meet at the GDA barrier before the kernel ends. Under
// CCO_GDA_CONNECTION_RAIL the team is the rail (the same LSA rank on every
// node); without --lsa-size the ranks form two nodes (an odd count: one
// GPU per node). The planted
// gda-crossnode-barrier runs it under
// CCO_GDA_CONNECTION_CROSSNODE, where MORI's barrier hangs on nodes of
// several GPUs: every rank of a node has the node's first rank as its GDA
// rank, so their arrivals land on one slot.

func init() {
	reg := func(name, summary string, conn fabric.GdaConnection, planted *scenario.Planted) {
		// No all-gather perf shape: a rank sends to its GDA team only (the
		// rail), not to every rank as that bus factor assumes; emud perf
		// reports the per-pair transfer (bus factor 1).
		scenario.Register(&scenario.Scenario{Name: name, Summary: summary, Fabric: true, Planted: planted,
			DefaultBytes: 64 << 10, Check: checkGda, Usage: usage,
			PerfModel: func(scenario.Options) string { return "fabric ccoGda + nic (" + nic.DefaultModel().Name + ")" },
			Run:       func(o scenario.Options) (*scenario.Outcome, error) { return runGda(name, o, conn) }})
	}
	reg("gda-allgather", "all-gather across nodes on MORI's ccoGda (rail connections): put with ccoGda_SignalInc to every rail peer, waitSignal per peer, then the GDA barrier", fabric.GdaConnectionRail, nil)
	reg("gda-crossnode-barrier", "PLANTED BUG: gda-allgather over CCO_GDA_CONNECTION_CROSSNODE, whose GDA barrier hangs with several GPUs per node", fabric.GdaConnectionCrossNode,
		&scenario.Planted{Fixed: "gda-allgather", Class: "MORI's GDA barrier over CROSSNODE connections: a node's ranks share one GDA rank, so their arrivals share a slot",
			Source: "ROCm/mori cco_scale_out.hpp: ccoGda's rank is the node's first rank under CROSSNODE, and ccoGdaBarrierSession signals slot signal0 + index·nRanks + rank", Ranks: 4, Bytes: 4 << 10})
}

// gdaOptions gives the GDA scenarios several nodes when --lsa-size is not
// set: two for an even rank count, one GPU each for an odd one.
func gdaOptions(o scenario.Options) scenario.Options {
	if o.LsaSize == 0 {
		o.LsaSize = 1
		if o.Ranks%2 == 0 {
			o.LsaSize = o.Ranks / 2
		}
	}
	return o
}

func checkGda(o scenario.Options) error {
	o = gdaOptions(o)
	if err := check(o); err != nil {
		return err
	}
	topo, _ := o.Topology().Normalize()
	if topo.NRanks/topo.LsaSize < 2 {
		return fmt.Errorf("invalid --lsa-size %d: the GDA scenarios need at least 2 nodes (MORI enables the rail barrier only across nodes); pass --lsa-size below --ranks", topo.LsaSize)
	}
	return nil
}

func runGda(name string, o scenario.Options, conn fabric.GdaConnection) (*scenario.Outcome, error) {
	o = gdaOptions(o)
	m := nic.DefaultModel()
	s, sys, comms, err := nicSystem(o, m, 2*uint64(o.Ranks)*o.Bytes+1<<20)
	if err != nil {
		return nil, err
	}
	n, b := o.Ranks, o.Bytes
	var send, recv []fabric.Window
	for _, c := range comms {
		w, err := fabric.CommWindowRegister(c, b, fabric.WinCollSymmetric)
		if err != nil {
			return nil, err
		}
		v, err := fabric.CommWindowRegister(c, uint64(n)*b, fabric.WinCollSymmetric)
		if err != nil {
			return nil, err
		}
		send, recv = append(send, w), append(recv, v)
	}
	var dcs []fabric.DevComm
	// A rail barrier pool of n barriers holds the largest GDA team's slots
	// (MORI sizes it nBarriers × nNodes), so that CROSSNODE's barrier is
	// not refused for overrunning it and shows its shared-slot hang.
	reqs := fabric.DevCommRequirements{GinContextCount: 1, GinSignalCount: 1, GdaConnectionType: conn, RailGdaBarrierCount: n}
	for _, c := range comms {
		dc, err := fabric.DevCommCreate(c, reqs)
		if err != nil {
			return nil, err
		}
		dcs = append(dcs, dc)
	}
	for r := range n {
		if o.Phantom {
			break
		}
		if err := sys.Write(r, send[r], 0, scenario.PatternOf(b, 0, r, -1)); err != nil {
			return nil, err
		}
	}
	teamOf := func(dc fabric.DevComm) []int {
		var ws []int
		me, total := fabric.GdaTeam(dc)
		for p := range total {
			if p != me {
				ws = append(ws, fabric.GdaPeerToWorld(dc, p))
			}
		}
		return ws
	}
	for r := range n {
		dc := dcs[r]
		_, err := kernel.Launch(s, kernel.Config{Name: name, GPU: r, Grid: 1, Block: roundUp(n, 64)}, func(t *kernel.Thread) {
			gda := fabric.NewGda(t, dc, 0)
			peers := teamOf(dc)
			if i := t.ThreadIdx(); i < len(peers) {
				w := peers[i]
				gda.Put(t.ThreadGroup(), fabric.GdaTeamWorld, w, recv[w], uint64(dc.Rank)*b, send[dc.Rank], 0, b, fabric.GdaSignalInc(0))
			}
			if t.ThreadIdx() == 0 {
				for range peers {
					gda.WaitSignal(t.ThreadGroup(), 0, 1, 64)
				}
			}
			fabric.GdaBarrier(t.BlockGroup(), gda, dc.RailGdaBarrier, 0)
		})
		if err != nil {
			return nil, err
		}
	}
	if err := s.Run(); err != nil {
		return nil, err
	}
	res := &scenario.Outcome{Model: "fabric + nic (" + m.Name + ", ccoGda " + conn.String() + ")", End: s.Now(), Seed: o.Seed, Digest: s.Digest()}
	for r := range n {
		moved := uint64(len(teamOf(dcs[r]))) * b
		res.Ranks = append(res.Ranks, scenario.RankResult{Rank: r, Finish: s.Now(), BytesSent: moved, BytesReceived: moved})
	}
	if o.Phantom {
		return res, nil
	}
	var ck scenario.Checker
	for r := range n {
		for _, q := range teamOf(dcs[r]) {
			got, err := sys.Read(r, recv[r], uint64(q)*b, b)
			if err != nil {
				return nil, err
			}
			ck.Block(fmt.Sprintf("rank %d's block from rank %d", r, q), got, scenario.PatternOf(b, 0, q, -1))
		}
	}
	if err := ck.Err(name, o.Seed); err != nil {
		err.(*scenario.MismatchError).Outcome = res
		return nil, err
	}
	return res, nil
}
