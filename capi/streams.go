package main

/*
#include <stdlib.h>
#include <string.h>
#include "lane.h"
*/
import "C"

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unsafe"

	"github.com/emud-dev/emud/lsa"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// hipStreamNonBlocking is HIP's flag (hipStreamCreateWithFlags).
const hipStreamNonBlocking = 1

// stream is a HIP stream: its work (kernels, async copies and memsets)
// runs one after another. The null stream (handle 0, one per device) also
// waits for the device's blocking streams, and they for it, as HIP's
// legacy default stream does; a non-blocking stream is ordered only by its
// own work.
type stream struct {
	dev         int
	id          int // handle
	nonBlocking bool
	null        bool
	owner       string   // the host thread of a per-thread default stream, else ""
	last        streamOp // the stream's latest work, nil before any
	// waits are the event markers hipStreamWaitEvent put on the stream
	// since its latest work was queued: the next work follows them too
	// (and through it, all later work), as does a synchronize.
	waits []streamOp
	// marks are the events recorded on the stream since its last
	// synchronize: they complete with the work before them, and a
	// synchronize waits for them too, so that an event recorded before
	// it is complete after it (hipEventElapsedTime, hipEventQuery).
	marks []streamOp
}

// queued makes o the stream's latest work, which followed its deps.
func (st *stream) queued(o streamOp) {
	st.last = o
	st.waits = nil
}

// streamOp is work on a stream: a kernel, or an async copy or memset.
type streamOp interface {
	Done() bool
	Wait(a *sim.Actor) error
}

// newStream makes a stream on device dev and returns its handle.
func newStream(dev int, nonBlocking bool) uint64 {
	for len(rt.streams) <= rt.gpus {
		rt.streams = append(rt.streams, nil)
	}
	st := &stream{dev: dev, id: len(rt.streams) + 1, nonBlocking: nonBlocking}
	rt.streams = append(rt.streams, st)
	return uint64(st.id) // handle = index + 1
}

// The handles CUDA and HIP give the default streams by name:
// cudaStreamLegacy (hipStreamLegacy) is the null stream, and
// cudaStreamPerThread (hipStreamPerThread) the calling thread's own
// default stream. emud's handles of made streams start past them.
const (
	legacyStreamHandle    = 1
	perThreadStreamHandle = 2
)

// streamOf is the stream of a handle; 0 and legacyStreamHandle are the
// calling thread's device's null stream, perThreadStreamHandle its
// per-thread stream there.
func streamOf(h *host, handle uint64) (*stream, error) {
	switch handle {
	case 0, legacyStreamHandle:
		return nullStream(h.dev), nil
	case perThreadStreamHandle:
		return perThreadStream(h, h.dev), nil
	}
	i := handle - 1
	if i < uint64(rt.gpus)+1 || i >= uint64(len(rt.streams)) || rt.streams[i] == nil {
		return nil, fmt.Errorf("stream handle %#x was not made by hipStreamCreate (or was destroyed)", handle)
	}
	return rt.streams[i], nil
}

// perThreadStream is host thread h's per-thread default stream on
// device dev: a blocking stream of its own (CUDA's per-thread stream
// orders with the legacy null stream, not with the other threads'), made
// on first use and named for its thread in reports.
func perThreadStream(h *host, dev int) *stream {
	if st := h.perThread[dev]; st != nil {
		return st
	}
	for len(rt.streams) <= rt.gpus {
		rt.streams = append(rt.streams, nil)
	}
	st := &stream{dev: dev, id: len(rt.streams) + 1, owner: h.name}
	rt.streams = append(rt.streams, st)
	if h.perThread == nil {
		h.perThread = map[int]*stream{}
	}
	h.perThread[dev] = st
	return st
}

// nullStream is device dev's null stream.
func nullStream(dev int) *stream {
	for len(rt.streams) <= rt.gpus {
		rt.streams = append(rt.streams, nil)
	}
	i := 1 + dev
	if rt.streams[i] == nil {
		rt.streams[i] = &stream{dev: dev, id: 0, null: true}
	}
	return rt.streams[i]
}

