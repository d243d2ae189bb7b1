package fabric

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// JobConfig describes a ready-to-run system: every rank's communicator, a
// CFT dev comm and the same list of symmetric windows on every rank.
type JobConfig struct {
	Seed     uint64
	Topology Topology
	Caps     CftCap // 0 means CapCft | CapCftMultimem
	Barriers int    // cftBarrierCount; 0 means 1
	Windows  []uint64
	Debug    bool
	Faults   FaultPlan
	Model    *Model
	Watchdog sim.Time // sim.Config.Watchdog
}

// Job is a built system: Windows[k][r] is rank r's copy of window k.
type Job struct {
	Sim      *sim.Sim
	Sys      *System
	Comms    []*Comm
	DevComms []DevComm
	Windows  [][]Window
}

// NewJob builds a system of cfg.Topology.NRanks ranks on a new simulator
// seeded with cfg.Seed: comms, dev comms and windows, ready for kernels.
func NewJob(cfg JobConfig) (*Job, error) {
	s := sim.New(sim.Config{Seed: cfg.Seed, Watchdog: cfg.Watchdog})
	sys, err := NewSystem(s, Config{Topology: cfg.Topology, Debug: cfg.Debug, Faults: cfg.Faults, Model: cfg.Model, Env: map[string]string{}})
	if err != nil {
		return nil, err
	}
	comms, err := sys.CommInitAll(CommConfig{})
	if err != nil {
		return nil, err
	}
	j := &Job{Sim: s, Sys: sys, Comms: comms, Windows: make([][]Window, len(cfg.Windows))}
	caps := cfg.Caps
	if caps == 0 {
		caps = CapCft | CapCftMultimem
	}
	nB := cfg.Barriers
	if nB == 0 {
		nB = 1
	}
	for _, c := range comms {
		for k, n := range cfg.Windows {
			w, err := CommWindowRegister(c, n, WinCollSymmetric)
			if err != nil {
				return nil, err
			}
			j.Windows[k] = append(j.Windows[k], w)
		}
		dc, err := DevCommCreate(c, DevCommRequirements{CftCaps: caps, CftBarrierCount: nB})
		if err != nil {
			return nil, err
		}
		j.DevComms = append(j.DevComms, dc)
	}
	return j, nil
}

// Launch starts fn on every rank: one block of threads (a single wave of
// 32 lanes when threads is 32) on GPU r, with shared bytes of shared memory.
func (j *Job) Launch(name string, threads, shared int, fn func(t *kernel.Thread, dc DevComm)) error {
	for r, dc := range j.DevComms {
		if _, err := kernel.Launch(j.Sim, kernel.Config{Name: name, GPU: r, Grid: 1, Block: threads, WaveSize: 32, SharedBytes: shared},
			func(t *kernel.Thread) { fn(t, dc) }); err != nil {
			return err
		}
	}
	return nil
}

// CollectiveResult is what a collective scenario returns.
type CollectiveResult struct {
	Out     [][]byte // per rank, the output window as the host reads it
	Want    []byte   // the expected output (the same on every rank for all-reduce)
	Elapsed sim.Time // virtual time of the run
	Digest  string
	Reports []string // flush reports (rank: code), empty on success
}

// AllReduceConfig is the cft-allreduce scenario: NRanks ranks, Chunk bytes
// per rank of Type elements summed (U32, U64 or F32).
type AllReduceConfig struct {
	Seed     uint64
	Topology Topology
	Chunk    int        // bytes per multicast-team rank, a multiple of 16; 0 means 64
	Type     redop.Type // U32 (default), U64 or F32
	Debug    bool
}

// AllReduceInput is rank r's input for the all-reduce scenario, derived
// from the seed: random bits for integer types, small integers for F32 so
// that every order of summation is exact.
func AllReduceInput(seed uint64, rank, n int, t redop.Type) []byte {
	rng := rand.New(rand.NewPCG(seed, uint64(rank)+1))
	b := make([]byte, n)
	switch t {
	case redop.F32:
		for i := 0; i+4 <= n; i += 4 {
			binary.LittleEndian.PutUint32(b[i:], math.Float32bits(float32(rng.IntN(129)-64)))
		}
	default:
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
	}
	return b
}

