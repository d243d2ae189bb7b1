package model

import (
	"fmt"
	"math/bits"

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
//     engines per peer") and puts channel c on engines[c mod n], the mask's
//     engines in id order, falling back to its static OAM map when the mask
//     is empty; engines fused off on a part are absent from the masks.
//     Loopback has no self io link: MORI pins it to engine 0, except on
//     gfx1250, where it spreads over the host link's engines (all 16 there)
//     because ROCr's blit queues already sit on the low ones and a pinned
//     sixth channel fails with NO_MEMORY.
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
	// FusedOff lists the engines fused off on this part (harvested): KFD's
	// masks never name them, so no queue is placed on one through a mask.
	// A queue placed on one anyway (MORI's fallbacks: loopback's engine 0,
	// the static OAM map when a link's mask is empty) fails to be created.
	FusedOff []int
	// SpreadLoopback spreads loopback channels over the engines of the
	// GPU's link to the host (HostLink), channel c on the (c mod n)-th, as
	// MORI's anvil does on gfx1250 only; otherwise every loopback channel
	// uses engine 0.
	SpreadLoopback bool
	// HostLink, if set, lists the engines KFD recommends for the GPU's link
	// to the host (what MORI's getHostLinkEngineMask reads); nil: the
	// general engines.
	HostLink []int
	// Runtime is how many queues the runtime holds on each engine before
	// the program makes any (ROCr's blit queues), by engine id; they count
	// against QueuesPerEngine. nil: none.
	Runtime []int
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
	nEng := e.General + e.XGMI
	if nEng > 64 {
		return fmt.Errorf("%d SDMA engines: KFD's engine masks are 64 bits wide at most here (need General + XGMI ≤ 64)", nEng)
	}
	for _, id := range e.FusedOff {
		if id < 0 || id >= nEng {
			return fmt.Errorf("fused-off engine %d: the GPU has engines 0..%d", id, nEng-1)
		}
	}
	for _, id := range e.HostLink {
		if id < 0 || id >= nEng {
			return fmt.Errorf("host-link engine %d: the GPU has engines 0..%d", id, nEng-1)
		}
	}
	if len(e.Runtime) > nEng {
		return fmt.Errorf("runtime queues given for %d engines: the GPU has %d", len(e.Runtime), nEng)
	}
	for id, n := range e.Runtime {
		if n < 0 || n > e.QueuesPerEngine {
			return fmt.Errorf("runtime queues on engine %d: %d, need 0..%d (queues per engine)", id, n, e.QueuesPerEngine)
		}
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

// Mask is KFD's recommended SDMA engine mask for GPU gpu's link to peer
// (an io link's RecSdmaEngIdMask, bit i for engine i): link k (the k-th
// other GPU in id order) is recommended xGMI engines General + (k·PerLink
// + i) mod XGMI for i < PerLink (disjoint per link when the hive has
// enough engines, as KFD's map gives an 8-GPU MI300X/MI355X hive; the
// map's permutation of engine ids does not change timing), or the general
// engines when there are no xGMI engines, or Links[k] where given. Fused-
// off engines are absent. 0 for loopback (there is no self io link) and on
// a Dedicated layout.
func (e Engines) Mask(gpu, peer int) uint64 {
	if e.Dedicated() || gpu == peer {
		return 0
	}
	k := peer
	if peer > gpu {
		k--
	}
	var m uint64
	if k < len(e.Links) {
		for _, id := range e.Links[k] {
			m |= 1 << id
		}
	} else {
		for i := range e.PerLink {
			j := k*e.PerLink + i
			if e.XGMI == 0 {
				m |= 1 << (j % e.General)
			} else {
				m |= 1 << (e.General + j%e.XGMI)
			}
		}
	}
	return m &^ e.fusedMask()
}

// HostLinkMask is KFD's recommended mask for the GPU's link to the host:
// HostLink's engines, else the general ones; fused-off engines absent.
func (e Engines) HostLinkMask() uint64 {
	var m uint64
	if e.HostLink != nil {
		for _, id := range e.HostLink {
			m |= 1 << id
		}
	} else {
		m = 1<<e.General - 1
	}
	return m &^ e.fusedMask()
}

func (e Engines) fusedMask() uint64 {
	var m uint64
	for _, id := range e.FusedOff {
		m |= 1 << id
	}
	return m
}

// IsFusedOff reports whether engine id is fused off.
func (e Engines) IsFusedOff(id int) bool { return id >= 0 && e.fusedMask()&(1<<id) != 0 }

// Held is how many queues the runtime holds on engine id (Runtime).
func (e Engines) Held(id int) int {
	if id < 0 || id >= len(e.Runtime) {
		return 0
	}
	return e.Runtime[id]
}

// oamEngine is MORI anvil's static fallback when a link's mask is empty:
// mi300xOamMap[src][dst] × 2 (even engines only), by OAM id (emud's GPU
// ids are OAM ids; the map is 8 × 8, so larger ids wrap).
var oamMap = [8][8]int{{0, 7, 6, 1, 2, 4, 5, 3}, {7, 0, 1, 5, 4, 2, 3, 6}, {5, 1, 0, 6, 7, 3, 2, 4}, {1, 6, 5, 0, 3, 7, 4, 2},
	{2, 4, 7, 3, 0, 5, 6, 1}, {4, 2, 3, 7, 6, 0, 1, 5}, {5, 3, 2, 4, 6, 1, 0, 7}, {3, 6, 4, 2, 1, 5, 7, 0}}

func oamEngine(gpu, peer int) int { return oamMap[gpu%8][peer%8] * 2 }

// Place returns the engine index, within GPU gpu's engines, of queue
// channel c toward peer, as MORI's anvil (AnvilLib::connect) picks it:
// for a peer, the engines of the link's recommended mask (Mask) in id
// order, channel c on the (c mod n)-th, or, when the mask is empty (every
// recommended engine fused off), the static OAM map's engine; for
// loopback, engine 0, or with SpreadLoopback the host-link mask's engines
// the same way (engine 0 if it is empty). The engine may be fused off
// when a fallback chose it: the caller's queue creation fails then. On a
// Dedicated layout there is no shared engine to name: Place returns −1.
//
// Source: MORI src/application/transport/sdma/anvil.cpp (connect,
// getRecommendedEngineMask, getHostLinkEngineMask, getSdmaEngineId):
// https://github.com/ROCm/mori.
func (e Engines) Place(gpu, peer, c int) int {
	if e.Dedicated() {
		return -1
	}
	var m uint64
	switch {
	case gpu == peer && !e.SpreadLoopback:
		return 0
	case gpu == peer:
		m = e.HostLinkMask()
	default:
		m = e.Mask(gpu, peer)
	}
	n := bits.OnesCount64(m)
	if n == 0 {
		if gpu == peer {
			return 0
		}
		return oamEngine(gpu, peer) % (e.General + e.XGMI)
	}
	want := c % n
	for id := 0; ; id++ {
		if m&(1<<id) != 0 {
			if want == 0 {
				return id
			}
			want--
		}
	}
}
