package cft

import (
	"fmt"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/scenario"
)

// The cft-counted-allgather scenario is an all-gather over NCCL 2.32's
// CFT counted writes: every rank putCounteds its --bytes block to every
// other rank of its flat team, all of them adding to one counter on the
// receiver; each receiver waits (acquire) for (team − 1) × bytes, then
// copies what it received into a second window, which the host checks.
// The planted cft-counted-short waits for one producer's bytes fewer than
// all of them deliver: its copy overtakes the last block.

func init() {
	reg := func(name, summary string, short bool, planted *scenario.Planted) {
		scenario.Register(&scenario.Scenario{
			Name:         name,
			Perf:         &scenario.PerfShape{Type: "uint8", Elem: 1, Redop: "none", Per: scenario.ByRanks, Gran: 16, Bus: scenario.RingBus},
			Summary:      summary,
			Bytes:        "per rank (a multiple of 16)",
			DefaultBytes: 1 << 10,
			Fabric:       true,
			Planted:      planted,
			Check:        checkCounted,
			Run:          func(o scenario.Options) (*scenario.Outcome, error) { return runCounted(name, o, short) },
			Usage:        countedUsage,
		})
	}
	reg("cft-counted-allgather", "all-gather over CFT counted writes (NCCL 2.32): every peer adds its delivered bytes to one counter per receiver, which waits for their sum", false, nil)
	reg("cft-counted-short", "PLANTED BUG: cft-counted-allgather whose receivers wait for one producer's bytes fewer than all producers deliver", true,
		&scenario.Planted{Fixed: "cft-counted-allgather", Class: "a counted wait for fewer bytes than every producer of the epoch delivers",
			Source: "NVSHMEM counted writes: receivers wait for the sum of the expected payload sizes of every producer", Ranks: 4, Bytes: 1 << 10})
}

func checkCounted(o scenario.Options) error {
	switch {
	case o.Bytes%16 != 0 || o.Bytes == 0:
		return fmt.Errorf("invalid --bytes %s: need a positive multiple of 16 (CFT moves whole 16-byte units)", scenario.FormatBytes(o.Bytes))
	case 16+o.Bytes > fabricSharedBytes:
		return fmt.Errorf("invalid --bytes %s: a rank's block is staged in shared memory, at most %s", scenario.FormatBytes(o.Bytes), scenario.FormatBytes(fabricSharedBytes-16))
	case o.Phantom:
		return fmt.Errorf("invalid --phantom: counted writes count into real bytes, and a phantom window holds none")
	}
	topo, err := o.Topology().Normalize()
	if err != nil {
		return fmt.Errorf("invalid topology: %w", err)
	}
	if topo.CftSize < 2 {
		return fmt.Errorf("invalid --cft-size %d: an all-gather needs at least 2 ranks in the flat team", topo.CftSize)
	}
	return nil
}

func countedUsage(o scenario.Options) scenario.Usage {
	r := uint64(o.Ranks)
	t, _ := o.Topology().Normalize()
	c := uint64(max(t.CftSize, 1))
	return scenario.Usage{Backed: 2*r*c*o.Bytes + r*4096, Shared: r * (16 + o.Bytes), Lanes: 32 * o.Ranks, Ops: o.Ranks * t.CftSize, Host: 2 * r * c * o.Bytes}
}

func runCounted(name string, o scenario.Options, short bool) (*scenario.Outcome, error) {
	topo, err := o.Topology().Normalize()
	if err != nil {
		return nil, err
	}
	c := topo.CftSize
	b := o.Bytes
	j, err := job.NewFabric(job.FabricConfig{Seed: o.Seed, Topology: o.Topology(), Debug: o.Debug, Race: o.Race, Caps: fabric.CapCft,
		Windows: []uint64{uint64(c) * b, uint64(c) * b, 4096}, WinFlags: []fabric.WinFlags{0, 0, fabric.WinCollSymmetric | fabric.WinCftCounted},
		Sched: job.Sched{Perturb: o.Perturb, Strategy: o.Strategy, PCT: o.PCT, Stop: o.Stop}})
	if err != nil {
		return nil, err
	}
	recv, out, ctr := j.Windows[0], j.Windows[1], j.Windows[2]
	expect := uint64(c-1) * b
	if short {
		expect -= b
	}
	block := func(rank int) []byte { return scenario.PatternOf(b, 0, rank, -1) }
	err = j.Launch(name, 32, 16+int(b), func(t *kernel.Thread, dc fabric.DevComm) {
		w := t.WarpGroup()
		me := dc.CftRank
		copy(t.Shared()[16:], block(dc.Rank))
		cft := fabric.NewCft(w, dc, 0)
		team := fabric.TeamCft(dc, fabric.CftTeamFlat)
		// Lane l puts to the peers l, l + 32, … places after this rank.
		for k := t.Lane(); k < c; k += 32 {
			if k == 0 {
				continue
			}
			peer := (me + k) % c
			le, off := fabric.GetCftLeInfo(recv[dc.Rank], uint64(me)*b, peer, team, dc)
			_, coff := fabric.GetCftLeInfo(ctr[dc.Rank], 0, peer, team, dc)
			cft.PutCounted(t.ThreadGroup(), le, off, coff, 16, uint32(b))
		}
		cft.Submit(t.ThreadGroup()) // a submit hands over its own thread's ops
		if st := fabric.WaitCounted(w, dc, fabric.Acquire, fabric.ProxyGeneric, ctr[dc.Rank], 0, expect); st != fabric.WaitOK {
			t.Fail("waitCounted", fmt.Errorf("returned %v", st))
		}
		if t.Lane() == 0 {
			buf := make([]byte, b)
			for k := 1; k < c; k++ {
				from := (me - k + c) % c
				dc.Load(t, recv[dc.Rank], uint64(from)*b, buf)
				dc.Store(t, out[dc.Rank], uint64(from)*b, buf)
			}
		}
		cft.Flush(w)
	})
	if err != nil {
		return nil, err
	}
	if err := j.Sim.Run(); err != nil {
		return nil, err
	}
	res := &scenario.Outcome{Model: "fabric (" + j.Sys.Model().Name + ")", End: j.Sim.Now(), Seed: o.Seed, Digest: j.Sim.Digest()}
	moved := uint64(c-1) * b
	for r := range o.Ranks {
		res.Ranks = append(res.Ranks, scenario.RankResult{Rank: r, Finish: j.Sim.Now(), BytesSent: moved, BytesReceived: moved})
	}
	var ck scenario.Checker
	for r := range o.Ranks {
		base := r / c * c
		for k := 1; k < c; k++ {
			from := (r%c - k + c) % c
			got, err := j.Sys.Read(r, out[r], uint64(from)*b, b)
			if err != nil {
				return nil, err
			}
			ck.Block(fmt.Sprintf("rank %d's copy of rank %d's block", r, base+from), got, block(base+from))
		}
	}
	if err := ck.Err(name, o.Seed); err != nil {
		err.(*scenario.MismatchError).Outcome = res
		return nil, err
	}
	return res, nil
}
