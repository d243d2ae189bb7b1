package main

/*
#include "lane.h"
*/
import "C"

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/emud-dev/emud/sim"
)

// A loop made only of emud calls that change nothing (__syncthreads in a
// block of one, __ballot or __shfl of a flag the loop never re-reads
// atomically, hipDeviceSynchronize with no work) never lets virtual time
// advance nor anything happen, so no other thread can end it; the spin
// watch never saw it, as the thread keeps calling in. The call watch
// sees it: a thread whose calls, at one virtual time, are all of kinds
// that take no time and change no state (not a copy, an atomic, a wait),
// for EMUD_SPIN_LIMIT of wall time and at least callLoopMin calls, ends
// the run as a hang (exit 2) naming the thread and the loop's calls and
// lines. The calls need not be one: a loop of __ballot and __shfl (a
// grouping loop whose mask never empties) is one as well. Loops of calls
// that write, wait or take time are not its business (they end, or hang
// as reported waits).
type callLoop struct {
	now   sim.Time
	n     uint64
	since time.Time  // when the n-th repeat passed callLoopMin
	sites []loopSite // the loop's calls, noted once it passed callLoopMin
}

// loopSite is one call of a loop: its kind and site (a lane's: its file
// literal and line; a host call's file and line), and its words.
type loopSite struct {
	op   int
	file *C.char
	host string
	line int
	name string // the call, as the report says it
	at   string // its site
}

// maxLoopSites is how many of a loop's calls a report names.
const maxLoopSites = 4

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

// see counts a call (inert: it is of an inert kind) and says how long
// the loop has repeated once that is past the limit.
func (w *callLoop) see(inert bool) (time.Duration, bool) {
	now := rt.s.Now()
	if callLoopLimit == 0 || !inert || now != w.now {
		w.now, w.n, w.sites = now, 0, w.sites[:0]
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

// needs says whether the loop, past callLoopMin, has not yet noted the
// call op at file or host and line (and has room for it).
func (w *callLoop) needs(op int, file *C.char, host string, line int) bool {
	if w.n < callLoopMin || len(w.sites) == maxLoopSites {
		return false
	}
	for _, s := range w.sites {
		if s.op == op && s.file == file && s.host == host && s.line == line {
			return false
		}
	}
	return true
}

// verbs is one when the loop is of one call, else more.
func (w *callLoop) verbs(one, more string) string {
	if len(w.sites) > 1 {
		return more
	}
	return one
}

// calls are the loop's calls, "A at X and B at Y", and their names
// alone, in the order of their files and lines (not the order the watch
// noted them in, which depends on where its count began).
func (w *callLoop) calls() (at, names string) {
	file := func(s loopSite) string {
		if s.file != nil {
			return C.GoString(s.file)
		}
		return s.host
	}
	slices.SortStableFunc(w.sites, func(x, y loopSite) int {
		return cmp.Or(strings.Compare(file(x), file(y)), cmp.Compare(x.line, y.line), cmp.Compare(x.op, y.op))
	})
	var a, n []string
	for _, s := range w.sites {
		a = append(a, s.name+" at "+s.at)
		n = append(n, s.name)
	}
	join := func(v []string) string {
		if len(v) < 2 {
			return strings.Join(v, "")
		}
		return strings.Join(v[:len(v)-1], ", ") + " and " + v[len(v)-1]
	}
	return join(a), join(n)
}

// watchLaneCall is the call watch of a lane's device call.
func (ln *lane) watchCall(op int) {
	l := ln.l
	name, inert := inertLaneOps[op]
	d, stuck := ln.loop.see(inert)
	if ln.loop.needs(op, l.file, "", int(l.line)) {
		ln.loop.sites = append(ln.loop.sites, loopSite{op: op, file: l.file, line: int(l.line), name: name, at: ln.site().String()})
	}
	if !stuck {
		return
	}
	who := ln.who()
	at, names := ln.loop.calls()
	fail(rt.s.FrozenHang(sim.Waiter{Kind: "spinner", Name: who, State: "calling " + names + " in a loop", Since: rt.s.Now(),
		WaitsFor: fmt.Sprintf("nothing: %d calls of %s at one virtual time, for %v of wall time", ln.loop.n, at, d.Round(time.Millisecond))},
		sim.Because(fmt.Sprintf("%s loops on %s, which %s, so nothing else runs and no thread "+
			"can end the loop: read what the loop waits for with an atomic load (__hip_atomic_load, atomicAdd(p, 0)) or wait with "+
			"ccoSdma::waitSignal, which advance virtual time (EMUD_SPIN_LIMIT, %v, is how long emud lets such a loop repeat)", who, at,
			ln.loop.verbs("takes no virtual time and changes nothing", "take no virtual time and change nothing"), callLoopLimit))))
}

// watchHostCall is the call watch of a host thread's call.
func (h *host) watchCall(op int, file string, line int) {
	name, inert := inertHostOps[op]
	d, stuck := h.loop.see(inert)
	if h.loop.needs(op, nil, file, line) {
		h.loop.sites = append(h.loop.sites, loopSite{op: op, host: file, line: line, name: name, at: fmt.Sprintf("%s:%d", file, line)})
	}
	if !stuck {
		return
	}
	at, names := h.loop.calls()
	fail(rt.s.FrozenHang(sim.Waiter{Kind: "spinner", Name: h.name, State: "calling " + names + " in a loop", Since: rt.s.Now(),
		WaitsFor: fmt.Sprintf("nothing: %d calls of %s at one virtual time, for %v of wall time", h.loop.n, at, d.Round(time.Millisecond))},
		sim.Because(fmt.Sprintf("%s loops on %s, which %s; the thread "+
			"holds its turn, so no other thread or lane runs and nothing can end the loop (EMUD_SPIN_LIMIT, %v, is how long emud lets such "+
			"a loop repeat)", h.name, at, h.loop.verbs("has nothing to wait for, takes no virtual time and changes nothing",
			"have nothing to wait for, take no virtual time and change nothing"), callLoopLimit))))
}