// deps is the work that new work on st must follow: st's own, and the
// null stream's or the blocking streams' of the device.
func (st *stream) deps() []streamOp {
	var d []streamOp
	if st.last != nil {
		d = append(d, st.last)
	}
	d = append(d, st.waits...)
	if st.nonBlocking {
		return d
	}
	for _, o := range rt.streams {
		if o != nil && o != st && o.dev == st.dev && o.last != nil && (st.null && !o.nonBlocking || o.null) {
			d = append(d, o.last)
		}
	}
	return d
}

// waitDeps waits for st's deps (and, with the race detector, acquires
// their ends).
func (st *stream) waitDeps(a *sim.Actor) error {
	for _, o := range st.deps() {
		if err := o.Wait(a); err != nil {
			return err
		}
	}
	return nil
}

// wait waits for st's own work, as hipStreamSynchronize, and the events
// recorded on it.
func (st *stream) wait(a *sim.Actor) error {
	for _, w := range st.waits {
		if err := w.Wait(a); err != nil {
			return err
		}
	}
	if st.last != nil {
		if err := st.last.Wait(a); err != nil {
			return err
		}
	}
	for _, m := range st.marks {
		if err := m.Wait(a); err != nil {
			return err
		}
	}
	st.marks = nil
	return nil
}

func (st *stream) String() string {
	if st.null {
		return fmt.Sprintf("the null stream of GPU %d", st.dev)
	}
	if st.owner != "" {
		return fmt.Sprintf("the per-thread stream of %s on GPU %d", st.owner, st.dev)
	}
	return fmt.Sprintf("stream %d of GPU %d", st.id, st.dev)
}

// syncDevice waits for every stream's work on device dev, as
// hipDeviceSynchronize.
func syncDevice(a *sim.Actor, dev int) error {
	for _, st := range rt.streams {
		if st != nil && st.dev == dev {
			if err := st.wait(a); err != nil {
				return err
			}
		}
	}
	return nil
}

// Rough figures for a copy or memset's duration (not calibrated: the
// point is that async work takes time, so it is still in flight when
// work it is not ordered with starts).
const (
	memOpLatency = 2 * sim.Microsecond // enqueue to first byte
	memOpChunk   = 64 << 10            // bytes landed per step
)

// memOpBandwidth is bytes per microsecond by direction: host↔device over
// PCIe Gen5 ×16 (about 50 GB/s), on one device (a copy or fill kernel,
// about 2 TB/s).
func memOpBandwidth(hostSide bool) uint64 {
	if hostSide {
		return 50_000
	}
	return 2_000_000
}

// memJob is an async copy or memset running on its stream.
type memJob struct {
	call string
	done bool
	err  error
	wl   *sim.WatchList
	end  race.Sync // released when the job ends; Wait acquires it
}

func (j *memJob) Done() bool { return j.done }

// Wait waits for the job and orders the waiter after it.
func (j *memJob) Wait(a *sim.Actor) error {
	a.Await(sim.Wait{List: j.wl, Lo: 0, Hi: 1, Pred: func() bool { return j.done },
		Text: func() string { return j.call + " still running" }})
	if t := a.RaceThread(); t != nil {
		t.Acquire(&j.end)
	}
	return j.err
}

