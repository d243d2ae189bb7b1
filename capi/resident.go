//go:build cgo

package main

import (
	"fmt"
	"os"
	"strconv"

	"github.com/emud-dev/emud/kernel"
)

// How many blocks of a launch run at once. A GPU dispatches a grid's
// workgroups to its CUs while they have room and the rest as earlier ones
// retire (kernel.Config.Resident): a CU holds 32 waves (CDNA: 4 SIMDs of
// 8 wave slots, LLVM's occupancy figures for gfx90a, taken for gfx950)
// and 160 KiB of LDS (kernel.MaxSharedBytes); registers and static
// __shared__ variables are not counted (partial: a kernel is taken to fit
// at full occupancy). emud keeps fewer lanes alive than that: the
// launches of a run share EMUD_RESIDENT_LANES lanes alive at once
// (kernel.Pool; defaultResidentLanes), since each costs emud 10-50 KiB
// while it lives (its native stack's pages, its coroutine and records);
// the budget bounds emud's memory, not the program: when every lane
// alive waits and blocks wait to start (a grid-wide flag or barrier over
// more blocks than the budget holds), blocks start past it, up to what
// the GPU's CUs hold (kernel.Pool.Overflow), so only a wait that would
// hang on the CUs is a hang report. 65,536 holds NCCL's 01_allreduce_lsa
// on 8 ranks (16 CTAs of 512 threads a rank) at once, so it ends at 7.10 µs as on CUs that hold it
// (at 32,768 its later CTAs waited and it ended at 31.2 µs), and keeps
// NCCL's RMS-norm examples (1 Mi lanes on 8 ranks) near 2 GB; at 32,768
// they peaked at 1.2 GB in 53 s of CPU against 2.0 GB in 71 s.
const (
	cuWaves              = 32
	cuLDS                = 160 << 10
	defaultResidentLanes = 64 << 10
)

// lanePool is the run's pool of lanes alive at once: EMUD_RESIDENT_LANES,
// or its default.
func lanePool() (*kernel.Pool, error) {
	n := defaultResidentLanes
	if v := os.Getenv("EMUD_RESIDENT_LANES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			return nil, fmt.Errorf("EMUD_RESIDENT_LANES=%q: want a whole number of lanes over 0", v)
		}
	}
	p, err := kernel.NewPool(n)
	if p != nil {
		p.Hint = "EMUD_RESIDENT_LANES sets it"
	}
	return p, err
}

// residentBlocks is how many blocks of nt lanes in waves of wave lanes,
// each with lds bytes of dynamic shared memory, one GPU's CUs hold at
// once (never under one).
func residentBlocks(nt, wave int, lds uint64) int {
	perCU := cuWaves / ((nt + wave - 1) / wave)
	if lds > 0 {
		perCU = min(perCU, int(cuLDS/lds))
	}
	return max(perCU, 1) * propCUs
}
