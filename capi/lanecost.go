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
// EMUD_LANE_COST sets the CU cycles per 16 bytes: a number 0..1e6, 0 (or
// "off") for none, as before this model. Host code's cost is
// hostcost.go's (EMUD_HOST_GBPS, off unless set).
const defaultLaneCycles = 4

// laneCost is the run's model: CU cycles per 16 bytes (0: off), clock.
var laneCost struct {
	cycles float64
	ghz    float64
}

// laneDebt is each lane's device-memory bytes not yet paid for (touched only
// by the running actor).
var laneDebt = map[*kernel.Thread]uint64{}

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
	if ghz <= 0 {
		ghz = 2.4
	}
	laneCost.cycles, laneCost.ghz = cycles, ghz
}

// laneBetween is the launch's kernel.Config.Between: nil with the cost off.
func laneBetween() func(*sim.Actor, []*kernel.Thread) {
	if laneCost.cycles == 0 {
		return nil
	}
	return payLaneCode
}

// takeAccesses moves what the lane's code counted since it last ran into
// its debt.
func (ln *lane) takeAccesses() {
	if n := uint64(ln.l.nbytes); n != 0 {
		ln.l.nbytes = 0
		// A new span: its bytes count afresh (lane.c cost_bytes).
		ln.l.cost_g = [64]C.uint64_t{}
		laneDebt[ln.t] += n
	}
}

// payLaneCode makes the wave (actor a) sleep for the code its lanes ran
// since their last call: the largest debt among them.
func payLaneCode(a *sim.Actor, lanes []*kernel.Thread) {
	var most uint64
	gpu := -1
	for _, t := range lanes {
		if d, ok := laneDebt[t]; ok {
			most = max(most, d)
			gpu = t.GPU()
			delete(laneDebt, t)
		}
	}
	if most == 0 {
		return
	}
	d := sim.Time(math.Round(float64(most) / 16 * laneCost.cycles / laneCost.ghz * float64(sim.Nanosecond)))
	if d <= 0 {
		return
	}
	a.Sleep(rt.s.Perturb().Duration(sim.Key{Kind: sim.KeyLane, A: uint32(gpu)}, d))
}