// memOp is EMUD_H_MEMCPY/MEMSET: a = dst, src (memcpy) or byte (memset),
// bytes, stream, kind, async. The synchronous forms follow the device's
// work (as HIP's null stream) and are done by the host thread; the async
// ones are queued on their stream and land over virtual time, so work
// that is not ordered after them sees them in flight, and the race
// detector (EMUD_RACE) reports it.
func memOp(h *host, act *sim.Actor, op int, a []uint64, file string, line int, bad func(string, int, error) int) int {
	async := a[5] != 0
	call := map[[2]bool]string{{false, false}: "hipMemset", {false, true}: "hipMemsetAsync",
		{true, false}: "hipMemcpy", {true, true}: "hipMemcpyAsync"}[[2]bool{op == C.EMUD_H_MEMCPY, async}]
	width := uint64(1) // hipMemsetD16/D32: a[6] is the element's width, a[2] already in bytes
	if op == C.EMUD_H_MEMSET && a[6] > 1 {
		width = a[6]
		call = strings.Replace(call, "hipMemset", fmt.Sprintf("hipMemsetD%d", 8*width), 1)
		if a[0]%width != 0 {
			return bad(call, hipErrorInvalidValue, fmt.Errorf("destination %#x is not aligned to its %d-byte elements", a[0], width))
		}
	}
	st, err := streamOf(h, a[3])
	if err != nil {
		return bad(call, hipErrorInvalidHandle, err)
	}
	// val is read now: a is the caller's argument block, reused once the
	// call returns, and an async job lands later (a hipMemsetAsync once
	// filled with whatever the next call left there).
	dst, src, n, val := a[0], a[1], a[2], a[1]
	devDst, devSrc := rt.mem.GPUOf(dst) >= 0, op == C.EMUD_H_MEMCPY && rt.mem.GPUOf(src) >= 0
	// hipHostMalloc's memory (the host slice) is emulated memory too: it
	// is checked, seen by the race detector, wakes a lane that waits on
	// it, and is not staged (HIP's DMA reads pinned memory when the copy
	// runs); only its rate is the host side's.
	emuDst := devDst || rt.mem.HomeOf(dst) == lsa.Host
	emuSrc := devSrc || op == C.EMUD_H_MEMCPY && rt.mem.HomeOf(src) == lsa.Host
	if emuDst {
		if err := rt.mem.Check(call+" destination", dst, n); err != nil {
			return bad(call, hipErrorInvalidValue, err)
		}
	}
	if emuSrc {
		if err := rt.mem.Check(call+" source", src, n); err != nil {
			return bad(call, hipErrorInvalidValue, err)
		}
	}
	if !emuDst {
		if err := hostRange(call, "destination", dst, n); err != nil {
			return bad(call, hipErrorInvalidValue, err)
		}
	}
	if op == C.EMUD_H_MEMSET && !emuDst {
		// HIP fills device (or pinned) memory only; a pageable host
		// buffer was filled natively and silently before.
		return bad(call, hipErrorInvalidValue, fmt.Errorf("destination %#x is host memory, not device memory or hipHostMalloc's: fill it with memset", dst))
	}
	if op == C.EMUD_H_MEMCPY && !emuSrc {
		if err := hostRange(call, "source", src, n); err != nil {
			return bad(call, hipErrorInvalidValue, err)
		}
	}
	info := &race.Info{Kind: race.KindHost, OpKind: race.OpHost, Op: call,
		Who: fmt.Sprintf("%s on %s (%s)", call, st, h.name), Site: fmt.Sprintf("%s:%d", filepath.Base(file), line)}
	if !async {
		if err := syncDevice(act, h.dev); err != nil {
			return bad(call, hipErrorLaunchFailure, err)
		}
		if n > 0 {
			raceMemOp(act, info, dst, src, n, emuDst, emuSrc)
			landMemOp(op, dst, src, 0, n, val, width, nil, emuDst)
		}
		return hipSuccess
	}
	var staged []byte
	if op == C.EMUD_H_MEMCPY && !emuSrc && n > 0 {
		// Pageable host memory: HIP stages the source before returning,
		// so the program may reuse it at once.
		staged = C.GoBytes(ptr(src), C.int(n))
	}
	queueJob(act, st, call, info.Who, func(w *sim.Actor) {
		w.Sleep(memOpLatency)
		bw := memOpBandwidth(!devDst || op == C.EMUD_H_MEMCPY && !devSrc)
		for off := uint64(0); off < n; off += memOpChunk {
			k := min(memOpChunk, n-off)
			raceMemOp(w, info, dst+off, src+off, k, emuDst, emuSrc)
			landMemOp(op, dst, src, off, k, val, width, staged, emuDst)
			w.Sleep(sim.Time(max(k*uint64(sim.Microsecond)/bw, 1)))
		}
	})
	return hipSuccess
}

