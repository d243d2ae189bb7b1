//go:build cgo

package main

/*
#include "lane.h"
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"strconv"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// The virtual time a lane's own code takes between its device calls
// (issue 38: lane code took none). lane.c counts, in every lane, the bytes
// of device memory its instrumented code stores; at the lane's next
// device call the count becomes the lane's debt, and the wave, before its
// group's call runs (kernel.Config.Between), sleeps for the largest debt
// among the group's lanes at laneCycles CU cycles per 16 bytes. The lanes
// of a wave run their code once, in lock-step, so the wave pays for its
// busiest lane, not for the sum; divergent groups pay each for its own
// lanes, as a wave runs divergent paths one after another; lanes that
// returned are paid for when the whole wave has. The cost is perturbed
// per use (sim.KeyLane, by GPU) at perturbation levels 1 and 2 as the
// model's CU costs are, and exact at level 0.
//
// The figure: defaultLaneCycles CU cycles per 16 bytes a lane stores, at
// the model's CU clock (model.ClockGHz: 2.4 GHz for the MI355X, AMD's
// specification). A wave64 vector memory instruction moves up to 16 bytes
// a lane (a dwordx4) and issues over 4 cycles on a CDNA compute unit's
// 16-lane SIMD (AMD's CDNA3 ISA reference: a wave64 executes a vector
// instruction in four passes of 16 lanes). Memory latency is not added:
// stores do not wait, and a load's latency overlaps until its value is
// used, which emud cannot see; the figure is a lower bound.
//
// What is counted is chosen so that results do not depend on compiler
// flags (the design's rule): bytes, not accesses, so that -O2's merging
// of two 8-byte stores into one of 16 does not move the time; each byte
// once per span between device calls (lane.c cost_bytes), so that -O0
// storing a value twice costs no more; and stores only, because loads
// depend on the flags in ways no count can undo: -O0 copies a struct
// whole where -O2 loads the one field used. With a user's MORI header,
// whose code copies and rereads its queue handle, counting loads gave
// -O0 and -O2 different times and digests (cxx TestMoriPut).
// Lane code that stores to no
// device memory (its stack, the kernel's arguments, shared memory (LDS):
// partial for LDS, which costs on a GPU) is charged nothing, so at level
// 0 a program whose lanes only make device calls keeps its timing and
// digest; a lane loop of 16 Ki 8-byte stores costs 13.7 µs. A program
// built with -fno-sanitize=thread has no counts: its lane code takes no
// time, as before.
//
// Partial: the debt is paid at the lane's next device call that gathers
// its group (ccoSdma and barrier calls, __syncthreads, ballots, shuffles,
// spins and, when the lane has a debt, clock reads), so the stores of the
// span land at its start and an atomic store (a flag raised after the
// work) made before such a call lands before the wave has paid.
//
// In an NCCL program the bytes a lane loads from and stores to other
// GPUs' slices (peers' LSA windows) are the fabric's time, not the CU's:
// lane.c counts them (peer_ld, peer_st) once ncclDevCommCreate has set
// lsa_gpus, and fabric.LaneCode charges the wave one latency for its
// peer loads and their bytes and its peer stores' bytes on package
// fabric's ports (docs/timing.md). A peer load's bytes are those the
// code loads, so they may depend on compiler flags as the CU cost's
// would; an LSA load of a float is one 4-byte load at any -O.
//
// EMUD_LANE_COST sets the CU cycles per 16 bytes: a number 0..1e6, 0 (or
// "off") for none, as before this model. Host code's cost is
// hostcost.go's (EMUD_HOST_GBPS, off unless set).
const defaultLaneCycles = fabric.DefaultLaneCycles

// laneCode is the run's lane-code cost: package fabric's LaneCode, which
// package fabric's Go kernels pay through too. Its CU cycles per 16 bytes
// and clock are the run's (setLaneCost); an NCCL dev comm gives it the
// fabric's ports (lsaTiming), so that lanes' loads from and stores to
// peers' LSA windows take the fabric's time (docs/timing.md).
var laneCode *fabric.LaneCode

// laneCostFromEnv reads EMUD_LANE_COST (CU cycles per 16 bytes).
func laneCostFromEnv() (float64, error) {
	v := os.Getenv("EMUD_LANE_COST")
	switch v {
	case "":
		return defaultLaneCycles, nil
	case "off":
		return 0, nil
	}
	c, err := strconv.ParseFloat(v, 64)
	if err != nil || c < 0 || math.IsNaN(c) || c > 1e6 {
		return 0, fmt.Errorf("EMUD_LANE_COST=%q: want the CU cycles 16 bytes of a lane's device-memory accesses cost, 0..1e6 (default %d), or off", v, defaultLaneCycles)
	}
	return c, nil
}

// setLaneCost fixes the run's model: cycles per 16 bytes at the CU clock
// of the node's model.
func setLaneCost(cycles, ghz float64) {
	laneCode = fabric.NewLaneCode(rt.s, cycles, ghz, nil)
}

// lsaTiming turns on the fabric's time for lanes' LSA peer accesses (an
// NCCL dev comm was created): lane.c counts accesses to other GPUs'
// slices from now on, and ports time them. MORI programs never call it,
// so their lanes keep the CU cost alone.
func lsaTiming(ports *fabric.Ports) {
	if ports == nil || lsaTimed {
		return
	}
	lsaTimed = true
	laneCode.SetPorts(ports)
	C.emud_set_lsa_gpus(C.int(rt.j.Node.GPUs()))
}

// lsaTimed: lsaTiming ran.
var lsaTimed bool

// ncclDevs are the dev comms (by handle) ncclDevCommCreate made: their
// LSA barriers' signals take the fabric's time.
var ncclDevs = map[uint64]bool{}

// laneBetween is the launch's kernel.Config.Between: nil with no cost.
func laneBetween() func(*sim.Actor, []*kernel.Thread) {
	if laneCode == nil || !laneCode.On() {
		return nil
	}
	return laneCode.Pay
}

// takeAccesses moves what the lane's code counted since it last ran into
// its debt: a peer's stores are the fabric's, not the CU's.
func (ln *lane) takeAccesses() {
	if n := uint64(ln.l.nbytes); n != 0 || ln.l.peer_ld != 0 {
		st, ld := uint64(ln.l.peer_st), uint64(ln.l.peer_ld)
		ln.l.nbytes, ln.l.peer_st, ln.l.peer_ld = 0, 0, 0
		// A new span: its bytes count afresh (lane.c cost_bytes).
		ln.l.cost_g = [64]C.uint64_t{}
		laneCode.Add(ln.t, n-st, ld, st)
	}
}
