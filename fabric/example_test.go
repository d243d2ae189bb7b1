package fabric_test

import (
	"errors"
	"fmt"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// Host setup: a system of 8 ranks in two multicast groups, every rank's
// communicator, a window and a CFT dev comm with one barrier.
func ExampleDevCommCreate() {
	s := sim.New(sim.Config{Seed: 1})
	sys, err := fabric.NewSystem(s, fabric.Config{Topology: fabric.Topology{NRanks: 8, LsaSize: 4, CftSize: 8, CftMcSize: 4}, Env: map[string]string{}})
	if err != nil {
		panic(err)
	}
	comms, _ := sys.CommInitAll(fabric.CommConfig{})
	reqs := fabric.DevCommRequirementsInitializer()
	reqs.CftCaps = fabric.CapCft | fabric.CapCftMultimem
	reqs.CftBarrierCount = 1
	for _, c := range comms {
		if _, err := fabric.CommWindowRegister(c, 4096, fabric.WinCollSymmetric); err != nil {
			panic(err)
		}
	}
	dc, err := fabric.DevCommCreate(comms[5], reqs)
	if err != nil {
		panic(err)
	}
	fmt.Printf("rank %d: cft rank %d of %d, multimem rank %d of %d, ucLeId %#x, mcLeId %#x\n",
		dc.Rank, dc.CftRank, dc.CftSize, dc.CftMultimemRank, dc.CftMultimemSize, dc.UcLeId, dc.McLeId)
	fmt.Println("flat:", fabric.TeamCft(dc, fabric.CftTeamFlat))
	fmt.Println("hier-multimem:", fabric.TeamCft(dc, fabric.CftTeamHierMultimem))
	fmt.Println("hier-lsa:", fabric.TeamCft(dc, fabric.CftTeamHierLsa))
	fmt.Println("multimem:", fabric.TeamCftMultimem(dc))
	// Output:
	// rank 5: cft rank 5 of 8, multimem rank 1 of 4, ucLeId 0x1000, mcLeId 0x80001
	// flat: {nRanks 8, rank 5, stride 1}
	// hier-multimem: {nRanks 2, rank 1, stride 4}
	// hier-lsa: {nRanks 2, rank 1, stride 4}
	// multimem: {nRanks 4, rank 1, stride 1}
}

// Asking for multicast on a system without NVLS fails with NCCL's message.
func ExampleDevCommCreate_noMulticast() {
	sys, _ := fabric.NewSystem(sim.New(sim.Config{}), fabric.Config{Topology: fabric.Topology{NRanks: 2, NoMulticast: true}, Env: map[string]string{}})
	comms, _ := sys.CommInitAll(fabric.CommConfig{})
	_, err := fabric.DevCommCreate(comms[0], fabric.DevCommRequirements{CftCaps: fabric.CapCft | fabric.CapCftMultimem})
	var e *fabric.Error
	fmt.Println(errors.As(err, &e), e.Result)
	fmt.Println(e.Msg)
	// Output:
	// true ncclInvalidArgument
	// rank 0: CFT multicast support requested, but NVLS is disabled or unsupported.
}

// GetCftLeInfo addresses a hierarchical team's peer: rank 6 of a flat team
// of 16 in multicast groups of 4 reaches flat rank 14 as hier-multimem
// team rank 3.
func ExampleGetCftLeInfo() {
	j, _ := job.NewFabric(job.FabricConfig{Topology: fabric.Topology{NRanks: 16, CftMcSize: 4}, Windows: []uint64{4096}})
	dc := j.DevComms[6]
	hier := fabric.TeamCft(dc, fabric.CftTeamHierMultimem)
	le, off := fabric.GetCftLeInfo(j.Windows[0][6], 64, 3, hier, dc)
	fmt.Printf("team %v: le %#x = ucLeId + 14, leOffset %d\n", hier, le, off)
	// Output: team {nRanks 4, rank 1, stride 4}: le 0x100e = ucLeId + 14, leOffset 64
}

// A warp stages 64 bytes in shared memory, puts them to the next rank,
// submits and flushes; a barrier orders the fabric writes before the
// peer's generic loads.
func ExampleCft_Put() {
	j, _ := job.NewFabric(job.FabricConfig{Seed: 1, Topology: fabric.Topology{NRanks: 4}, Windows: []uint64{4096}, Debug: true})
	win := j.Windows[0]
	got := make([]string, 4)
	_ = j.Launch("put", 32, 16+64, func(t *kernel.Thread, dc fabric.DevComm) {
		w := t.WarpGroup()
		sh := t.Shared()
		sh[16+t.Lane()] = byte(10*dc.Rank + t.Lane()%10)
		cft := fabric.NewCft(w, dc, 0)
		next := (dc.Rank + 1) % dc.NRanks
		le, off := fabric.GetPeerLeInfo(win[dc.Rank], 0, next, dc)
		cft.Put(w, le, off, 16, 64)
		cft.Submit(w)
		if has, _ := cft.Flush(w); has {
			panic("fabric error")
		}
		bar := fabric.NewCftBarrierSession(w, dc, 0, false)
		bar.Sync(w, fabric.AcqRel, fabric.ProxyFabric, fabric.ProxyGeneric)
		if t.Lane() == 0 {
			b := make([]byte, 4)
			dc.Load(t, win[dc.Rank], 0, b)
			got[dc.Rank] = fmt.Sprint(b)
		}
	})
	if err := j.Sim.Run(); err != nil {
		panic(err)
	}
	fmt.Println(got)
	// Output: [[30 31 32 33] [0 1 2 3] [10 11 12 13] [20 21 22 23]]
}

// PullRed reads the sum over every member's copy through the multicast LE.
func ExampleCft_PullRed() {
	j, _ := job.NewFabric(job.FabricConfig{Seed: 1, Topology: fabric.Topology{NRanks: 4}, Windows: []uint64{4096}})
	win := j.Windows[0]
	for r := 0; r < 4; r++ {
		v := make([]byte, 16)
		v[0] = byte(r + 1) // u32 element 0 = r + 1
		_ = j.Sys.Write(r, win[r], 0, v)
	}
	var sum []byte
	_ = j.Launch("pullred", 32, 32, func(t *kernel.Thread, dc fabric.DevComm) {
		if dc.Rank != 0 {
			return
		}
		w := t.WarpGroup()
		cft := fabric.NewCft(w, dc, 0)
		le, off := fabric.GetMultimemLeInfo(win[0], 0, dc)
		cft.PullRed(w, le, off, fabric.RedOp{Op: redop.Sum, Type: redop.U32}, 16, 16)
		cft.Submit(w)
		cft.Flush(w)
		if t.Lane() == 0 {
			sum = append([]byte(nil), t.Shared()[16:20]...)
		}
	})
	_ = j.Sim.Run()
	fmt.Println(sum)
	// Output: [10 0 0 0]
}

// A flush reports an injected fabric error of its phase.
func ExampleCft_Flush() {
	j, _ := job.NewFabric(job.FabricConfig{Seed: 1, Topology: fabric.Topology{NRanks: 2}, Windows: []uint64{4096},
		Faults: fabric.FaultPlan{FailOps: []fabric.OpRef{{Rank: 0, Op: 0}}, Code: 0x2a}})
	_ = j.Launch("flush", 32, 32, func(t *kernel.Thread, dc fabric.DevComm) {
		if dc.Rank != 0 {
			return
		}
		w := t.WarpGroup()
		cft := fabric.NewCft(w, dc, 0)
		le, off := fabric.GetPeerLeInfo(j.Windows[0][0], 0, 1, dc)
		cft.Put(w, le, off, 16, 16)
		cft.Submit(w)
		has, report := cft.Flush(w)
		if t.Lane() == 0 {
			fmt.Printf("hasReport %v, report %#x\n", has, report)
		}
	})
	_ = j.Sim.Run()
	// Output: hasReport true, report 0x2a
}

// A barrier whose peer's arrival is lost returns ncclTimeout from the
// timeout variant instead of hanging.
func ExampleBarrierSession_SyncTimeout() {
	j, _ := job.NewFabric(job.FabricConfig{Seed: 1, Topology: fabric.Topology{NRanks: 2},
		Faults: fabric.FaultPlan{DropBarrier: []fabric.BarrierRef{{Rank: 1, Index: 0, Multimem: true}}}})
	res := make([]fabric.Result, 2)
	_ = j.Launch("timeout", 32, 32, func(t *kernel.Thread, dc fabric.DevComm) {
		w := t.WarpGroup()
		bar := fabric.NewCftBarrierSession(w, dc, 0, true)
		r := bar.SyncTimeout(w, fabric.AcqRel, fabric.ProxyGeneric, fabric.ProxyGeneric, 1_000_000)
		if t.Lane() == 0 {
			res[dc.Rank] = r
		}
	})
	_ = j.Sim.Run()
	fmt.Println(res)
	// Output: [ncclTimeout ncclTimeout]
}

// In debug mode a generic load of fabric-written data that no fence or
// barrier ordered is reported with the missing fence.
func ExampleMemFence() {
	j, _ := job.NewFabric(job.FabricConfig{Seed: 1, Topology: fabric.Topology{NRanks: 2}, Windows: []uint64{4096}, Debug: true})
	win := j.Windows[0]
	_ = j.Launch("fence", 32, 32, func(t *kernel.Thread, dc fabric.DevComm) {
		w := t.WarpGroup()
		bar := fabric.NewCftBarrierSession(w, dc, 0, false)
		if dc.Rank == 0 {
			cft := fabric.NewCft(w, dc, 0)
			le, off := fabric.GetPeerLeInfo(win[0], 0, 1, dc)
			cft.Put(w, le, off, 16, 16)
			cft.Submit(w)
			cft.Flush(w)
			// Missing: fabric.MemFence(w, dc, fabric.Release, fabric.ProxyFabric, fabric.ProxyGeneric, fabric.FenceScopeSys)
		}
		bar.Sync(w, fabric.AcqRel, fabric.ProxyGeneric, fabric.ProxyGeneric)
		if dc.Rank == 1 {
			fabric.MemFence(w, dc, fabric.Acquire, fabric.ProxyFabric, fabric.ProxyGeneric, fabric.FenceScopeSys)
			dc.Load(t, win[1], 0, make([]byte, 16))
		}
	})
	err := j.Sim.Run()
	var fe *fabric.FenceError
	if errors.As(err, &fe) {
		fmt.Println(fe.Missing)
	}
	// Output: ncclMemFence(release, Fabric, Generic, Sys) on rank 0 after its flush (or a barrier arrive with release order, producer Fabric, consumer Generic), then an acquire on rank 1
}
