package main

/*
#include "lane.h"
*/
import "C"

import (
	"fmt"

	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/sim"
)

// The device's figures as hipGetDeviceProperties and hipDeviceGetAttribute
// give them: an AMD Instinct MI355X (gfx950). The gfx1250 preset changes
// only the wave size and the architecture's name (the headers'); its other
// figures are not documented where emud's model comes from, so they are
// the MI355X's (partial).
const (
	propHBM        = 288 << 30 // 288 GB of HBM3E (what HIP reports as totalGlobalMem)
	propCUs        = 256       // compute units
	propClockKHz   = 2_400_000 // peak engine clock, 2.4 GHz (clock64's rate here)
	propL2         = 4 << 20   // L2 per XCD
	propMemClock   = 4_000_000 // HBM3E at 8 Gb/s a pin (double data rate): 4 GHz
	propMemBusBits = 8192      // 8 stacks × 1024 bits: 8 TB/s with the clock above
)

// props fills EMUD_H_PROPS's results: a[1] memory, a[2] CUs, a[3] clock
// (kHz), a[4] L2 bytes, a[5] memory clock (kHz), a[6] memory bus width.
func props(a []uint64) {
	a[1], a[2], a[3], a[4], a[5], a[6] = propHBM, propCUs, propClockKHz, propL2, propMemClock, propMemBusBits
}

// hostAllocs are hipHostMalloc's live allocations (base -> size), and
// hostFlags their flags (hipHostGetFlags), read and written only in a
// host thread's turn, as rt.events are.
var (
	hostAllocs = map[uint64]uint64{}
	hostFlags  = map[uint64]uint64{}
)

// hipHostMalloc flags HIP defines; emud's host memory is coherent and
// mapped whatever is asked.
const hostMallocFlags = 0x1 | 0x2 | 0x4 | 0x40000000 | 0x80000000 | 0x10000000 | 0x20000000

// hipCall runs the HIP calls of abi.h's second list (MORI's code uses
// them): host memory, memory information, pointer attributes, and the
// stream/event waits.
func hipCall(h *host, act *sim.Actor, op int, a []uint64, bad func(string, int, error) int) int {
	switch op {
	case C.EMUD_H_HOST_MALLOC:
		if a[1]&^hostMallocFlags != 0 {
			return bad("hipHostMalloc", hipErrorInvalidValue, fmt.Errorf("flags %#x: not hipHostMalloc flags", a[1]))
		}
		if a[0] == 0 {
			a[2] = 0
			return hipSuccess
		}
		// Host memory is the node's host slice: lanes and SDMA engines
		// reach it at the address the host uses (HIP maps pinned memory
		// into every device's space), and engines' copies from it take
		// the model's host path.
		p, err := rt.mem.Alloc(lsa.Host, a[0], "hipHostMalloc")
		if err != nil {
			return bad("hipHostMalloc", hipErrorOutOfMemory, err)
		}
		hostAllocs[p] = a[0]
		hostFlags[p] = a[1]
		a[2] = p
	case C.EMUD_H_HOST_FREE:
		if a[0] == 0 {
			return hipSuccess
		}
		if _, ok := hostAllocs[a[0]]; !ok {
			return bad("hipHostFree", hipErrorInvalidValue, fmt.Errorf("%#x was not returned by hipHostMalloc (or was freed)", a[0]))
		}
		// As hipFree: the mapping stays until the run ends.
		delete(hostAllocs, a[0])
		delete(hostFlags, a[0])
	case C.EMUD_H_HOST_DEVPTR:
		if _, ok := hostBase(a[0]); !ok {
			return bad("hipHostGetDevicePointer", hipErrorInvalidValue, fmt.Errorf("%#x is not in memory hipHostMalloc returned", a[0]))
		}
		a[1] = a[0] // one address space: the device uses the host's address
	case C.EMUD_H_MEM_INFO:
		used := uint64(0)
		for _, r := range rt.mem.Regions() {
			if r.GPU == h.dev {
				used += r.Size
			}
		}
		used -= min(used, hipFreedBytes(h.dev)) // hipFree gave them back
		slice := rt.mem.SliceBase(1) - rt.mem.SliceBase(0)
		// What can still be allocated: emud's slice of the device
		// (64 GiB) is smaller than the device's 288 GB, which total says.
		a[0], a[1] = slice-min(used, slice), propHBM
	case C.EMUD_H_POINTER_ATTR:
		p := a[0]
		if base, ok := hostBase(p); ok {
			a[1], a[2], a[3], a[4], a[5] = 1, uint64(h.dev), base, hostAllocs[base], hostFlags[base]
			return hipSuccess
		}
		g := rt.mem.GPUOf(p)
		if g < 0 {
			a[1], a[2], a[3], a[4] = 0, uint64(h.dev), 0, 0 // not memory HIP knows: unregistered
			return hipSuccess
		}
		r, err := rt.mem.Region("hipPointerGetAttributes", p, 1)
		if err != nil {
			return bad("hipPointerGetAttributes", hipErrorInvalidValue, err)
		}
		a[1], a[2], a[3], a[4] = 2, uint64(g), r.Base, r.Size
		if b, ok := hipLive[r.Base]; ok {
			a[4] = b.size // the region is page-rounded; the allocation is what hipMalloc was asked for
		}
	case C.EMUD_H_STREAM_WAIT_EVENT:
		st, err := streamOf(h, a[0])
		if err != nil {
			return bad("hipStreamWaitEvent", hipErrorInvalidHandle, err)
		}
		e, err := eventAt(a[1])
		if err != nil {
			return bad("hipStreamWaitEvent", hipErrorInvalidHandle, err)
		}
		// The stream's later work follows the event's marker (an event
		// never recorded orders nothing, as in HIP).
		if e.rec != nil {
			st.waits = append(st.waits, e.rec)
		}
	case C.EMUD_H_EVENT_QUERY:
		e, err := eventAt(a[0])
		if err != nil {
			return bad("hipEventQuery", hipErrorInvalidHandle, err)
		}
		// Not recorded: success, as HIP. Recorded: success once its work
		// is done, ordering the caller after it; else not ready, after a
		// microsecond of virtual time, so that a loop of queries is a
		// poll the work advances under.
		if r := e.rec; r != nil {
			if !queried(act, r.Done) {
				return hipErrorNotReady
			}
			if err := r.Wait(act); err != nil {
				return bad("hipEventQuery", hipErrorLaunchFailure, err)
			}
		}
	}
	return hipSuccess
}

// hostBase is the hipHostMalloc allocation that holds p.
func hostBase(p uint64) (uint64, bool) {
	for b, n := range hostAllocs {
		if p >= b && p < b+n {
			return b, true
		}
	}
	return 0, false
}

// eventAt is the event hipEventCreate made with handle i.
func eventAt(i uint64) (*event, error) {
	if i == 0 || i >= uint64(len(rt.events)) {
		return nil, fmt.Errorf("event %#x was not made by hipEventCreate", i)
	}
	return rt.events[i], nil
}
