package model

import (
	"fmt"

	"github.com/emud-dev/emud/sim"
)

// Engines describes one GPU's set of SDMA engines and how queues share
// them. The engine package places each queue on one engine by [Engines.Place]
// and lets an engine serve its active queues time-sliced.
//
// Sources (docs/sdma-hardware.md §4.4):
//   - KFD topology reports NumSdmaEngines (general engines: host links and
//     loopback), NumSdmaXgmiEngines and NumSdmaQueuesPerEngine; MI300X and
//     MI355X report 2 + 14 engines, 8 queues per engine (MORI anvil.cpp:
//     "gfx950: 8 queues/engine, only engines 0-1 general").
//   - KFD's kfd_set_recommended_sdma_engines gives each outbound xGMI link
//     of an 8-GPU hive its own recommended engines (RecSdmaEngIdMask); MORI
//     anvil.cpp reads that mask ("on MI350 the mask typically reports 2
//     engines per peer") and puts channel c on engines[c mod n]; loopback
//     channels all use engine 0.
//   - The time slice is the context quantum KFD programs into every SDMA
//     user queue (kfd_mqd_manager_v9: SDMA0_SDMA_QUEUE0_SCHEDULE_CNTL
//     CONTEXT_QUANTUM = amdgpu_sdma_phase_quantum, default 32, in units of
//     1K GPU clock cycles).
type Engines struct {
	// General is the number of engines serving host links and loopback.
	General int
	// XGMI is the number of engines serving peer (xGMI) links.
	XGMI int
	// PerLink is how many engines KFD recommends per peer link. 0 means
	// every queue has an engine of its own (no sharing: the uncalibrated
	// placeholder's simplification).
	PerLink int
	// QueuesPerEngine is how many queues one engine can hold; creating
	// one more fails, as KFD's queue creation does.
	QueuesPerEngine int
	// Slice is how long a queue keeps a shared engine while other queues
	// on it have work (packets are never split: a packet that starts runs
	// to its end).
	Slice sim.Time
	// Links, if set, names the engines recommended for each peer link
	// instead of KFD's rule: Links[k] for the k-th other GPU (the mask a
	// platform's io links report); a link past the end uses the rule.
	Links [][]int
}

// Dedicated reports whether every queue has an engine of its own.
func (e Engines) Dedicated() bool { return e.PerLink == 0 }

// Validate reports a layout no GPU could have.
func (e Engines) Validate() error {
	switch {
	case e.PerLink == 0:
		return nil
	case e.PerLink < 0 || e.PerLink > 64:
		return fmt.Errorf("engines per link %d: need 0..64", e.PerLink)
	case e.General < 1 || e.General > 64:
		return fmt.Errorf("general SDMA engines %d: need 1..64 (loopback uses engine 0)", e.General)
	case e.XGMI < 0 || e.XGMI > 64:
		return fmt.Errorf("xGMI SDMA engines %d: need 0..64", e.XGMI)
	case e.QueuesPerEngine < 1 || e.QueuesPerEngine > 1024:
		return fmt.Errorf("queues per engine %d: need 1..1024", e.QueuesPerEngine)
	case e.Slice < 0:
		return fmt.Errorf("engine time slice %v: need ≥ 0", e.Slice)
	}
	for k, l := range e.Links {
		if len(l) == 0 || len(l) > 64 {
			return fmt.Errorf("engine links: peer link %d names %d engines: need 1..64", k, len(l))
		}
		for _, id := range l {
			if id < 0 || id >= e.General+e.XGMI {
				return fmt.Errorf("engine links: peer link %d names engine %d: the GPU has engines 0..%d", k, id, e.General+e.XGMI-1)
			}
		}
	}
	return nil
}

// Count is the number of engines per GPU (General + XGMI), 0 when
// Dedicated.
func (e Engines) Count() int {
	if e.Dedicated() {
		return 0
	}
	return e.General + e.XGMI
}

// Place returns the engine index, within GPU gpu's engines, of queue
// channel c toward peer: MORI's rule over KFD's
// recommended engines. Loopback uses engine 0. Peer link k (the k-th other
// GPU in id order) is recommended xGMI engines General + (k·PerLink + i)
// mod XGMI for i < PerLink (disjoint per link when the hive has enough
// engines, as KFD's map gives an 8-GPU MI300X/MI355X hive; the map's
// permutation of engine ids does not change timing); channel c uses the
// (c mod PerLink)-th of them. Without xGMI engines the general engines
// serve peer links too. Links overrides the rule per link. On a Dedicated layout there is no shared engine
// to name: Place returns −1.
func (e Engines) Place(gpu, peer, c int) int {
	if e.Dedicated() {
		return -1
	}
	if gpu == peer {
		return 0
	}
	k := peer
	if peer > gpu {
		k--
	}
	if k < len(e.Links) {
		return e.Links[k][c%len(e.Links[k])]
	}
	i := k*e.PerLink + c%e.PerLink
	if e.XGMI == 0 {
		return i % e.General
	}
	return e.General + i%e.XGMI
}
