package main

/*
#include "lane.h"
*/
import "C"

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/emud-dev/emud/sim"
)

// A loop made only of emud calls that change nothing (__syncthreads in a
// block of one, __ballot or __shfl of a flag the loop never re-reads
// atomically, hipDeviceSynchronize with no work) never lets virtual time
// advance nor anything happen, so no other thread can end it; the spin
// watch never saw it, as the thread keeps calling in. The call watch
// sees it: a thread whose calls repeat one call at one site, at one
// virtual time, with none of them of a kind that takes time or changes
// state (a copy, an atomic, a wait), for EMUD_SPIN_LIMIT of wall time and
// at least callLoopMin calls, ends the run as a hang (exit 2) naming the
// thread, the call and its line. Loops of calls that write, wait or take
// time are not its business (they end, or hang as reported waits).
type callLoop struct {
	op    int
	file  uintptr // a lane's call site: its file literal and line
	host  string  // a host call's file
	line  int
	now   sim.Time
	n     uint64
	since time.Time // when the n-th repeat passed callLoopMin
}

// callLoopMin repeats before the wall clock is read at all: a loop of
// honest work repeats a call at one instant far fewer times.
const callLoopMin = 1 << 14

// callLoopLimit is EMUD_SPIN_LIMIT (0: the watch is off); set at start.
var callLoopLimit time.Duration

// inertLaneOps are the lane calls that take no virtual time and change
// nothing when nothing else runs.
var inertLaneOps = map[int]string{
	C.EMUD_OP_SYNC_THREADS: "__syncthreads", C.EMUD_OP_SYNC_WARP: "__syncwarp", C.EMUD_OP_BALLOT: "__ballot (or __any, __all)",
	C.EMUD_OP_ACTIVE_MASK: "__activemask", C.EMUD_OP_SHFL: "__shfl", C.EMUD_OP_FENCE: "__threadfence",
	C.EMUD_OP_STEP: "an atomic access",
}

// inertHostOps are such host calls.
var inertHostOps = map[int]string{
	C.EMUD_H_DEVICE_SYNC: "hipDeviceSynchronize", C.EMUD_H_STREAM_SYNC: "hipStreamSynchronize", C.EMUD_H_EVENT_SYNC: "hipEventSynchronize",
	C.EMUD_H_EVENT_QUERY: "hipEventQuery", C.EMUD_H_GET_DEVICE: "hipGetDevice", C.EMUD_H_DEVICE_COUNT: "hipGetDeviceCount",
	C.EMUD_H_LAST_ERROR: "hipGetLastError", C.EMUD_H_MEM_INFO: "hipMemGetInfo", C.EMUD_H_PROPS: "hipGetDeviceProperties",
}

// see counts a call of op at file:line (inert: it is of an inert kind)
// and says how long the loop has repeated it once that is past the limit.
func (w *callLoop) see(op int, file uintptr, host string, line int, inert bool) (time.Duration, bool) {
	now := rt.s.Now()
	if callLoopLimit == 0 || !inert || op != w.op || file != w.file || host != w.host || line != w.line || now != w.now {
		*w = callLoop{op: op, file: file, host: host, line: line, now: now}
		return 0, false
	}
	w.n++
	switch {
	case w.n == callLoopMin:
		w.since = time.Now()
	case w.n > callLoopMin && w.n%4096 == 0:
		if d := time.Since(w.since); d >= callLoopLimit {
			return d, true
		}
	}
	return 0, false
}

// watchLaneCall is the call watch of a lane's device call.
func (ln *lane) watchCall(op int) {
	l := ln.l
	name, inert := inertLaneOps[op]
	d, stuck := ln.loop.see(op, uintptr(unsafe.Pointer(l.file)), "", int(l.line), inert)
	if !stuck {
		return
	}
	who := ln.who()
	fail(rt.s.FrozenHang(sim.Waiter{Kind: "spinner", Name: who, State: "calling " + name + " in a loop", Since: rt.s.Now(),
		WaitsFor: fmt.Sprintf("nothing: %d calls of %s at %s at one virtual time, for %v of wall time", ln.loop.n, name, ln.site(), d.Round(time.Millisecond))},
		sim.Because(fmt.Sprintf("%s loops on %s at %s, which takes no virtual time and changes nothing, so nothing else runs and no thread "+
			"can end the loop: read what the loop waits for with an atomic load (__hip_atomic_load, atomicAdd(p, 0)) or wait with "+
			"ccoSdma::waitSignal, which advance virtual time (EMUD_SPIN_LIMIT, %v, is how long emud lets such a loop repeat)", who, name, ln.site(), callLoopLimit))))
}

// watchHostCall is the call watch of a host thread's call.
func (h *host) watchCall(op int, file string, line int) {
	name, inert := inertHostOps[op]
	d, stuck := h.loop.see(op, 0, file, line, inert)
	if !stuck {
		return
	}
	at := fmt.Sprintf("%s:%d", file, line)
	fail(rt.s.FrozenHang(sim.Waiter{Kind: "spinner", Name: h.name, State: "calling " + name + " in a loop", Since: rt.s.Now(),
		WaitsFor: fmt.Sprintf("nothing: %d calls of %s at %s at one virtual time, for %v of wall time", h.loop.n, name, at, d.Round(time.Millisecond))},
		sim.Because(fmt.Sprintf("%s loops on %s at %s, which has nothing to wait for, takes no virtual time and changes nothing; the thread "+
			"holds its turn, so no other thread or lane runs and nothing can end the loop (EMUD_SPIN_LIMIT, %v, is how long emud lets such "+
			"a loop repeat)", h.name, name, at, callLoopLimit))))
}
