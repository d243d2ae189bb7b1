package cft

import (
	"bytes"
	"fmt"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// CollectiveResult is what a collective scenario returns.
type CollectiveResult struct {
	Out     [][]byte // per rank, the output window as the host reads it
	Want    []byte   // the expected output (the same on every rank for all-reduce)
	Elapsed sim.Time // virtual time of the run
	Digest  string
	Reports []string // flush reports (rank: code), empty on success
}

// AllReduceConfig is the cft-allreduce scenario: every rank's buffer of
// Bytes bytes of Type elements summed over its multicast group.
type AllReduceConfig struct {
	Seed     uint64
	Topology fabric.Topology
	// Bytes is each rank's buffer, a multiple of 16. It is split into
	// CftMcSize chunks of ⌈Bytes / CftMcSize⌉ rounded up to 16 bytes (the
	// last ones shorter, or empty), one per multicast-team rank. 0 means
	// Chunk × CftMcSize.
	Bytes int
	// Chunk is the bytes per multicast-team rank when Bytes is 0, a
	// multiple of 16; 0 means 64.
	Chunk int
	// Stage is how much of its chunk a rank moves per pullRed and
	// redMultimem: a piece staged in shared memory. 0 means the chunk, at
	// most DefaultStage.
	Stage int
	Type  redop.Type // U32 (default), U64 or F32
	Debug bool
	Race  bool // the race detector (Config.Race)
	// Phantom runs on phantom windows (Config.Phantom): timing only, no
	// inputs, no outputs, no check; Out and Want are nil.
	Phantom bool
	// NoOut checks every byte as usual but leaves Out nil: no host copy
	// of every rank's output (the scale runs, where it would double the
	// memory).
	NoOut bool
	Sched job.Sched // sim.Config's perturbation and strategy
}

// DefaultStage is AllReduceConfig.Stage's cap when it is 0: a piece a
// rank stages in shared memory per operation.
const DefaultStage = 64 << 10

// AllReduceInput is rank r's input for the all-reduce scenario:
// scenario.Elements keyed by the seed (random bits for integer types,
// small integers for F32 so that every order of summation is exact).
func AllReduceInput(seed uint64, rank, n int, t redop.Type) []byte {
	b := make([]byte, n)
	scenario.Elements(b, t, seed, rank, 0)
	return b
}

// RunAllReduce builds a system and runs an all-reduce (sum) built from the
// CFT calls, one wave per rank. Each multicast team is reduced on its own
// (with the default topology that is the whole world):
//
//  1. bar.sync(acq_rel, Generic → Fabric): the inputs are published;
//  2. every rank pullReds its chunk of the input window, a Stage-sized
//     piece at a time, through the multicast LE (the reduction over every
//     member's copy) into smem, and
//  3. redMultimem(Sum)s the piece into every member's zeroed output window
//     (an all-gather by reduction);
//  4. bar.sync(acq_rel, Fabric → Generic), then a checked generic load of
//     the whole output, compared with the expected sum.
//
// It checks every byte of every rank's output and returns an error naming
// the first wrong byte (with the result: the run itself finished).
func RunAllReduce(cfg AllReduceConfig) (*CollectiveResult, error) {
	t := cfg.Type
	if t != redop.U32 && t != redop.U64 && t != redop.F32 {
		return nil, fmt.Errorf("cft-allreduce: type %v: use u32, u64 or f32", t)
	}
	topo, err := cfg.Topology.Normalize()
	if err != nil {
		return nil, err
	}
	mc := topo.CftMcSize
	size := cfg.Bytes
	if size == 0 {
		chunk := cfg.Chunk
		if chunk == 0 {
			chunk = 64
		}
		if chunk%16 != 0 || chunk <= 0 {
			return nil, fmt.Errorf("cft-allreduce: chunk %d B must be a positive multiple of 16", chunk)
		}
		size = mc * chunk
	}
	if size%16 != 0 || size <= 0 {
		return nil, fmt.Errorf("cft-allreduce: %d B per rank must be a positive multiple of 16", size)
	}
	per := ((size+mc-1)/mc + 15) &^ 15 // a chunk: what one team rank reduces
	stage := cfg.Stage
	if stage == 0 {
		stage = min(per, DefaultStage)
	}
	switch {
	case stage%16 != 0 || stage <= 0:
		return nil, fmt.Errorf("cft-allreduce: stage %d B must be a positive multiple of 16", stage)
	case 16+stage > kernel.MaxSharedBytes:
		return nil, fmt.Errorf("cft-allreduce: stage %d B does not fit shared memory (%d B)", stage, kernel.MaxSharedBytes-16)
	}
	if cfg.Phantom && cfg.Debug {
		return nil, fmt.Errorf("cft-allreduce: Phantom with Debug: the fence checker needs real bytes")
	}
	j, err := job.NewFabric(job.FabricConfig{Seed: cfg.Seed, Topology: topo, Windows: []uint64{uint64(size), uint64(size)}, Debug: cfg.Debug, Race: cfg.Race, Sched: cfg.Sched,
		Phantom: cfg.Phantom, MemBytes: max(fabric.DefaultMemBytes, 2*uint64(size)+1<<20)})
	if err != nil {
		return nil, err
	}
	in, out := j.Windows[0], j.Windows[1]
	defer j.Sys.Close()
	// Expected: per multicast group, the fold over members in team order,
	// then added into zero (the output starts zeroed). Each input is made
	// in its window and folded from there: the host holds only the
	// expected sum of each group.
	var want [][]byte
	if !cfg.Phantom {
		want = make([][]byte, topo.NRanks/mc)
		for r := 0; r < topo.NRanks; r++ {
			g := r / mc
			err := j.Sys.Fill(r, in[r], uint64(size), func(x []byte) error {
				scenario.Elements(x, t, cfg.Seed, r, 0)
				if want[g] == nil {
					want[g] = bytes.Clone(x)
					return nil
				}
				return redop.Apply(redop.Sum, t, want[g], x)
			})
			if err != nil {
				return nil, err
			}
		}
		zero := make([]byte, min(size, DefaultStage))
		for _, w := range want {
			for off := 0; off < size; off += len(zero) {
				piece := w[off:min(off+len(zero), size)]
				z := zero[:len(piece)]
				clear(z)
				if err := redop.Apply(redop.Sum, t, z, piece); err != nil {
					return nil, err
				}
				copy(piece, z)
			}
		}
	}
	red := fabric.RedOp{Op: redop.Sum, Type: t}
	res := &CollectiveResult{}
	loadErr := make([]error, topo.NRanks)
	err = j.Launch("cft-allreduce", 32, 16+stage, func(th *kernel.Thread, dc fabric.DevComm) {
		warp := th.WarpGroup()
		cft := fabric.NewCft(warp, dc, 0)
		bar := fabric.NewCftBarrierSession(warp, dc, 0, true)
		bar.Sync(warp, fabric.AcqRel, fabric.ProxyGeneric, fabric.ProxyFabric)
		team := fabric.TeamCftMultimem(dc)
		for c := team.Rank; c < mc; c += team.NRanks {
			for off, hi := c*per, min((c+1)*per, size); off < hi; off += stage {
				n := uint32(min(stage, hi-off))
				le, leOff := fabric.GetMultimemLeInfo(in[dc.Rank], uint64(off), dc)
				cft.PullRed(warp, le, leOff, red, 16, n)
				cft.Submit(warp)
				if has, code := cft.Flush(warp); has && th.Lane() == 0 {
					res.Reports = append(res.Reports, fmt.Sprintf("rank %d pullRed: report %#x", dc.Rank, code))
				}
				le, leOff = fabric.GetMultimemLeInfo(out[dc.Rank], uint64(off), dc)
				cft.RedMultimem(warp, le, leOff, red, 16, n)
				cft.Submit(warp)
				if has, code := cft.Flush(warp); has && th.Lane() == 0 {
					res.Reports = append(res.Reports, fmt.Sprintf("rank %d redMultimem: report %#x", dc.Rank, code))
				}
			}
		}
		bar.Sync(warp, fabric.AcqRel, fabric.ProxyFabric, fabric.ProxyGeneric)
		if th.Lane() == 0 && want != nil {
			// The kernel's own view of the output, piece by piece.
			buf := make([]byte, stage)
			w := want[dc.Rank/mc]
			for off := 0; off < size && loadErr[dc.Rank] == nil; off += stage {
				n := min(stage, size-off)
				dc.Load(th, out[dc.Rank], uint64(off), buf[:n])
				loadErr[dc.Rank] = sameBytes(buf[:n], w[off:off+n], "rank %d kernel load at %d", dc.Rank, off)
			}
		}
	})
	if done, err := finish(j, res, err, cfg.Phantom); err != nil {
		return nil, err
	} else if done {
		return res, nil
	}
	res.Want = want[0]
	for r := 0; r < topo.NRanks; r++ {
		// The output as the host sees it, without a copy (the system's
		// memory is released when this returns): Out gets a copy unless
		// NoOut.
		got, err := j.Sys.View(r, out[r], 0, uint64(size))
		if err != nil {
			return nil, err
		}
		if !cfg.NoOut {
			res.Out = append(res.Out, bytes.Clone(got))
		}
		if err := sameBytes(got, want[r/mc], "rank %d output", r); err != nil {
			return res, err
		}
		if loadErr[r] != nil {
			return res, loadErr[r]
		}
	}
	return res, nil
}

// sameBytes compares got with want; the error names what (format and
// args, formatted only on a mismatch) and the first wrong byte.
func sameBytes(got, want []byte, format string, args ...any) error {
	if bytes.Equal(got, want) {
		return nil
	}
	what := fmt.Sprintf(format, args...)
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
	Topology fabric.Topology
	Block    int // bytes per (source, destination) pair, a multiple of 16; 0 means 16
	Debug    bool
	Race     bool // the race detector (Config.Race)
	// Phantom runs on phantom windows (Config.Phantom): timing only, no
	// blocks made, no check; Out is nil.
	Phantom bool
	Sched   job.Sched // sim.Config's perturbation and strategy
}

// AllToAllBlock is the block rank src sends to rank dst: scenario.Pattern
// keyed by the seed.
func AllToAllBlock(seed uint64, src, dst, n int) []byte {
	return scenario.PatternOf(uint64(n), seed, src, dst)
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
	if cfg.Phantom && cfg.Debug {
		return nil, fmt.Errorf("all-to-all: Phantom with Debug: the fence checker needs real bytes")
	}
	j, err := job.NewFabric(job.FabricConfig{Seed: cfg.Seed, Topology: topo, Caps: fabric.CapCft, Windows: []uint64{uint64(size)}, Debug: cfg.Debug, Race: cfg.Race, Phantom: cfg.Phantom, Sched: cfg.Sched})
	if err != nil {
		return nil, err
	}
	defer j.Sys.Close()
	recv := j.Windows[0]
	res := &CollectiveResult{}
	loaded := make([][]byte, topo.NRanks)
	err = j.Launch("cft-alltoall", 32, 16+size, func(th *kernel.Thread, dc fabric.DevComm) {
		warp := th.WarpGroup()
		me := dc.CftRank
		base := dc.Rank - me // world rank of flat rank 0
		if !cfg.Phantom {
			blkBuf := make([]byte, blk)
			for p := th.Lane(); p < n; p += 32 {
				scenario.Pattern(blkBuf, cfg.Seed, dc.Rank, base+p)
				th.SharedStore(16+p*blk, blkBuf)
			}
		}
		fabric.MemFence(warp, dc, fabric.Release, fabric.ProxyGeneric, fabric.ProxyFabric, fabric.FenceScopeCta)
		cft := fabric.NewCft(warp, dc, 0)
		bar := fabric.NewCftBarrierSession(warp, dc, 0, false)
		for p := th.Lane(); p < n; p += 32 {
			if p == me {
				dc.Store(th, recv[dc.Rank], uint64(me*blk), th.Shared()[16+p*blk:16+(p+1)*blk])
				continue
			}
			le, off := fabric.GetPeerLeInfo(recv[dc.Rank], uint64(me*blk), base+p, dc)
			cft.Put(th.ThreadGroup(), le, off, 16+p*blk, uint32(blk))
		}
		cft.Submit(th.ThreadGroup())
		if has, code := cft.Flush(warp); has && th.Lane() == 0 {
			res.Reports = append(res.Reports, fmt.Sprintf("rank %d: report %#x", dc.Rank, code))
		}
		bar.Sync(warp, fabric.AcqRel, fabric.ProxyFabric, fabric.ProxyGeneric)
		if th.Lane() == 0 && !cfg.Phantom {
			loaded[dc.Rank] = make([]byte, size)
			dc.Load(th, recv[dc.Rank], 0, loaded[dc.Rank])
		}
	})
	if done, err := finish(j, res, err, cfg.Phantom); err != nil {
		return nil, err
	} else if done {
		return res, nil
	}
	want := make([]byte, blk)
	for r := 0; r < topo.NRanks; r++ {
		got, err := j.Sys.Read(r, recv[r], 0, uint64(size))
		if err != nil {
			return nil, err
		}
		res.Out = append(res.Out, got)
		base := r - topo.CftRank(r)
		for p := 0; p < n; p++ {
			scenario.Pattern(want, cfg.Seed, base+p, r)
			if err := sameBytes(got[p*blk:(p+1)*blk], want, "rank %d block from rank %d", r, base+p); err != nil {
				return res, err
			}
			if err := sameBytes(loaded[r][p*blk:(p+1)*blk], want, "rank %d kernel load of block from rank %d", r, base+p); err != nil {
				return res, err
			}
		}
	}
	return res, nil
}

// finish runs a collective whose kernels launched (launchErr nil) and
// files its time and digest in res; done says there is nothing left to
// check (a phantom run).
func finish(j *job.Fabric, res *CollectiveResult, launchErr error, phantom bool) (done bool, err error) {
	if launchErr != nil {
		return true, launchErr
	}
	if err := j.Sim.Run(); err != nil {
		return true, err
	}
	res.Elapsed, res.Digest = j.Sim.Now(), j.Sim.Digest()
	return phantom, nil
}
