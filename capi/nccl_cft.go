//go:build cgo

package main

/*
#include "lane.h"
*/
import "C"

import (
	"cmp"
	"encoding/binary"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"unsafe"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// NCCL's CFT in C++ (include/nccl_device/cft.h): the emulator's side.
//
// Backing (docs/cuda.md, "CFT"): the NCCL layer runs on the MORI layer's
// node (cco memory, natively mapped), so CFT operations are copies done
// here, timed by package fabric's own code: fabric.Ports on
// fabric.DefaultModel (each GPU's egress and ingress port, latency, issue
// cost, multicast fan-out), the arithmetic package fabric's engine times
// its operations with. A put or reduction completes when the ack is
// back; a get and a pullRed when their last bytes reach shared memory; a
// barrier's arrive is package
// fabric's: 16-byte puts to every peer (unicast) or one 16-byte multimem
// reduction to every member, itself included (multimem), that the
// arriving thread waits to complete. So a collective written in C++ and
// its Go twin on package fabric end at the same emulated time (cxx
// TestCftAllReduceMatchesGo). Data moves in package fabric's granules
// (4 KiB, in address order): a put's or reduction's source granule is
// read when its bytes have left the egress port (flushSmem waits for the
// last), and lands at each destination when they arrive there, so a load
// during the operation sees the granules landed so far. A counted write
// adds each granule's bytes to the destination's counter as it lands.
// The mbarrier's transaction count of each ncclCftSmem (one per CTA)
// and the CFT barriers' epochs and inboxes are kept here with package
// fabric's semantics (docs/cft-semantics.md §4, §10, §13).
//
// Logical endpoints: the unicast LE of flat CFT rank p is cftUcLe + p,
// the multicast LE cftMcLe; an LE offset is the window's offset in a
// GPU's slice of the node's memory plus the offset, so one offset
// addresses the window on every rank (as NCCL's symmetric big-VA offset
// does), its alignment is the local pointer's (slices are 4 GiB aligned),
// and it is small, as NCCL's are (NCCL's examples align LE offsets with
// 32-bit masks).

const (
	cftUcLe = 0x100 // the unicast LE of flat rank 0
	cftMcLe = 0x80  // the multicast LE of the (one) multicast team

	cftCapUnicast   = 1 // NCCL_CFT
	cftCapMultimem  = 2 // NCCL_CFT_MULTIMEM
	winCollSymmetic = 0x01
	winCftCounted   = 0x08
)

// cftGroup is one CFT dev comm on every rank: the k-th of a comm (dev
// comm creation is collective, so every rank's k-th is the same one).
type cftGroup struct {
	n     int
	nBar  map[int]int       // rank -> its cftBarrierCount
	epoch map[[2]int]uint32 // (rank, index) -> the saved epoch
	inbox map[[3]int]uint32 // (owner, index, peer) -> the epoch peer last delivered
	open  map[[2]int]*cftBar
	wl    *sim.WatchList // Lo = owner rank: arrivals to its inboxes
	// With the race detector on: what each (owner, index, peer) arrival
	// released, acquired by the owner's wait.
	syncs map[[3]int]*race.Sync
}

func (g *cftGroup) sync(k [3]int) *race.Sync {
	s := g.syncs[k]
	if s == nil {
		s = &race.Sync{}
		g.syncs[k] = s
	}
	return s
}

type cftDev struct {
	g    *cftGroup
	rank int
	caps uint64
	nBar int
}

// cftWin is what ncclCommWindowRegister told of a window.
type cftWin struct {
	flags, comm uint64
	n           int // the comm's ranks
}

type cftKey struct {
	uid cco.UniqueId
	k   int
}

// cftBar is one lane's open ncclCftBarrierSession (its coop's thread 0).
type cftBar struct {
	d        *cftDev
	index    int
	epoch    uint32
	multimem bool
	block    int
	site     string
}

// cftOp is one issued CFT operation.
type cftOp struct {
	kind       int
	dsts       []int  // destination ranks (put, red) or the source rank (get)
	leOff      uint64 // the offset in a GPU's slice
	smem       uint64 // the smem source or destination
	bytes      uint64
	mask       uint16 // cpMask (0xffff: every byte)
	counted    bool
	counterOff uint64
	red        uint64 // redop<<8 | type
	site       string
	src        int          // the issuing GPU
	multicast  bool         // a multimem operation (or pullRed)
	started    bool         // handed to the fabric (a pullRed starts at issue)
	rth        *race.Thread // with the race detector on: the fabric's thread for this op, derived at submit from the issuer
}

// cftObj is an ncclCftSmem's mbarrier: operations issued and not
// submitted, and submitted ones not yet complete.
type cftObj struct {
	issued  []*cftOp
	pending int
	reading int // submitted puts and reductions whose sources have not left yet
	who     string
	units   uint64    // the phase's transaction units: bytes/16 of puts and reductions, bytes of gets
	done    race.Sync // what the completed operations released, acquired by flush
}

// cftMaxUnits is what one ncclCftSmem's transaction count holds between
// flushes (docs/cft-semantics.md §6: 16 MB of puts, 1 MB of gets).
const cftMaxUnits = 1<<20 - 1

// cudaRelaxed is cuda::memory_order_relaxed (std::memory_order's 0).
const cudaRelaxed = 0

var cftState cftTable

type cftTable struct {
	devs    map[uint64]*cftDev // by dev comm handle
	groups  map[cftKey]*cftGroup
	seq     map[uint64]int     // comm handle -> CFT dev comms made on it
	winFlag map[uintptr]cftWin // window object -> its flags and comm
	caps    map[uint64]uint64  // comm handle -> the cftCaps its dev comms asked for
	objs    map[uint64]*cftObj // by ncclCftSmem address
	bars    map[uint64]*cftBar
	nextBar uint64
	ports   *fabric.Ports     // the GPUs' fabric ports: package fabric's timing
	flying  map[uint64]uint64 // counter address -> counted bytes submitted, not delivered
	warned  map[string]bool
	wl      *sim.WatchList                  // Lo = ncclCftSmem address: completions
	waits   map[*kernel.Wave]*cftCountedArg // the waitCounted calls waiting, for the hang's causes
	fabric  []*race.Thread                  // by GPU, with the race detector on
	debug   int                             // 0 unread, 1 off, 2 on
}

func cftInit() {
	if cftState.devs != nil {
		return
	}
	cftState.devs, cftState.groups, cftState.seq = map[uint64]*cftDev{}, map[cftKey]*cftGroup{}, map[uint64]int{}
	cftState.winFlag, cftState.objs, cftState.bars = map[uintptr]cftWin{}, map[uint64]*cftObj{}, map[uint64]*cftBar{}
	cftState.caps = map[uint64]uint64{}
	cftState.flying, cftState.warned = map[uint64]uint64{}, map[string]bool{}
	p, err := fabric.NewPorts(fabric.DefaultModel(), max(1, rt.j.Node.GPUs()))
	if err != nil {
		rt.s.Fail(fmt.Errorf("ncclCft: %w", err)) // the default model on at least one GPU: not expected
	}
	cftState.ports = p
	cftState.wl = rt.s.NewWatchList("ncclCft completions")
	cftState.waits = map[*kernel.Wave]*cftCountedArg{}
	rt.s.AddDiagnoser(sim.LayerAPI, "cft-counted", cftDiagnose)
}

// cftDebug is EMUD_NCCL_DEBUG (or MORI_CCO_SDMA_DEBUG, which emud
// explore --debug sets): NCCL checks nothing of a barrier's index or
// slot; with it on emud stops the kernel naming the misuse.
func cftDebug() bool {
	if cftState.debug == 0 {
		cftState.debug = 1
		if cco.Truthy(os.Getenv("EMUD_NCCL_DEBUG")) || cco.Truthy(os.Getenv("MORI_CCO_SDMA_DEBUG")) {
			cftState.debug = 2
		}
	}
	return cftState.debug == 2
}

// cftHost is EMUD_H_CFT: a[0] says which.
//   - EMUD_CFT_H_DEVCOMM: a[1] comm, a[2] dev comm handle, a[3] cftCaps,
//     a[4] cftBarrierCount (ncclDevCommCreate, after the dev comm).
//   - EMUD_CFT_H_WINDOW: a[1] window object, a[2] its flags, a[3] its comm.
func cftHost(a []uint64, bad func(string, int, error) int) int {
	cftInit()
	switch a[0] {
	case C.EMUD_CFT_H_DEVCOMM:
		const call = "ncclDevCommCreate"
		h := a[2]
		if a[1] == 0 || a[1] > uint64(len(rt.commUID)) || h == 0 || h > uint64(len(rt.devcomms)) {
			return bad(call, 1, fmt.Errorf("comm %d or dev comm %d is not one emud made", a[1], h))
		}
		caps, n := a[3], int(int32(a[4]))
		if caps&^(cftCapUnicast|cftCapMultimem) != 0 {
			return bad(call, 1, fmt.Errorf("cftCaps %#x: only NCCL_CFT (1) and NCCL_CFT_MULTIMEM (2) exist", caps))
		}
		if n < 0 {
			return bad(call, 1, fmt.Errorf("cftBarrierCount %d is negative", n))
		}
		if n > 0 && caps == 0 {
			return bad(call, 1, fmt.Errorf("cftBarrierCount %d without cftCaps: CFT barriers need NCCL_CFT", n))
		}
		dc := rt.devcomms[h-1]
		k := cftKey{rt.commUID[a[1]-1], cftState.seq[a[1]]}
		cftState.seq[a[1]]++
		g := cftState.groups[k]
		if g == nil {
			g = &cftGroup{n: dc.LsaSize, nBar: map[int]int{}, epoch: map[[2]int]uint32{}, inbox: map[[3]int]uint32{},
				open: map[[2]int]*cftBar{}, wl: rt.s.NewWatchList("CFT barrier inboxes"), syncs: map[[3]int]*race.Sync{}}
			cftState.groups[k] = g
		}
		g.nBar[dc.LsaRank] = n
		cftState.caps[a[1]] |= caps
		cftState.devs[h] = &cftDev{g: g, rank: dc.LsaRank, caps: caps, nBar: n}
	case C.EMUD_CFT_H_WINDOW:
		const call = "ncclCommWindowRegister"
		w, ok := rt.windows[uintptr(a[1])]
		if !ok {
			return bad(call, 1, fmt.Errorf("window %#x is not one ncclCommWindowRegister made", a[1]))
		}
		if a[2]&winCftCounted != 0 {
			if a[2]&winCollSymmetic == 0 {
				return bad(call, 4, fmt.Errorf("NCCL_WIN_CFT_COUNTED without NCCL_WIN_COLL_SYMMETRIC: counted windows are CFT windows, bound to the LEs"))
			}
			// The buffer's start, not its size (NCCL's own counted
			// all-gather registers data + 263 bytes for its counter).
			if b := w.LocalPtr(0); b%fabric.CountedAlign != 0 {
				return bad(call, 4, fmt.Errorf("a counted window at %#x: NCCL_WIN_CFT_COUNTED needs a 256-byte aligned buffer", b))
			}
		}
		c, err := commOf(a[3])
		if err != nil {
			return bad(call, 1, err)
		}
		cftState.winFlag[uintptr(a[1])] = cftWin{flags: a[2], comm: a[3], n: c.LsaSize}
		// The LE offsets' origin, for cft.h (the object's spare word at
		// byte 24: windowDevice allocates 64 bytes and uses 16).
		*(*uint64)(unsafe.Add(ptr(a[1]), 24)) = rt.mem.SliceBase(0)
	default:
		return bad("emud CFT host call", 1, fmt.Errorf("unknown CFT call %d (headers and library out of step?)", a[0]))
	}
	return hipSuccess
}

// cftCall runs an EMUD_OP_CFT device call of lane ln (a coop's elected
// thread: the header syncs the coop around it).
func (ln *lane) cftCall(a []uint64) {
	cftInit()
	t := ln.t
	switch a[0] {
	case C.EMUD_CFT_BAR_OPEN:
		ln.l.ret = C.uint64_t(ln.cftBarOpen(a[1], int(int64(a[2])), a[3] != 0))
	case C.EMUD_CFT_BAR_ARRIVE:
		ln.cftBarArrive(ln.cftBarOf(a[1]))
	case C.EMUD_CFT_BAR_WAIT:
		ln.l.ret = C.uint64_t(ln.cftBarWait(ln.cftBarOf(a[1]), a[2], a[3] != 0))
	case C.EMUD_CFT_BAR_CLOSE:
		b := ln.cftBarOf(a[1])
		if b.index >= 0 {
			b.d.g.epoch[[2]int{b.d.rank, b.index}] = b.epoch
			if o := b.d.g.open[[2]int{b.d.rank, b.index}]; o == b {
				delete(b.d.g.open, [2]int{b.d.rank, b.index})
			}
		}
		delete(cftState.bars, a[1])
	case C.EMUD_CFT_INIT:
		if a[1]%16 != 0 {
			t.Fail("ncclCft", fmt.Errorf("ncclCftSmem at %#x is not 16-byte aligned", a[1]))
		}
		cftState.objs[a[1]] = &cftObj{who: ln.who()}
	case C.EMUD_CFT_FINI:
		o := ln.cftObjOf("ncclCft::~ncclCft", a[1])
		if len(o.issued) > 0 || o.pending > 0 {
			t.Fail("ncclCft::~ncclCft", fmt.Errorf("the ncclCft on ncclCftSmem %#x ends with %d operations not submitted and %d in flight: submit and flush before the object goes (docs/cft-semantics.md §4.3)", a[1], len(o.issued), o.pending))
		}
		delete(cftState.objs, a[1])
	case C.EMUD_CFT_ISSUE:
		ln.cftIssue(a)
	case C.EMUD_CFT_SUBMIT:
		ln.cftSubmit(ln.cftObjOf("ncclCft::submit", a[1]), a[1])
	case C.EMUD_CFT_FLUSH_SMEM, C.EMUD_CFT_FLUSH:
		call := "ncclCft::flush"
		if a[0] == C.EMUD_CFT_FLUSH_SMEM {
			call = "ncclCft::flushSmem"
		}
		o := ln.cftObjOf(call, a[1])
		if len(o.issued) > 0 {
			t.Fail(call, fmt.Errorf("%d operations issued and not submitted: call ncclCft::submit first, or the flush waits for nothing of them (docs/cft-semantics.md §4.3 rule 1)", len(o.issued)))
		}
		// flushSmem waits until every submitted put and reduction has
		// read its source (its bytes have left the egress port); flush
		// waits for every submitted operation.
		if a[0] == C.EMUD_CFT_FLUSH_SMEM {
			kernel.Converge(t, cftFlushCall, &cftFlushArg{o: o, at: a[1], smem: true})
		} else {
			kernel.Converge(t, cftFlushCall, &cftFlushArg{o: o, at: a[1]})
			o.units = 0 // the phase completed
			if rth := t.RaceThread(); rth != nil {
				rth.Acquire(&o.done) // completion orders every access the operations made
			}
		}
	case C.EMUD_CFT_WAIT_COUNTED:
		ln.cftWaitCounted(a)
	case C.EMUD_CFT_FENCE:
		notifyAll() // sequentially consistent memory: a fence only wakes pollers
	default:
		t.Fail("ncclCft", fmt.Errorf("unknown CFT call %d (headers and library out of step?)", a[0]))
	}
}

func (ln *lane) cftDevOf(call string, h uint64) *cftDev {
	d := cftState.devs[h]
	if d == nil {
		ln.t.Fail(call, fmt.Errorf("the dev comm (handle %d) was made without CFT: set ncclDevCommRequirements.cftCaps (NCCL_CFT) and cftBarrierCount", h))
	}
	return d
}

func (ln *lane) cftObjOf(call string, at uint64) *cftObj {
	o := cftState.objs[at]
	if o == nil {
		ln.t.Fail(call, fmt.Errorf("ncclCftSmem at %#x has no live ncclCft (constructed and not destroyed)", at))
	}
	return o
}

func (ln *lane) cftBarOf(id uint64) *cftBar {
	b := cftState.bars[id]
	if b == nil {
		ln.t.Fail("ncclCftBarrierSession", fmt.Errorf("session %d: not one this lane opened (or one already destroyed)", id))
	}
	return b
}

// cftBarOpen is the session's constructor: the slot's saved epoch. An
// index past cftBarrierCount is NCCL's unchecked access (a slot outside
// the allocation: here a slot of its own), which debug mode names; so is
// a slot another CTA of this rank holds open (the CTAs' arrivals could
// not be told apart: the barrier no longer orders either).
func (ln *lane) cftBarOpen(h uint64, index int, multimem bool) uint64 {
	const call = "ncclCftBarrierSession"
	t := ln.t
	d := ln.cftDevOf(call, h)
	if multimem && d.caps&cftCapMultimem == 0 {
		t.Fail(call, fmt.Errorf("a multimem barrier on a dev comm made without NCCL_CFT_MULTIMEM in cftCaps"))
	}
	site := ln.site().String()
	if index < 0 || index >= d.nBar {
		if cftDebug() {
			t.Fail(call, fmt.Errorf("barrier index %d past the dev comm's cftBarrierCount %d (NCCL does not check it: the session uses state outside the barriers it allocated; EMUD_NCCL_DEBUG)", index, d.nBar))
		}
	}
	b := &cftBar{d: d, index: index, epoch: d.g.epoch[[2]int{d.rank, index}], multimem: multimem, block: t.BlockIdx(), site: site}
	k := [2]int{d.rank, index}
	if o := d.g.open[k]; o != nil && o.block != b.block {
		err := fmt.Errorf("CFT barrier slot %d on rank %d is aliased: block %d opens it while block %d's session (%s) is open; their arrivals cannot be told apart, so the barrier orders neither (give each CTA its own index, cftBarrierCount >= gridDim.x)", index, d.rank, b.block, o.block, o.site)
		if cftDebug() {
			t.Fail(call, err)
		}
		if w := fmt.Sprintf("%d/%d/%s", d.rank, index, site); !cftState.warned[w] {
			cftState.warned[w] = true
			fmt.Fprintf(os.Stderr, "emud: warning: %s: %s: %v (EMUD_NCCL_DEBUG=1 stops the kernel here)\n", site, call, err)
		}
	} else {
		d.g.open[k] = b
	}
	cftState.nextBar++
	cftState.bars[cftState.nextBar] = b
	return cftState.nextBar
}

// cftBarArrive is package fabric's arrive (fabric/barrier.go): unicast,
// a 16-byte put of epoch+1 into every other member's inbox for this rank;
// multimem, one 16-byte multimem reduction into every member's inbox,
// this rank's own included; then submit and flush: the lane returns when
// every arrival's ack is back. Timed by the fabric's ports.
func (ln *lane) cftBarArrive(b *cftBar) {
	g, me := b.d.g, b.d.rank
	now := ln.t.Now()
	v := b.epoch + 1
	var dsts []int
	for p := range g.n {
		if b.multimem || p != me {
			dsts = append(dsts, p)
		}
	}
	arrive := func(peer int, at sim.Time) {
		k := [3]int{peer, b.index, me}
		if rth := ln.t.RaceThread(); rth != nil {
			rth.Release(g.sync(k)) // what the coop did before it arrived
		}
		rt.s.AtWork(at, func() {
			// Never backwards: the arriver waited for this epoch's ack
			// before arriving at the next, so on the fabric the older
			// value landed first; a scheduler that runs this landing
			// after the next one's (PCT) must not undo the newer epoch
			// (cft_barrier -DMULTIMEM, 8 ranks, PCT seed 2, hung so).
			if int32(v-g.inbox[k]) < 0 {
				return
			}
			g.inbox[k] = v
			g.wl.Notify(uint64(peer), uint64(peer)+1)
		})
	}
	var done sim.Time
	arrs := make([]sim.Time, len(dsts))
	if b.multimem {
		_, _, done = cftState.ports.Put(now, me, dsts, true, 16, arrs)
		for i, peer := range dsts {
			arrive(peer, arrs[i])
		}
	} else {
		for i, peer := range dsts {
			_, _, end := cftState.ports.Put(now, me, dsts[i:i+1], false, 16, arrs[i:i+1])
			arrive(peer, arrs[i])
			done = max(done, end)
		}
	}
	if done > now {
		kernel.Converge(ln.t, cftSleepCall, done-now)
	}
}

var cftSleepCall = &kernel.Call[sim.Time]{Name: "ncclCftBarrierSession::arrive", Run: func(g *kernel.Active, d []sim.Time) error {
	g.Actor().Sleep(slices.Max(d))
	return nil
}}

type cftBarWaitArg struct {
	b        *cftBar
	deadline sim.Time // < 0: none
	timedOut bool
}

var cftBarWaitCall = &kernel.Call[*cftBarWaitArg]{Name: "ncclCftBarrierSession::wait", Run: func(g *kernel.Active, ws []*cftBarWaitArg) error {
	for i, w := range ws {
		rth := g.Lanes()[i].RaceThread()
		b := w.b
		gr, me := b.d.g, b.d.rank
		want := b.epoch + 1
		for peer := range gr.n {
			if peer == me && !b.multimem {
				continue // a multimem arrival reaches its own rank too
			}
			k := [3]int{me, b.index, peer}
			pred := func() bool { return gr.inbox[k]-want <= 1<<31-1 }
			kind := "barrier"
			if b.multimem {
				kind = "multimem barrier"
			}
			text := func() string {
				return fmt.Sprintf("ncclCftBarrierSession::wait on CFT rank %d, %s %d: inbox[%d][%d] is %d, waiting for epoch %d (CFT rank %d has not arrived)",
					me, kind, b.index, b.index, peer, gr.inbox[k], want, peer)
			}
			wt := sim.Wait{List: gr.wl, Lo: uint64(me), Hi: uint64(me) + 1, Pred: pred, Text: text}
			if w.deadline < 0 {
				g.Actor().Await(wt)
			} else if !g.Actor().AwaitTimeout(wt, max(w.deadline-g.Actor().Now(), 0)) {
				w.timedOut = true
				break
			}
			if rth != nil {
				rth.Acquire(gr.sync(k))
			}
		}
		if !w.timedOut {
			b.epoch++
		}
	}
	return nil
}}

func (ln *lane) cftBarWait(b *cftBar, timeoutCycles uint64, timed bool) uint64 {
	w := &cftBarWaitArg{b: b, deadline: -1}
	if timed {
		w.deadline = ln.t.Now() + sim.Time(float64(timeoutCycles)/cftState.ports.Model().ClockGHz*float64(sim.Nanosecond))
	}
	kernel.Converge(ln.t, cftBarWaitCall, w)
	if w.timedOut {
		return 1
	}
	return 0
}

// cftIssue is an operation's issue (EMUD_CFT_ISSUE): a[1] the
// ncclCftSmem, a[2] kind, a[3] le, a[4] leOffset, a[5] smem, a[6] bytes,
// a[7] flags (1 multimem, 2 counted, 4 cpMask in bits 16..31), a[8] the
// counter's LE offset, a[9] redop<<8 | type. The window under the LE
// offset gives the comm: its size and the CFT caps its dev comms asked.
func (ln *lane) cftIssue(a []uint64) {
	t := ln.t
	kind, flags := int(a[2]), a[7]
	name := map[int]string{C.EMUD_CFT_PUT: "put", C.EMUD_CFT_GET: "get", C.EMUD_CFT_RED: "red", C.EMUD_CFT_PULLRED: "pullRed"}[kind]
	if flags&1 != 0 && kind != C.EMUD_CFT_PULLRED {
		name += "Multimem"
	}
	if flags&2 != 0 {
		name += "Counted"
	}
	call := "ncclCft::" + name
	o := ln.cftObjOf(call, a[1])
	op := &cftOp{kind: kind, leOff: a[4], smem: a[5], bytes: a[6], mask: 0xffff, counted: flags&2 != 0, counterOff: a[8], red: a[9], site: ln.site().String(),
		multicast: flags&1 != 0}
	if flags&4 != 0 {
		op.mask = uint16(flags >> 16)
	}
	switch {
	case op.smem%16 != 0:
		t.Fail(call, fmt.Errorf("shared memory address %#x is not 16-byte aligned", op.smem))
	case op.bytes%16 != 0 || op.bytes == 0:
		t.Fail(call, fmt.Errorf("%d bytes: CFT moves whole 16-byte words (a positive multiple of 16)", op.bytes))
	case op.leOff%16 != 0:
		t.Fail(call, fmt.Errorf("LE offset %#x is not 16-byte aligned", op.leOff))
	case op.counted && flags&4 != 0:
		t.Fail(call, fmt.Errorf("counted writes take no cpMask"))
	}
	if kind == C.EMUD_CFT_RED || kind == C.EMUD_CFT_PULLRED {
		if _, err := cftReduce(op.red, nil, nil); err != nil {
			t.Fail(call, err)
		}
	}
	if kind == C.EMUD_CFT_PULLRED && op.red == 5 { // ncclCftOpSum<double>
		t.Fail(call, fmt.Errorf("ncclCftOpSum on f64 has no pullRed (docs/cft-semantics.md §8)"))
	}
	win, err := cftWindowAt(op.leOff, op.bytes)
	if err != nil {
		t.Fail(call, fmt.Errorf("LE offset [%#x, +%d): %w", op.leOff, op.bytes, err))
	}
	wf := cftState.winFlag[win]
	caps := cftState.caps[wf.comm]
	if caps == 0 {
		t.Fail(call, fmt.Errorf("the window's comm has no dev comm with CFT: set ncclDevCommRequirements.cftCaps (NCCL_CFT) in ncclDevCommCreate"))
	}
	if flags&1 != 0 {
		if caps&cftCapMultimem == 0 {
			t.Fail(call, fmt.Errorf("a multimem operation on a dev comm made without NCCL_CFT_MULTIMEM"))
		}
		if a[3] != cftMcLe {
			t.Fail(call, fmt.Errorf("LE %#x is not the multicast LE (ncclGetMultimemLeInfo gives it)", a[3]))
		}
		for r := range wf.n {
			op.dsts = append(op.dsts, r)
		}
	} else {
		p := int(int64(a[3]) - cftUcLe)
		if a[3] == cftMcLe || p < 0 || p >= wf.n {
			t.Fail(call, fmt.Errorf("LE %#x is not a unicast LE of this %d-rank CFT team (ncclGetCftLeInfo or ncclGetPeerLeInfo gives them)", a[3], wf.n))
		}
		op.dsts = []int{p}
	}
	if op.counted {
		w, err := cftWindowAt(op.counterOff, 8)
		switch {
		case op.counterOff%fabric.CountedAlign != 0:
			err = fmt.Errorf("counter offset %#x is not 256-byte aligned: a counted write's counter is 8 bytes at a 256-byte aligned offset", op.counterOff)
		case err == nil && cftState.winFlag[w].flags&winCftCounted == 0:
			err = fmt.Errorf("counter offset %#x is not in a window registered with NCCL_WIN_CFT_COUNTED", op.counterOff)
		case err == nil && op.counterOff < op.leOff+op.bytes && op.leOff < op.counterOff+8:
			err = fmt.Errorf("counter [%#x, +8) overlaps the data [%#x, +%d)", op.counterOff, op.leOff, op.bytes)
		}
		if err != nil {
			t.Fail(call, err)
		}
	}
	u := op.bytes / 16
	if kind == C.EMUD_CFT_GET || kind == C.EMUD_CFT_PULLRED {
		u = op.bytes
	}
	if o.units+u > cftMaxUnits {
		t.Fail(call, fmt.Errorf("the ncclCftSmem's transaction count would pass %d units since the last flush (%d + %d; a put or reduction counts bytes/16, a get its bytes: at most 16 MB of puts or 1 MB of gets in flight): flush before issuing more", cftMaxUnits, o.units, u))
	}
	o.units += u
	o.issued = append(o.issued, op)
	if kind == C.EMUD_CFT_PULLRED {
		// Every lane of the warp runs a fetching op's submit: it starts
		// now (as package fabric's), and the next submit hands it over.
		ln.cftStart(o, op, a[1])
	}
}

// cftWindowAt finds the registered window holding [off, off+n) of LE
// offsets (offsets in a GPU's slice): the object's address.
func cftWindowAt(off, n uint64) (uintptr, error) {
	// Every rank's object of a window has the same base: the lowest
	// object, for one answer whatever the map's order.
	var found uintptr
	for p, w := range rt.windows {
		b := w.Base - rt.mem.SliceBase(0)
		if _, ok := cftState.winFlag[p]; ok && off >= b && off+n <= b+w.Bytes && (found == 0 || p < found) {
			found = p
		}
	}
	if found != 0 {
		return found, nil
	}
	return 0, fmt.Errorf("not inside a window registered with ncclCommWindowRegister (NCCL_WIN_COLL_SYMMETRIC) on this comm")
}

// cftAddr is LE offset off on rank r, natively.
func cftAddr(r int, off uint64) uint64 {
	return rt.mem.SliceBase(r) + off
}

// cftSubmit hands the issued operations to the fabric (a pullRed has
// started at its issue).
func (ln *lane) cftSubmit(o *cftObj, at uint64) {
	for _, op := range o.issued {
		if !op.started {
			ln.cftStart(o, op, at)
		}
	}
	o.issued = o.issued[:0]
}

// cftStart starts op, timed by the fabric's ports and moved granule by
// granule (fabric.Granule, in address order) as package fabric moves
// it: a put's or red's source granule is read as its bytes leave the
// egress port and lands at each destination as they arrive there; the
// op completes when the ack is back. A get's or pullRed's granule is read
// at the peers as it leaves them and lands in shared memory as it
// arrives; the op completes with its last granule.
func (ln *lane) cftStart(o *cftObj, op *cftOp, at uint64) {
	me := ln.t.GPU()
	now := ln.t.Now()
	ports := cftState.ports
	op.started = true
	o.pending++
	op.src = me
	if d, lrt := rt.s.Race(), ln.t.RaceThread(); d != nil && lrt != nil {
		op.rth = d.Derive(cftFabricThread(d, me), lrt)
	}
	smem := unsafe.Slice((*byte)(ptr(op.smem)), op.bytes)
	k := fabric.Granules(op.bytes)
	switch op.kind {
	case C.EMUD_CFT_GET, C.EMUD_CFT_PULLRED:
		var ser, sent, arr sim.Time
		if op.kind == C.EMUD_CFT_GET {
			ser, sent, arr = ports.Get(now, me, op.dsts[0], op.bytes)
		} else {
			ser, sent, arr = ports.PullRed(now, me, op.dsts, op.bytes)
		}
		left := k
		for j := range k {
			lo, hi := fabric.GranuleSpan(j, op.bytes)
			rt.s.AtWork(fabric.GranuleAt(sent, ser, j, k), func() {
				got := cftFetch(op, lo, hi)
				rt.s.AtWork(fabric.GranuleAt(arr, ser, j, k), func() {
					if got != nil {
						copy(smem[lo:hi], got)
					}
					if left--; left == 0 {
						cftDone(o, op, at)
					}
				})
			})
		}
	default:
		arrs := make([]sim.Time, len(op.dsts))
		ser, read, end := ports.Put(now, me, op.dsts, op.multicast, op.bytes, arrs)
		for _, d := range op.dsts {
			if op.counted {
				cftState.flying[cftAddr(d, op.counterOff)] += op.bytes
			}
		}
		o.reading++
		// The block's shared memory outlives the op: ~ncclCft fails the
		// kernel while any is in flight. The op completes when the ack
		// is back and every granule has landed everywhere (the ack
		// cannot come first, whatever the tie-break).
		data := make([]byte, op.bytes)
		left := int(k)*len(op.dsts) + 1
		step := func() {
			if left--; left == 0 {
				cftDone(o, op, at)
			}
		}
		for j := range k {
			lo, hi := fabric.GranuleSpan(j, op.bytes)
			rt.s.AtWork(fabric.GranuleAt(read, ser, j, k), func() {
				copy(data[lo:hi], smem[lo:hi])
				if j == k-1 {
					o.reading--
					cftState.wl.Notify(at, at+1)
				}
				for i, d := range op.dsts {
					rt.s.AtWork(fabric.GranuleAt(arrs[i], ser, j, k), func() {
						cftDeliver(op, d, data, lo, hi)
						step()
					})
				}
			})
		}
		rt.s.AtWork(end, step)
	}
}

// cftFetch reads bytes [lo, hi) of a get's source, or of every pullRed
// member's copy folded in team order; nil when a window went (nothing
// lands).
func cftFetch(op *cftOp, lo, hi uint64) []byte {
	var acc []byte
	for _, d := range op.dsts {
		buf := make([]byte, hi-lo)
		addr := cftAddr(d, op.leOff+lo)
		if rt.mem.Read(addr, buf) != nil {
			return nil
		}
		if op.kind == C.EMUD_CFT_GET {
			op.access(addr, hi-lo, "get read", false, false)
			return buf
		}
		op.access(addr, hi-lo, "pullRed read", false, false)
		if acc == nil {
			acc = buf
		} else if _, err := cftReduce(op.red, acc, buf); err != nil {
			return nil
		}
	}
	return acc
}

func cftDone(o *cftObj, op *cftOp, at uint64) {
	if op.rth != nil {
		op.rth.Release(&o.done)
	}
	o.pending--
	cftState.wl.Notify(at, at+1)
}

// cftDeliver writes bytes [lo, hi) of op's data at rank d (masked, or
// reduced), then adds them to its counter when counted.
func cftDeliver(op *cftOp, d int, data []byte, lo, hi uint64) {
	addr, n := cftAddr(d, op.leOff+lo), hi-lo
	cur := make([]byte, n)
	if err := rt.mem.Read(addr, cur); err != nil {
		return // the window went: nothing to write into (ncclCommWindowDeregister names it)
	}
	src := data[lo:hi]
	switch {
	case op.kind == C.EMUD_CFT_RED:
		if _, err := cftReduce(op.red, cur, src); err != nil {
			return
		}
	default:
		for i := range cur {
			if op.mask>>((lo+uint64(i))%16)&1 != 0 {
				cur[i] = src[i]
			}
		}
	}
	prev := rt.s.Writer()
	rt.s.SetWriter(sim.WriterFunc(func() string {
		return "ncclCft::" + map[int]string{C.EMUD_CFT_PUT: "put", C.EMUD_CFT_RED: "red"}[op.kind] + " issued at " + op.site
	}))
	defer rt.s.SetWriter(prev)
	if rt.mem.Write(addr, cur) != nil {
		return
	}
	if op.kind == C.EMUD_CFT_RED {
		op.access(addr, n, "red read", false, false)
	}
	op.access(addr, n, map[int]string{C.EMUD_CFT_PUT: "put write", C.EMUD_CFT_RED: "red write"}[op.kind], true, false)
	rt.mem.Watch().Notify(addr, addr+n)
	if op.counted {
		c := cftAddr(d, op.counterOff)
		if _, err := rt.mem.AtomicAdd64(c, n); err == nil {
			cftState.flying[c] -= min(n, cftState.flying[c])
			// The counter's add releases the data before it, for the
			// waitCounted that acquires it.
			op.access(c, 8, "counter add", true, true)
			if op.rth != nil {
				dt := rt.s.Race()
				op.rth.Release(dt.AddrSync(dt.Space(rt.mem, "LSA memory"), c))
			}
			rt.mem.Watch().Notify(c, c+8)
		}
	}
}

// access records one of op's accesses of [addr, addr+n) with the race
// detector, as the fabric's.
func (op *cftOp) access(addr, n uint64, what string, write, atomic bool) {
	if op.rth == nil {
		return
	}
	d := rt.s.Race()
	d.Access(op.rth, d.Space(rt.mem, "LSA memory"), addr, addr+n, race.Access{Write: write, Atomic: atomic,
		Info: &race.Info{Kind: race.KindFabric, OpKind: race.OpFabric, Who: fmt.Sprintf("GPU %d's fabric", op.src), Op: "ncclCft " + what, Site: op.site}})
}

// cftFabricThread is GPU g's fabric endpoint for the race detector: its
// operations are threads derived from it.
func cftFabricThread(d *race.Detector, g int) *race.Thread {
	for len(cftState.fabric) <= g {
		cftState.fabric = append(cftState.fabric, nil)
	}
	if cftState.fabric[g] == nil {
		cftState.fabric[g] = d.NewThread(fmt.Sprintf("GPU %d's CFT fabric", g))
	}
	return cftState.fabric[g]
}

// cftReduce applies red (redop<<8 | type) element-wise: dst = dst op
// src. With nil slices it only checks the pair. Types: 0 u32, 1 s32, 2
// u64, 3 s64, 4 f32, 5 f64; ops: 0 sum, 1 and, 2 xor, 3 or, 4 min, 5 max
// (f16 and bf16 are not emulated; docs/cuda.md).
func cftReduce(red uint64, dst, src []byte) (bool, error) {
	op, ty := red>>8, red&0xff
	names := []string{"Sum", "And", "Xor", "Or", "Min", "Max"}
	types := []string{"u32", "s32", "u64", "s64", "f32", "f64"}
	if op >= uint64(len(names)) || ty >= uint64(len(types)) {
		return false, fmt.Errorf("reduction %d on type %d: not one emud emulates (Sum, And, Xor, Or, Min, Max on u32, s32, u64, s64, f32, f64)", op, ty)
	}
	float := ty >= 4
	if (float && op >= 1 && op <= 3) || (ty == 4 && op >= 4) || (ty == 5 && op >= 4) || (op == 0 && (ty == 1 || ty == 3)) {
		return false, fmt.Errorf("ncclCftOp%s on %s is not a CFT reduction (docs/cft-semantics.md §8)", names[op], types[ty])
	}
	w := 4
	if ty == 2 || ty == 3 || ty == 5 {
		w = 8
	}
	le := binary.LittleEndian
	for i := 0; i+w <= len(dst); i += w {
		var a, b uint64
		if w == 4 {
			a, b = uint64(le.Uint32(dst[i:])), uint64(le.Uint32(src[i:]))
		} else {
			a, b = le.Uint64(dst[i:]), le.Uint64(src[i:])
		}
		var r uint64
		switch {
		case ty == 4:
			r = uint64(math.Float32bits(math.Float32frombits(uint32(a)) + math.Float32frombits(uint32(b))))
		case ty == 5:
			r = math.Float64bits(math.Float64frombits(a) + math.Float64frombits(b))
		case op == 0:
			r = a + b
		case op == 1:
			r = a & b
		case op == 2:
			r = a ^ b
		case op == 3:
			r = a | b
		default:
			less := a < b
			if ty == 1 {
				less = int32(a) < int32(b)
			} else if ty == 3 {
				less = int64(a) < int64(b)
			}
			if less == (op == 4) {
				r = a
			} else {
				r = b
			}
		}
		if w == 4 {
			le.PutUint32(dst[i:], uint32(r))
		} else {
			le.PutUint64(dst[i:], r)
		}
	}
	return true, nil
}

type cftFlushArg struct {
	o    *cftObj
	at   uint64
	smem bool // flushSmem: wait for the sources' reads only
}

var cftFlushCall = &kernel.Call[*cftFlushArg]{Name: "ncclCft::flush", Run: func(g *kernel.Active, fs []*cftFlushArg) error {
	for _, f := range fs {
		o := f.o
		if f.smem {
			g.Actor().Await(sim.Wait{List: cftState.wl, Lo: f.at, Hi: f.at + 1, Pred: func() bool { return o.reading == 0 },
				Text: func() string {
					return fmt.Sprintf("ncclCft::flushSmem on ncclCftSmem %#x: %d submitted operations have not read their shared-memory sources", f.at, o.reading)
				}})
			continue
		}
		g.Actor().Await(sim.Wait{List: cftState.wl, Lo: f.at, Hi: f.at + 1, Pred: func() bool { return o.pending == 0 },
			Text: func() string {
				return fmt.Sprintf("ncclCft::flush on ncclCftSmem %#x: %d submitted operations not complete", f.at, o.pending)
			}})
	}
	return nil
}}

// cftWaitCounted is waitCounted (EMUD_CFT_WAIT_COUNTED): a[1] the local
// counter, a[2] the expected byte count, a[3] the abort flag (0 none),
// a[4] the memory order.
func (ln *lane) cftWaitCounted(a []uint64) {
	const call = "ncclCft::waitCounted"
	t := ln.t
	addr, want, abort := a[1], a[2], a[3]
	if rt.mem.GPUOf(addr) != t.GPU() {
		t.Fail(call, fmt.Errorf("counter %#x is not in GPU %d's memory: waitCounted polls a local counter", addr, t.GPU()))
	}
	off := addr - rt.mem.SliceBase(t.GPU())
	w, err := cftWindowAt(off, 8)
	switch {
	case err != nil:
	case cftState.winFlag[w].flags&winCftCounted == 0:
		err = fmt.Errorf("its window was not registered with NCCL_WIN_CFT_COUNTED")
	case addr%fabric.CountedAlign != 0:
		err = fmt.Errorf("not 256-byte aligned: a counter is 8 bytes at a 256-byte aligned address")
	}
	if err != nil {
		t.Fail(call, fmt.Errorf("counter %#x: %w", addr, err))
	}
	kernel.Converge(t, cftCountedCall, &cftCountedArg{addr: addr, want: want, abort: abort, rank: t.GPU(), block: t.BlockIdx(), wave: t.ThreadIdx() / t.WarpSize()})
	// An acquiring wait orders the counted data before what follows.
	if d, rth := rt.s.Race(), t.RaceThread(); d != nil && rth != nil && a[4] != uint64(cudaRelaxed) {
		sp := d.Space(rt.mem, "LSA memory")
		d.Access(rth, sp, addr, addr+8, race.Access{Atomic: true, Info: &race.Info{Kind: race.KindLane, OpKind: race.OpLane, Who: ln.who(), Op: "waitCounted counter read", Site: ln.site().String()}})
		rth.Acquire(d.AddrSync(sp, addr))
	}
}

type cftCountedArg struct {
	addr, want, abort uint64
	rank, block, wave int
}

// cftDiagnose is the hang's cause for each waitCounted whose counter
// cannot reach its count: fewer bytes submitted to it than it waits for
// (package fabric's CauseCountedWaits). The counter is named by its
// offset in the rank's memory, the same on every rank, so one wrong count
// in every rank's kernel is one cause.
func cftDiagnose() sim.Diagnosis {
	ws := slices.Collect(maps.Values(cftState.waits))
	slices.SortFunc(ws, func(a, b *cftCountedArg) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.block, b.block), cmp.Compare(a.wave, b.wave))
	})
	var out sim.Diagnosis
	for _, c := range ws {
		v, _ := rt.mem.Load64(c.addr)
		fly := cftState.flying[c.addr]
		if v+fly >= c.want {
			continue
		}
		off := c.addr - rt.mem.SliceBase(c.rank)
		out.Causes = append(out.Causes, sim.Cause{Kind: fabric.CauseCountedWaits, Layer: sim.LayerAPI, Ranks: []int{c.rank},
			Text: fmt.Sprintf("in ncclCft::waitCounted for its counter at offset %#x of its memory to reach %d bytes; it holds %d and the counted writes in flight add %d: the producers deliver fewer bytes than the wait expects (the expected count must be the sum of every producer's bytes of this epoch), or the counter was not reset between epochs", off, c.want, v, fly)})
	}
	return out
}

var cftCountedCall = &kernel.Call[*cftCountedArg]{Name: "ncclCft::waitCounted", Run: func(g *kernel.Active, cs []*cftCountedArg) error {
	for _, c := range cs {
		load := func() uint64 { v, _ := rt.mem.Load64(c.addr); return v }
		pred := func() bool {
			if c.abort != 0 && *(*uint32)(ptr(c.abort)) != 0 {
				return true
			}
			return load() >= c.want
		}
		text := func() string {
			v, fly := load(), cftState.flying[c.addr]
			why := "the counted writes in flight will bring it there"
			if v+fly < c.want {
				why = fmt.Sprintf("even with them it reaches only %d: the producers deliver fewer bytes than the wait expects (the expected count must be the sum of every producer's bytes of this epoch), or the counter was not reset between epochs", v+fly)
			}
			return fmt.Sprintf("ncclCft::waitCounted on rank %d: its counter at %#x to reach %d bytes; it holds %d, and %d bytes of counted writes to it are submitted but not delivered; %s", c.rank, c.addr, c.want, v, fly, why)
		}
		cftState.waits[g.Wave()] = c
		rt.mem.Await(g.Actor(), c.addr, 8, pred, text)
		delete(cftState.waits, g.Wave())
	}
	return nil
}}