// queueJob queues a job on st (an async copy or memset, a stream memory
// operation): an actor of its own, ordered after what act's thread did
// before the call, waits for the work st's new work must follow, runs
// body, and completes the job, which becomes the stream's latest work.
func queueJob(act *sim.Actor, st *stream, call, who string, body func(w *sim.Actor)) {
	deps := st.deps()
	j := &memJob{call: who, wl: rt.s.NewWatchList(call)}
	st.queued(j)
	child := rt.s.Spawn(who, func(w *sim.Actor) {
		defer func() {
			j.done = true
			if t := w.RaceThread(); t != nil {
				t.Release(&j.end)
			}
			j.wl.Notify(0, 1)
		}()
		for _, o := range deps {
			if err := o.Wait(w); err != nil {
				j.err = err
				return
			}
		}
		body(w)
	})
	if d := rt.s.Race(); d != nil {
		d.Fork(act.RaceThread(), child.RaceThread()) // the job knows what the host did before it
	}
}

// landMemOp moves or fills [off, off+k) of the operation.
func landMemOp(op int, dst, src, off, k, val, width uint64, staged []byte, devDst bool) {
	switch {
	case op == C.EMUD_H_MEMSET && width > 1:
		// the element pattern, little-endian, from an element boundary
		// (off is a multiple of the chunk, so of the width)
		b := unsafe.Slice((*byte)(ptr(dst+off)), k)
		for i := range b {
			b[i] = byte(val >> (8 * (uint64(i) % width)))
		}
	case op == C.EMUD_H_MEMSET:
		C.memset(ptr(dst+off), C.int(val), C.size_t(k))
	case staged != nil:
		C.memcpy(ptr(dst+off), unsafe.Pointer(&staged[off]), C.size_t(k))
	default:
		C.memmove(ptr(dst+off), ptr(src+off), C.size_t(k))
	}
	if devDst {
		rt.mem.Watch().Notify(dst+off, dst+off+k)
	}
}

// raceMemOp records a copy's or memset's device accesses for the race
// detector, as accesses of actor a's thread.
func raceMemOp(a *sim.Actor, info *race.Info, dst, src, n uint64, devDst, devSrc bool) {
	d := rt.s.Race()
	if d == nil {
		return
	}
	sp := d.Space(rt.mem, "LSA memory")
	if devSrc {
		d.Access(a.RaceThread(), sp, src, src+n, race.Access{Info: info})
	}
	if devDst {
		d.Access(a.RaceThread(), sp, dst, dst+n, race.Access{Info: info, Write: true})
	}
}

func init() {
	hostAdvice := func(e race.Edge) string {
		if w := ncclGroupAdvice(e); w != "" {
			return w
		}
		return "stream work (a HIP copy or memset, a kernel, an NCCL call) and device work that nothing orders: put them on one stream, make the later one's stream wait for an event recorded after the earlier (hipEventRecord, then hipStreamWaitEvent), or synchronise (hipStreamSynchronize, hipDeviceSynchronize) before the later one is queued"
	}
	for _, k := range []race.OpKind{race.OpLane, race.OpPacket} {
		race.RegisterAdvice(race.OpHost, k, hostAdvice)
		race.RegisterAdvice(k, race.OpHost, hostAdvice)
	}
	race.RegisterAdvice(race.OpHost, race.OpHost, hostAdvice)
}

// queryPoll is what a query (hipStreamQuery, hipEventQuery) that finds
// its work still running waits in virtual time before it says so: a loop
// of queries is a poll, and the work it waits for advances under it.
const queryPoll = sim.Microsecond

