package main

/*
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "lane.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"unsafe"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// hipError_t values the headers know (HIP's public enum).
const (
	hipSuccess                   = 0
	hipErrorInvalidValue         = 1
	hipErrorOutOfMemory          = 2
	hipErrorInvalidDevicePointer = 17
	hipErrorInvalidDevice        = 101
	hipErrorInvalidHandle        = 400
	hipErrorNotReady             = 600
	hipErrorNotSupported         = 801
	hipErrorLaunchFailure        = 719
)

// hostFail reports a failed host call on stderr, naming the call and why,
// and returns code: a HIP program checks the status, a person reads the
// line.
func hostFail(h *host, file string, line int, call string, code int, err error) int {
	msg := fmt.Sprintf("%s:%d: %s (%s): %v", file, line, call, h.name, err)
	fmt.Fprintf(os.Stderr, "emud: %s\n", msg)
	rt.lastErr = append(rt.lastErr, msg)
	return code
}

// event is a hipEvent_t: its latest record (nil before any, and after a
// hipEventDestroy made it a new event).
type event struct {
	rec *eventRec
}

// eventRec is one hipEventRecord: a marker queued on its stream after
// the work queued there so far (and what that work follows), complete
// once that work is, at the virtual time it ends; the record returns at
// once. A stream that waits for the event (hipStreamWaitEvent) follows
// the marker: eventRec is a streamOp.
type eventRec struct {
	deps     []streamOp
	complete bool
	at       sim.Time // when it completed
	err      error    // the first failure of the work it follows
	wl       *sim.WatchList
	host     race.Sync // the recording thread's clock at the record
	end      race.Sync // released at completion: the work's ends and host
}

func (r *eventRec) Done() bool { return r.complete }

// Wait waits for the marker and orders the waiter after the work it
// follows.
func (r *eventRec) Wait(a *sim.Actor) error {
	a.Await(sim.Wait{List: r.wl, Lo: 0, Hi: 1, Pred: r.Done,
		Text: func() string { return "an event's recorded work still running" }})
	if t := a.RaceThread(); t != nil {
		t.Acquire(&r.end)
	}
	return r.err
}

// recordEvent records e on st: a new marker whose completion an actor of
// its own waits for, so that the host thread goes on at once and gets
// no ordering after the stream's work it did not wait for.
func recordEvent(act *sim.Actor, e *event, st *stream) {
	r := &eventRec{deps: st.deps(), wl: rt.s.NewWatchList("hipEventRecord")}
	if t := act.RaceThread(); t != nil {
		t.Release(&r.host)
	}
	e.rec = r
	// Marks already complete need no wait: dropped, so that records in a
	// loop with no synchronize do not pile up.
	st.marks = append(slices.DeleteFunc(st.marks, func(o streamOp) bool { return o.Done() }), r)
	rt.s.Spawn("hipEventRecord on "+st.String(), func(w *sim.Actor) {
		for _, o := range r.deps {
			if err := o.Wait(w); err != nil && r.err == nil {
				r.err = err
			}
		}
		if t := w.RaceThread(); t != nil {
			t.Acquire(&r.host)
			t.Release(&r.end)
		}
		r.complete, r.at = true, w.Now()
		r.wl.Notify(0, 1)
	})
}

func commOf(p uint64) (*cco.Comm, error) {
	if p == 0 || p > uint64(len(rt.comms)) || rt.comms[p-1] == nil {
		return nil, fmt.Errorf("comm %#x was not made by ccoCommCreate (or was destroyed)", p)
	}
	return rt.comms[p-1], nil
}

// hostCall runs host call op of thread h on its actor. a holds the
// arguments and receives the results (abi.h).
func hostCall(h *host, act *sim.Actor, op int, a []uint64, file string, line int) int {
	bad := func(call string, code int, err error) int { return hostFail(h, file, line, call, code, err) }
	if op != C.EMUD_H_THREAD_SYNC || (a[0] != syncRelease && a[0] != syncAcquire) {
		// The race detector's bookkeeping of an uncontended lock or
		// unlock (pmutex.c) is no step of a loop: the call watch sees
		// the loop's other calls as if it were not there.
		h.watchCall(op, file, line)
	}
	switch op {
	case C.EMUD_H_DEVICE_COUNT:
		a[0] = uint64(rt.gpus)
	case C.EMUD_H_SET_DEVICE:
		if a[0] >= uint64(rt.gpus) {
			return bad("hipSetDevice", hipErrorInvalidDevice, fmt.Errorf("device %d: the emulated node has %d GPUs (EMUD_GPUS)", int64(a[0]), rt.gpus))
		}
		h.dev = int(a[0])
	case C.EMUD_H_GET_DEVICE:
		a[0] = uint64(h.dev)
	case C.EMUD_H_PROPS:
		dev := int64(a[0])
		if dev < 0 || dev >= int64(rt.gpus) {
			return bad("hipGetDeviceProperties", hipErrorInvalidDevice, fmt.Errorf("device %d: the node has %d GPUs", dev, rt.gpus))
		}
		props(a)
	case C.EMUD_H_MALLOC:
		return mallocCall(h, act, a, bad)
	case C.EMUD_H_FREE:
		return freeCall(h, act, a, bad)
	case C.EMUD_H_MEMCPY, C.EMUD_H_MEMSET:
		return memOp(h, act, op, a, file, line, bad)
	case C.EMUD_H_STREAM_CREATE:
		a[0] = newStream(h.dev, a[0]&hipStreamNonBlocking != 0)
	case C.EMUD_H_STREAM_SYNC:
		st, err := streamOf(h, a[0])
		if err != nil {
			return bad("hipStreamSynchronize", hipErrorInvalidHandle, err)
		}
		if err := st.wait(act); err != nil {
			return bad("hipStreamSynchronize", hipErrorLaunchFailure, err)
		}
	case C.EMUD_H_STREAM_QUERY:
		return queryStream(h, act, a, bad)
	case C.EMUD_H_DEVICE_RESET:
		return resetDevice(h, act, a, bad)
	case C.EMUD_H_IPC:
		return ipcCall(h, act, a, bad)
	case C.EMUD_H_NCCL_COLL:
		return ncclCollCall(h, act, a, file, line, bad)
	case C.EMUD_H_STREAM_MEMOP:
		return streamMemCall(h, act, a, file, line, bad)
	case C.EMUD_H_SYMBOL:
		return symbolCall(h, act, a, file, line, bad)
	case C.EMUD_H_HOST_FUNC:
		return hostFnCall(h, act, a, file, line, bad)
	case C.EMUD_H_STREAM_DESTROY:
		st, err := streamOf(h, a[0])
		if err != nil || a[0] <= perThreadStreamHandle {
			return bad("hipStreamDestroy", hipErrorInvalidHandle, fmt.Errorf("stream %#x: not a stream hipStreamCreate made (the default streams are not destroyed)", a[0]))
		}
		_ = st.wait(act) // HIP waits for the stream's work
		rt.streams[a[0]-1] = nil
	case C.EMUD_H_DEVICE_SYNC:
		if err := syncDevice(act, h.dev); err != nil {
			return bad("hipDeviceSynchronize", hipErrorLaunchFailure, err)
		}
	case C.EMUD_H_EVENT_CREATE:
		rt.events = append(rt.events, &event{})
		a[0] = uint64(len(rt.events) - 1)
	case C.EMUD_H_EVENT_RECORD, C.EMUD_H_EVENT_SYNC, C.EMUD_H_EVENT_ELAPSED, C.EMUD_H_EVENT_DESTROY:
		return eventOp(h, act, op, a, bad)
	case C.EMUD_H_LAUNCH:
		return launch(h, act, a, bad)
	case C.EMUD_H_UNIQUE_ID:
		uid := cco.GetUniqueId(rt.j.Host)
		b := unsafe.Slice((*byte)(ptr(a[0])), 128)
		clear(b)
		copy(b, "emud-uid")
		*(*uint64)(unsafe.Pointer(&b[8])) = uint64(uid)
	case C.EMUD_H_COMM_CREATE:
		b := unsafe.Slice((*byte)(ptr(a[0])), 128)
		if string(b[:8]) != "emud-uid" {
			return bad("ccoCommCreate", 1, fmt.Errorf("the unique id was not filled by ccoGetUniqueId"))
		}
		uid := cco.UniqueId(*(*uint64)(unsafe.Pointer(&b[8])))
		var c *cco.Comm
		var err error
		if a[5] != 0 { // NCCL's: the rank runs on device a[6]
			c, err = cco.CommCreateOn(rt.j.Host, uid, int(a[1]), int(a[2]), int(a[6]), a[3])
		} else {
			c, err = cco.CommCreate(rt.j.Host, uid, int(a[1]), int(a[2]), a[3])
		}
		if err != nil {
			return bad("ccoCommCreate", 1, err)
		}
		if a[5] == 0 && c.GPU != h.dev { // MORI's: rank r is GPU r
			fmt.Fprintf(os.Stderr, "emud: %s:%d: ccoCommCreate: rank %d runs on GPU %d but %s's current device is %d (hipSetDevice first)\n", file, line, c.Rank, c.GPU, h.name, h.dev)
		}
		rt.comms = append(rt.comms, c)
		rt.commUID = append(rt.commUID, uid)
		rt.commSite = append(rt.commSite, fmt.Sprintf("%s:%d", file, line))
		a[4] = uint64(len(rt.comms))
		if err := barrierAll(act, c, uid, "ccoCommCreate"); err != nil {
			return bad("ccoCommCreate", 1, err)
		}
	case C.EMUD_H_COMM_DESTROY:
		c, err := commOf(a[0])
		if err != nil {
			return bad("ccoCommDestroy", 1, err)
		}
		// The comm's queues go back to their engines (cco.CommDestroy):
		// a program that re-creates comms and destroys them reuses the
		// same engine slots; one that never destroys them fills its
		// engines (lifecycle.go in package cco). A queue whose last packet
		// has retired is destroyed even while its engine finishes the gap
		// after it (engine.Node.DestroyQueue).
		if err := cco.CommDestroy(c); err != nil {
			return bad("ccoCommDestroy", 1, err)
		}
		rt.comms[a[0]-1] = nil
	case C.EMUD_H_MEM_ALLOC:
		c, err := commOf(a[0])
		if err != nil {
			return bad("ccoMemAlloc", 1, err)
		}
		p, err := cco.MemAlloc(c, a[1])
		if err != nil {
			return bad("ccoMemAlloc", 1, err)
		}
		a[2] = p
	case C.EMUD_H_MEM_FREE:
		c, err := commOf(a[0])
		if err != nil {
			return bad("ccoMemFree", 1, err)
		}
		if err := cco.MemFree(c, a[1]); err != nil {
			return bad("ccoMemFree", 1, err)
		}
	case C.EMUD_H_WINDOW_DEREGISTER:
		if _, err := commOf(a[0]); err != nil {
			return bad("ccoWindowDeregister", 1, err)
		}
		// As hipFree: memory and windows stay until the run ends.
	case C.EMUD_H_DEVCOMM_DESTROY:
		c, err := commOf(a[0])
		if err != nil {
			return bad("ccoDevCommDestroy", 1, err)
		}
		h := a[1]
		if h == 0 || h > uint64(len(rt.devcomms)) || rt.devDead[h-1] {
			return bad("ccoDevCommDestroy", 1, fmt.Errorf("dev comm handle %d: not a live ccoDevComm that ccoDevCommCreate filled (destroyed twice?)", h))
		}
		if a[2] != 0 { // NCCL's, from a thread driving several ranks
			if err := devCommDestroyAll(c, h); err != nil {
				return bad("ncclDevCommDestroy", 1, err)
			}
			break
		}
		if err := devCommDestroy(c, h); err != nil {
			return bad("ccoDevCommDestroy", 1, err)
		}
	case C.EMUD_H_WINDOW_REGISTER:
		c, err := commOf(a[0])
		if err != nil {
			return bad("ccoWindowRegister", 1, err)
		}
		if a[1] == 0 { // overload A: allocate too
			if a[1], err = cco.MemAlloc(c, a[2]); err != nil {
				return bad("ccoWindowRegister", 1, err)
			}
		}
		w, err := cco.WindowRegister(c, a[1], a[2])
		if err != nil {
			return bad("ccoWindowRegister", 1, err)
		}
		d := windowDevice(w.Base, w.Stride4G, w.LsaRank)
		rt.windows[uintptr(d)] = w
		// Every window is a memory region a GDA WQE may name (mori_gda.go).
		reg := gdaRegister(c, rt.commUID[a[0]-1], a[1], a[2], fmt.Sprintf("rank %d's window at %#x", c.Rank, a[1]))
		gdaState.wins[uint64(uintptr(d))] = gdaWin{reg: reg, nranks: c.NRanks}
		a[3], a[4] = uint64(uintptr(d)), a[1]
		if err := barrierAll(act, c, rt.commUID[a[0]-1], "ccoWindowRegister"); err != nil {
			return bad("ccoWindowRegister", 1, err)
		}
	case C.EMUD_H_DEVCOMM_CREATE:
		c, err := commOf(a[0])
		if err != nil {
			return bad("ccoDevCommCreate", 1, err)
		}
		uid := rt.commUID[a[0]-1]
		reqs := cco.DevCommRequirementsInitializer()
		reqs.Magic, reqs.Version = uint32(a[1]), uint32(a[2])
		reqs.SdmaQueueCount, reqs.Debug = int(int32(a[3])), a[4] != 0
		reqs.LsaBarrierCount = int(int32(a[6]))
		reqs.BarrierCount, reqs.RailGdaBarrierCount = int(int32(a[7])), int(int32(a[8]))
		// As MORI's cco: the comm owns its queues and ccoDevCommCreate
		// makes them all (anvil connect); ccoCommDestroy frees them.
		reqs.PerCommQueues, reqs.ConnectQueues = true, true
		// a[14] == 1: a user's MORI header, whose host control plane
		// (mori_host.cpp) fills its ccoIbgdaContext over emud's NIC
		// (mori_gda.go); emud's own header has no GDA device layer.
		if a[5] != 0 && a[14] != 1 {
			return bad("ccoDevCommCreate", 1, fmt.Errorf("gdaConnectionType %d asks for GDA queue pairs: ccoGda is not emulated (use CCO_GDA_CONNECTION_NONE, or CROSSNODE on one node)", a[5]))
		}
		if a[5] > 1 {
			return bad("ccoDevCommCreate", 1, fmt.Errorf("GDA connection type %d: emud's MORI host control plane passes 0 (NONE) or 1 (FULL)", a[5]))
		}
		gr := gdaReqs{conn: int(a[5]), signals: int(int32(a[10])), counters: int(int32(a[11])), ctx: int(int32(a[12])), depth: int(int32(a[13]))}
		dc, err := cco.DevCommCreate(c, &reqs)
		var refused *cco.QueueCreateError
		if errors.As(err, &refused) {
			// MORI's anvil ends the process when KFD refuses a queue
			// (CHECK_HSAKMT_SUCCESS: exit(EXIT_FAILURE)); the error
			// names the engine, its cap and the live comms holding it.
			C.fflush(nil)
			writeTrace()
			fmt.Fprintf(os.Stderr, "emud: %s:%d: ccoDevCommCreate (%s): %v; the process exits, as MORI's does when KFD refuses a queue\n", file, line, h.name, err)
			fmt.Fprintf(os.Stderr, "emud: the live comms of GPU %d, by the ccoCommCreate that made them: %s\n", c.GPU, liveComms(c.GPU))
			exitRun(exitFailed) // an emulated run's failure, as a failed check's: hunt counts it
		}
		if err != nil {
			return bad("ccoDevCommCreate", 1, err)
		}
		rt.devcomms = append(rt.devcomms, dc)
		rt.devDead = append(rt.devDead, false)
		moriNoteDevComm(c, uid, uint64(len(rt.devcomms)), dc.SignalPool().Base)
		if err := gdaCreate(c, uid, uint64(len(rt.devcomms)), gr); err != nil {
			return bad("ccoDevCommCreate (GDA)", 1, err)
		}
		if a[9] == 1 {
			// NCCL's ncclDevCommCreate: LSA takes the fabric's time.
			cftInit()
			lsaTiming(cftState.ports)
			ncclDevs[uint64(len(rt.devcomms))] = true
		}
		a[0], a[1], a[2], a[3] = uint64(dc.Rank), uint64(dc.NRanks), uint64(dc.LsaRank), uint64(dc.LsaSize)
		a[4], a[5], a[6] = uint64(dc.Sdma.SdmaNumQueue), dc.SignalPool().Base, uint64(len(rt.devcomms))
		a[7] = rt.mem.SliceBase(0)
		a[8] = c.PerRankSize
		a[9], a[13] = uint64(dc.LsaBarrier.NBarriers), uint64(dc.HybridLsaBarrier.NBarriers)
		a[11], a[10], a[14] = barrierWindow(dc)
		a[12] = (rt.mem.SliceBase(1) - rt.mem.SliceBase(0)) >> 32
		a[15] = uint64(uintptr(windowDevice(a[11], a[12], dc.LsaRank))) // resourceWindow
		if err := barrierAll(act, c, uid, "ccoDevCommCreate"); err != nil {
			return bad("ccoDevCommCreate", 1, err)
		}
	case C.EMUD_H_BARRIER_ALL:
		c, err := commOf(a[0])
		if err != nil {
			return bad("ccoBarrierAll", 1, err)
		}
		if err := barrierAll(act, c, rt.commUID[a[0]-1], "ccoBarrierAll"); err != nil {
			return bad("ccoBarrierAll", 1, err)
		}
	case C.EMUD_H_PEER_PTR:
		c, err := commOf(a[0])
		if err != nil {
			return bad("ccoGetPeerPtr", 1, err)
		}
		g := rt.mem.GPUOf(a[1])
		if g != c.GPU || a[2] >= uint64(c.LsaSize) || !c.RanksOnOwnGPUs() {
			a[3] = 0
			return hipSuccess
		}
		a[3] = a[1] - rt.mem.SliceBase(g) + rt.mem.SliceBase(int(a[2]))
	case C.EMUD_H_HOST_MALLOC, C.EMUD_H_HOST_FREE, C.EMUD_H_HOST_DEVPTR, C.EMUD_H_MEM_INFO, C.EMUD_H_POINTER_ATTR,
		C.EMUD_H_STREAM_WAIT_EVENT, C.EMUD_H_EVENT_QUERY:
		return hipCall(h, act, op, a, bad)
	case C.EMUD_H_MORI_QUEUE:
		if err := moriQueueCall(a); err != nil {
			return bad("ccoDevCommCreate (a MORI header's queue)", 1, err)
		}
	case C.EMUD_H_MORI_GDA_EP:
		if err := gdaEndpointCall(a); err != nil {
			return bad("ccoDevCommCreate (GDA endpoint)", 1, err)
		}
	case C.EMUD_H_MORI_GDA_DONE:
		if err := gdaDoneCall(a); err != nil {
			return bad("ccoDevCommCreate (GDA endpoints)", 1, err)
		}
	case C.EMUD_H_MORI_GDA_KEY:
		if err := gdaWindowKeyCall(a); err != nil {
			return bad("ccoWindowRegister (GDA keys)", 1, err)
		}
	case C.EMUD_H_THREAD_BARRIER:
		return threadBarrierCall(act, a, bad)
	case C.EMUD_H_THREAD_SYNC:
		return threadSyncCall(h, act, a, bad)
	case C.EMUD_H_THREAD_SLEEP:
		return threadSleepCall(h, act, a, bad)
	case C.EMUD_H_GIN_CREATE:
		return ginCreate(h, act, a, bad)
	case C.EMUD_H_CFT:
		return cftHost(a, bad) // nccl_cft.go
	case C.EMUD_H_COMM_SPLIT:
		return commSplit(act, a, bad) // split.go
	case C.EMUD_H_UNSUPPORTED:
		fmt.Fprintf(os.Stderr, "emud: %s:%d: %s is not supported by emud (%s)\n", file, line, cstr(a[0]), h.name)
		os.Exit(exitFailed)
	default:
		return bad("emud host call", hipErrorNotSupported, fmt.Errorf("unknown call %d (headers and library out of step?)", op))
	}
	return hipSuccess
}

// liveComms names the comms of GPU g not destroyed, oldest first, by the
// program's line that made each: where a leak's missing ccoCommDestroy
// belongs.
func liveComms(g int) string {
	var live []string
	for i, c := range rt.comms {
		if c != nil && c.GPU == g {
			live = append(live, fmt.Sprintf("rank %d's comm made at %s", c.Rank, rt.commSite[i]))
		}
	}
	return strings.Join(live, ", ")
}

// barrier is ccoBarrierAll's state for one world. For the race detector
// it is a synchronisation: each rank releases into its generation's sync
// on arrival and acquires it on leaving, so what every rank did before
// the barrier is ordered before what any does after it (two generations
// alternate: no rank arrives at g+2 before all have left g).
// barrier is the rendezvous of a comm's collective host calls: ccoBarrierAll,
// and ccoCommCreate, ccoWindowRegister and ccoDevCommCreate, which return
// only when every rank has made them (MORI's exchange handles, keys and
// peer pointers in an all-gather over its bootstrap network).
type barrier struct {
	hostBarrier
	call string // the call of this generation's first arrival
}

// hostBarrier is a barrier of host threads in virtual time, reused by
// generations: the last of count arrivals ends the generation, and the
// race detector sees every arrival before it as released to every
// departure (ccoBarrierAll's ranks, pthread_barrier_wait's threads).
type hostBarrier struct {
	arrived, gen int
	wl           *sim.WatchList
	sync         [2]race.Sync
}

// arrive is actor a's arrival; it waits until count arrivals of this
// generation were made and says whether a's was the last. what describes
// the wait for hang reports (it may read arrived).
func (b *hostBarrier) arrive(a *sim.Actor, count int, what func() string) bool {
	gen := b.gen
	if t := a.RaceThread(); t != nil {
		t.Release(&b.sync[gen%2])
		defer t.Acquire(&b.sync[gen%2])
	}
	b.arrived++
	if b.arrived == count {
		b.arrived, b.gen = 0, b.gen+1
		b.wl.Notify(0, 1)
		return true
	}
	a.Await(sim.Wait{List: b.wl, Lo: 0, Hi: 1, Pred: func() bool { return b.gen != gen }, Text: what})
	return false
}

// barrierAll is collective call (one of the above) of comm c's rank: it
// waits until all c.NRanks ranks made their call of this generation; a
// rank whose call is another than the first rank's gets an error (the
// ranks' collective calls are out of step).
func barrierAll(a *sim.Actor, c *cco.Comm, uid cco.UniqueId, call string) error {
	b := rt.barriers[uid]
	if b == nil {
		b = &barrier{hostBarrier: hostBarrier{wl: rt.s.NewWatchList("ccoBarrierAll")}}
		rt.barriers[uid] = b
	}
	if b.arrived == 0 {
		b.call = call
	} else if b.call != call {
		return fmt.Errorf("rank %d's collective calls are out of step with the others': its %s meets the %s that %d rank(s) wait in (every rank makes the same collective calls, ccoCommCreate, ccoWindowRegister, ccoDevCommCreate and ccoBarrierAll, in the same order)",
			c.Rank, call, b.call, b.arrived)
	}
	b.arrive(a, c.NRanks, func() string {
		return fmt.Sprintf("%s (rank %d): %d of %d ranks arrived", call, c.Rank, b.arrived, c.NRanks)
	})
	return nil
}

func eventOp(h *host, act *sim.Actor, op int, a []uint64, bad func(string, int, error) int) int {
	ev := func(i uint64) *event {
		if i == 0 || i >= uint64(len(rt.events)) {
			return nil
		}
		return rt.events[i]
	}
	e := ev(a[0])
	if e == nil {
		return bad("hipEvent", hipErrorInvalidHandle, fmt.Errorf("event %#x was not made by hipEventCreate", a[0]))
	}
	switch op {
	case C.EMUD_H_EVENT_RECORD:
		st, err := streamOf(h, a[1])
		if err != nil {
			return bad("hipEventRecord", hipErrorInvalidHandle, err)
		}
		recordEvent(act, e, st)
	case C.EMUD_H_EVENT_SYNC:
		if e.rec == nil {
			return bad("hipEventSynchronize", hipErrorInvalidHandle, fmt.Errorf("event was never recorded"))
		}
		if err := e.rec.Wait(act); err != nil {
			return bad("hipEventSynchronize", hipErrorLaunchFailure, err)
		}
	case C.EMUD_H_EVENT_ELAPSED:
		e2 := ev(a[1])
		if e2 == nil || e.rec == nil || e2.rec == nil {
			return bad("hipEventElapsedTime", hipErrorInvalidHandle, fmt.Errorf("both events must be recorded"))
		}
		if !e.rec.complete || !e2.rec.complete {
			return hipErrorNotReady // HIP's answer while either's work runs
		}
		ms := float32(float64(e2.rec.at-e.rec.at) / 1e9) // ps -> ms
		*(*float32)(unsafe.Pointer(&a[2])) = ms
	case C.EMUD_H_EVENT_DESTROY:
		rt.events[a[0]] = &event{}
	}
	return hipSuccess
}

// barrierWindow is where MORI's kernels reach dev comm dc's barrier
// states: the resource window's winBase (this rank's 4 GiB window holding
// them, as seen from slice 0: a kernel adds lsaRank × stride4G << 32) and
// the bufOffset of lsaBarrier and of hybridLsaBarrier (0: disabled). Both
// states lie in one small buffer (cco's allocBarrier), so in one window;
// with neither, the window is the slices' base.
func barrierWindow(dc cco.DevComm) (winBase, lsaOff, hybridOff uint64) {
	first := dc.LsaBarrier.Base()
	if hb := dc.HybridLsaBarrier.Base(); first == 0 || (hb != 0 && hb < first) {
		first = hb
	}
	if first == 0 {
		return rt.mem.SliceBase(0), 0, 0
	}
	slice := rt.mem.SliceBase(dc.LsaRank)
	hi := (first - slice) &^ 0xffffffff
	if dc.LsaBarrier.NBarriers > 0 {
		lsaOff = dc.LsaBarrier.Base() - slice - hi
	}
	if dc.HybridLsaBarrier.NBarriers > 0 {
		hybridOff = dc.HybridLsaBarrier.Base() - slice - hi
	}
	return rt.mem.SliceBase(0) + hi, lsaOff, hybridOff
}

// windowDevice makes a ccoWindowDevice (winBase, stride4G, lsaRank, then
// the unused ibgdaWin) in memory a lane or the host reads.
func windowDevice(winBase, stride4G uint64, lsaRank int) unsafe.Pointer {
	d := C.emud_obj_alloc(64)
	*(*uint64)(d) = winBase
	*(*uint32)(unsafe.Add(d, 8)) = uint32(stride4G)
	*(*int32)(unsafe.Add(d, 12)) = int32(lsaRank)
	return d
}

// devDying is one rank's dev comm waiting for its comm's other ranks'
// ncclDevCommDestroy.
type devDying struct {
	c *cco.Comm
	h uint64
}

// devCommDestroy destroys dev comm h of comm c. The queues are the comm's
// (MORI frees them in ccoCommDestroy); the dev comm is gone: a kernel
// that still uses it fails.
func devCommDestroy(c *cco.Comm, h uint64) error {
	if err := cco.DevCommDestroy(c, &rt.devcomms[h-1]); err != nil {
		return err
	}
	rt.devDead[h-1] = true
	moriFree(h)
	gdaFree(h)
	if err := ginFree(h); err != nil {
		return fmt.Errorf("GIN: %w", err)
	}
	return nil
}

// devCommDestroyAll is ncclDevCommDestroy from a thread that drives
// several of the comm's ranks (nccl-tests' cleanup destroys every rank's
// in turn, outside a group), where the barrier the collective call
// otherwise waits in would wait for the thread itself: each rank's dev
// comm stays alive until the comm's last rank has called, and that call
// destroys them all, so still no rank's barrier slots go while a peer may
// arrive at them.
func devCommDestroyAll(c *cco.Comm, h uint64) error {
	uid := rt.commUID[commIndex(c)]
	if rt.devDying == nil {
		rt.devDying = map[cco.UniqueId][]devDying{}
	}
	for _, d := range rt.devDying[uid] {
		if d.h == h {
			return fmt.Errorf("dev comm handle %d: destroyed twice", h)
		}
	}
	dying := append(rt.devDying[uid], devDying{c, h})
	if len(dying) < c.NRanks {
		rt.devDying[uid] = dying
		return nil
	}
	delete(rt.devDying, uid)
	var errs []error
	for _, d := range dying {
		if err := devCommDestroy(d.c, d.h); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