// RunAllReduce builds a system and runs an all-reduce (sum) built from the
// CFT calls, one wave per rank. Each multicast team is reduced on its own
// (with the default topology that is the whole world):
//
//  1. bar.sync(acq_rel, Generic → Fabric): the inputs are published;
//  2. every rank pullReds its chunks of the input window through the
//     multicast LE (the reduction over every member's copy) into smem;
//  3. redMultimem(Sum) adds each reduced chunk into every member's zeroed
//     output window (an all-gather by reduction);
//  4. bar.sync(acq_rel, Fabric → Generic), then a checked generic load.
//
// It checks every byte of every rank's output and returns an error naming
// the first wrong byte.
func RunAllReduce(cfg AllReduceConfig) (*CollectiveResult, error) {
	t := cfg.Type
	if t != redop.U32 && t != redop.U64 && t != redop.F32 {
		return nil, fmt.Errorf("cft-allreduce: type %v: use u32, u64 or f32", t)
	}
	chunk := cfg.Chunk
	if chunk == 0 {
		chunk = 64
	}
	if chunk%16 != 0 || chunk <= 0 {
		return nil, fmt.Errorf("cft-allreduce: chunk %d B must be a positive multiple of 16", chunk)
	}
	topo, err := cfg.Topology.Normalize()
	if err != nil {
		return nil, err
	}
	mc := topo.CftMcSize
	size := mc * chunk
	if 16+chunk > kernel.MaxSharedBytes {
		return nil, fmt.Errorf("cft-allreduce: chunk %d B does not fit shared memory", chunk)
	}
	j, err := NewJob(JobConfig{Seed: cfg.Seed, Topology: topo, Windows: []uint64{uint64(size), uint64(size)}, Debug: cfg.Debug})
	if err != nil {
		return nil, err
	}
	in, out := j.Windows[0], j.Windows[1]
	inputs := make([][]byte, topo.NRanks)
	for r := range inputs {
		inputs[r] = AllReduceInput(cfg.Seed, r, size, t)
		if err := j.Sys.Write(r, in[r], 0, inputs[r]); err != nil {
			return nil, err
		}
	}
	red := RedOp{Op: redop.Sum, Type: t}
	res := &CollectiveResult{}
	loaded := make([][]byte, topo.NRanks)
	err = j.Launch("cft-allreduce", 32, 16+chunk, func(th *kernel.Thread, dc DevComm) {
		warp := th.WarpGroup()
		cft := NewCft(warp, dc, 0)
		bar := NewCftBarrierSession(warp, dc, 0, true)
		bar.Sync(warp, AcqRel, ProxyGeneric, ProxyFabric)
		team := TeamCftMultimem(dc)
		for c := team.Rank; c < mc; c += team.NRanks {
			le, off := GetMultimemLeInfo(in[dc.Rank], uint64(c*chunk), dc)
			cft.PullRed(warp, le, off, red, 16, uint32(chunk))
			cft.Submit(warp)
			if has, code := cft.Flush(warp); has && th.Lane() == 0 {
				res.Reports = append(res.Reports, fmt.Sprintf("rank %d pullRed: report %#x", dc.Rank, code))
			}
			le, off = GetMultimemLeInfo(out[dc.Rank], uint64(c*chunk), dc)
			cft.RedMultimem(warp, le, off, red, 16, uint32(chunk))
			cft.Submit(warp)
			if has, code := cft.Flush(warp); has && th.Lane() == 0 {
				res.Reports = append(res.Reports, fmt.Sprintf("rank %d redMultimem: report %#x", dc.Rank, code))
			}
		}
		bar.Sync(warp, AcqRel, ProxyFabric, ProxyGeneric)
		if th.Lane() == 0 {
			loaded[dc.Rank] = make([]byte, size)
			dc.Load(th, out[dc.Rank], 0, loaded[dc.Rank])
		}
	})
	if err != nil {
		return nil, err
	}
	if err := j.Sim.Run(); err != nil {
		return nil, err
	}
	res.Elapsed, res.Digest = j.Sim.Now(), j.Sim.Digest()
	// Expected: per multicast group, the fold over members in team order,
	// then added into zero.
	for g := 0; g < topo.NRanks/mc; g++ {
		ins := make([][]byte, mc)
		for i := range ins {
			ins[i] = inputs[g*mc+i]
		}
		want := make([]byte, size)
		if err := redop.Reduce(redop.Sum, t, want, ins...); err != nil {
			return nil, err
		}
		zero := make([]byte, size)
		if err := redop.Apply(redop.Sum, t, zero, want); err != nil {
			return nil, err
		}
		want = zero
		if g == 0 {
			res.Want = want
		}
		for i := 0; i < mc; i++ {
			r := g*mc + i
			got, err := j.Sys.Read(r, out[r], 0, uint64(size))
			if err != nil {
				return nil, err
			}
			res.Out = append(res.Out, got)
			if err := sameBytes(fmt.Sprintf("rank %d output", r), got, want); err != nil {
				return res, err
			}
			if err := sameBytes(fmt.Sprintf("rank %d kernel load", r), loaded[r], want); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

func sameBytes(what string, got, want []byte) error {
	if len(got) != len(want) {
		return fmt.Errorf("%s: %d B, want %d B", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("%s: byte %d is %#02x, want %#02x", what, i, got[i], want[i])
		}
	}
	return nil
}

// AllToAllConfig is the all-to-all scenario: every rank sends Block bytes
// to every rank.
type AllToAllConfig struct {
	Seed     uint64
	Topology Topology
	Block    int // bytes per (source, destination) pair, a multiple of 16; 0 means 16
	Debug    bool
}

// AllToAllBlock is the block rank src sends to rank dst.
func AllToAllBlock(seed uint64, src, dst, n int) []byte {
	rng := rand.New(rand.NewPCG(seed^0xa11, uint64(src)<<20|uint64(dst)))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// RunAllToAll runs an all-to-all built from Put within each flat CFT team:
// the lanes stage every outgoing block in shared memory, fence
// (release, Generic → Fabric, Cta), and each lane puts the blocks of peers
// lane, lane + 32, … (its own thread group issues and submits); one warp
// flush covers them all; the own block is a generic store. A barrier
// (acq_rel, Fabric → Generic) ends it. Every byte is checked.
func RunAllToAll(cfg AllToAllConfig) (*CollectiveResult, error) {
	blk := cfg.Block
	if blk == 0 {
		blk = 16
	}
	if blk%16 != 0 || blk < 0 {
		return nil, fmt.Errorf("all-to-all: block %d B must be a positive multiple of 16", blk)
	}
	topo, err := cfg.Topology.Normalize()
	if err != nil {
		return nil, err
	}
	n := topo.CftSize
	size := n * blk
	if 16+size > kernel.MaxSharedBytes {
		return nil, fmt.Errorf("all-to-all: %d ranks × %d B do not fit shared memory", n, blk)
	}
	j, err := NewJob(JobConfig{Seed: cfg.Seed, Topology: topo, Caps: CapCft, Windows: []uint64{uint64(size)}, Debug: cfg.Debug})
	if err != nil {
		return nil, err
	}
	recv := j.Windows[0]
	res := &CollectiveResult{}
	loaded := make([][]byte, topo.NRanks)
	err = j.Launch("cft-alltoall", 32, 16+size, func(th *kernel.Thread, dc DevComm) {
		warp := th.WarpGroup()
		me := dc.CftRank
		base := dc.Rank - me // world rank of flat rank 0
		for p := th.Lane(); p < n; p += 32 {
			copy(th.Shared()[16+p*blk:], AllToAllBlock(cfg.Seed, dc.Rank, base+p, blk))
		}
		MemFence(warp, dc, Release, ProxyGeneric, ProxyFabric, FenceScopeCta)
		cft := NewCft(warp, dc, 0)
		bar := NewCftBarrierSession(warp, dc, 0, false)
		for p := th.Lane(); p < n; p += 32 {
			if p == me {
				dc.Store(th, recv[dc.Rank], uint64(me*blk), th.Shared()[16+p*blk:16+(p+1)*blk])
				continue
			}
			le, off := GetPeerLeInfo(recv[dc.Rank], uint64(me*blk), base+p, dc)
			cft.Put(th.ThreadGroup(), le, off, 16+p*blk, uint32(blk))
		}
		cft.Submit(th.ThreadGroup())
		if has, code := cft.Flush(warp); has && th.Lane() == 0 {
			res.Reports = append(res.Reports, fmt.Sprintf("rank %d: report %#x", dc.Rank, code))
		}
		bar.Sync(warp, AcqRel, ProxyFabric, ProxyGeneric)
		if th.Lane() == 0 {
			loaded[dc.Rank] = make([]byte, size)
			dc.Load(th, recv[dc.Rank], 0, loaded[dc.Rank])
		}
	})
	if err != nil {
		return nil, err
	}
	if err := j.Sim.Run(); err != nil {
		return nil, err
	}
	res.Elapsed, res.Digest = j.Sim.Now(), j.Sim.Digest()
	for r := 0; r < topo.NRanks; r++ {
		got, err := j.Sys.Read(r, recv[r], 0, uint64(size))
		if err != nil {
			return nil, err
		}
		res.Out = append(res.Out, got)
		base := r - topo.CftRank(r)
		for p := 0; p < n; p++ {
			want := AllToAllBlock(cfg.Seed, base+p, r, blk)
			if err := sameBytes(fmt.Sprintf("rank %d block from rank %d", r, base+p), got[p*blk:(p+1)*blk], want); err != nil {
				return res, err
			}
			if err := sameBytes(fmt.Sprintf("rank %d kernel load of block from rank %d", r, base+p), loaded[r][p*blk:(p+1)*blk], want); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}