// queried is a query's answer: whether done holds now or after queryPoll.
func queried(act *sim.Actor, done func() bool) bool {
	if done() {
		return true
	}
	act.Sleep(queryPoll)
	return done()
}

// queryStream is EMUD_H_STREAM_QUERY: a[1] 0 is hipStreamQuery (success
// once the stream's work is done, acquired as a synchronize's; else
// hipErrorNotReady after queryPoll), 1 hipStreamGetFlags (a[2]).
func queryStream(h *host, act *sim.Actor, a []uint64, bad func(string, int, error) int) int {
	name := "hipStreamQuery"
	if a[1] == 1 {
		name = "hipStreamGetFlags"
	}
	st, err := streamOf(h, a[0])
	if err != nil {
		return bad(name, hipErrorInvalidHandle, err)
	}
	switch a[1] {
	case 0:
		if !queried(act, st.idle) {
			return hipErrorNotReady
		}
		if err := st.wait(act); err != nil { // done: returns at once, ordering its work before the caller
			return bad(name, hipErrorLaunchFailure, err)
		}
	case 1:
		a[2] = 0
		if st.nonBlocking {
			a[2] = hipStreamNonBlocking
		}
	default:
		return bad("hipStream query", hipErrorInvalidValue, fmt.Errorf("unknown query %d (headers and library out of step?)", a[1]))
	}
	return hipSuccess
}

// resetDevice is EMUD_H_DEVICE_RESET, hipDeviceReset: the current
// device's work ends, then its hipMalloc blocks are freed (in address
// order, so a later hipMalloc's reuse is the seed's) and its streams
// destroyed; a[0] is the device (the header disables its peer access).
func resetDevice(h *host, act *sim.Actor, a []uint64, bad func(string, int, error) int) int {
	if err := syncDevice(act, h.dev); err != nil {
		return bad("hipDeviceReset", hipErrorLaunchFailure, err)
	}
	var blocks []uint64
	for p := range hipLive {
		if rt.mem.GPUOf(p) == h.dev {
			blocks = append(blocks, p)
		}
	}
	slices.Sort(blocks)
	for _, p := range blocks {
		if err := hipFree(p, nil); err != nil {
			return bad("hipDeviceReset", hipErrorInvalidValue, err)
		}
	}
	for i, st := range rt.streams {
		if st != nil && !st.null && st.owner == "" && st.dev == h.dev { // the default streams stay, as the device's own
			rt.streams[i] = nil
		}
	}
	a[0] = uint64(h.dev)
	return hipSuccess
}

// idle says whether st's work, and the events it waits for, are done.
func (st *stream) idle() bool {
	for _, w := range st.waits {
		if !w.Done() {
			return false
		}
	}
	for _, m := range st.marks {
		if !m.Done() {
			return false
		}
	}
	return st.last == nil || st.last.Done()
}

// ncclStreamOf finds "on stream N of GPU G" in an NCCL call's Who.
var ncclStreamOf = regexp.MustCompile(`^nccl\w+ of rank \d+ on (.+) \(`)

// ncclGroupAdvice words the missing edge between two NCCL calls on one
// stream: stream order would have ordered them, so they were posted in
// one group, whose calls NCCL runs in no order it promises ("" for any
// other pair).
func ncclGroupAdvice(e race.Edge) string {
	a, b := ncclStreamOf.FindStringSubmatch(e.Prev.Who), ncclStreamOf.FindStringSubmatch(e.Cur.Who)
	if a == nil || b == nil || a[1] != b[1] {
		return ""
	}
	return fmt.Sprintf("%s and %s were posted in one group on %s: NCCL runs a group's calls in no order it promises "+
		"(its sends and receives progress together), so one must not read what another writes; end the group between them "+
		"(ncclGroupEnd, then ncclGroupStart), as a step that forwards what an earlier step received needs", e.Prev.Op, e.Cur.Op, a[1])
}
