package main

/*
#include <stdlib.h>
#include <string.h>
#include "lane.h"
*/
import "C"

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/cxx"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// grid is one launch's shared state: its lane entry, the context the
// lanes share and the blocks' LDS (in C memory: lanes hold pointers to it
// across device calls).
type grid struct {
	name      string
	entry     C.emud_entry
	ctx       unsafe.Pointer
	free      C.emud_entry
	remaining int
	bdim      [3]uint32
	gdim      [3]uint32
	dynBytes  uint64
	ctxBytes  uint64 // sizeof the header's launch context (lane code reads it)
	blocks    map[int]*blockMem
	done      map[int]uint32 // returned lanes of the blocks not all returned
	nt        uint32         // lanes a block
	nb        uint32         // blocks
	proc      unsafe.Pointer // the forked rank process whose lanes these are (procs.c), nil in this process
	coop      *gridBarrier   // a cooperative launch's grid barrier (gridsync.go), nil otherwise
}

type blockMem struct {
	dyn    unsafe.Pointer
	static map[uint64]unsafe.Pointer
}

func (g *grid) block(b int) *blockMem {
	m := g.blocks[b]
	if m == nil {
		m = &blockMem{static: map[uint64]unsafe.Pointer{}}
		if g.dynBytes > 0 {
			m.dyn = g.alloc(g.dynBytes, 16)
		}
		g.blocks[b] = m
	}
	return m
}

// laneDone is a lane of block b returned: the block's shared memory
// goes with its last lane (a grid over its resident blocks frees each
// block's as it retires), the launch context with the grid's last.
func (g *grid) laneDone(b int) {
	if n := g.done[b] + 1; n < g.nt {
		g.done[b] = n
	} else {
		delete(g.done, b)
		if m := g.blocks[b]; m != nil {
			delete(g.blocks, b)
			g.freeBlock(m)
		}
	}
	g.remaining--
	if g.remaining > 0 {
		return
	}
	if g.free != nil && g.proc != nil {
		C.emud_remote_free_ctx(g.proc, g.free, g.ctx) // the context is the rank process's
	} else if g.free != nil {
		C.emud_call_entry(g.free, g.ctx)
	}
	for _, m := range g.blocks { // none left unless a lane failed
		g.freeBlock(m)
	}
	// The grid's plain stores are visible now: wake whoever polls memory.
	notifyAll()
}

func (g *grid) freeBlock(m *blockMem) {
	g.release(m.dyn)
	for _, p := range m.static {
		g.release(p)
	}
}

// alloc is block memory of the grid's lanes, zeroed: shared with a
// forked rank's process when the lanes run there.
func (g *grid) alloc(n, align uint64) unsafe.Pointer {
	if g.proc != nil {
		return C.emud_shm_alloc(C.size_t(n), C.size_t(align))
	}
	p := C.aligned_alloc(C.size_t(align), C.size_t((n+align-1)/align*align))
	C.memset(p, 0, C.size_t(n))
	return p
}

func (g *grid) release(p unsafe.Pointer) {
	if g.proc != nil {
		C.emud_shm_free(p)
	} else {
		C.free(p)
	}
}

// launch is EMUD_H_LAUNCH: a = gx, gy, gz, bx, by, bz, shmem, stream,
// entry, ctx, free, name, the context's size, the warp size (0: the
// architecture's), 1 for a cooperative launch (gridsync.go), and the
// kernel's address where the header knows no name (hipLaunchKernel's:
// its name comes from the program's DWARF).
func launch(h *host, act *sim.Actor, a []uint64, bad func(string, int, error) int) int {
	st, err := streamOf(h, a[7])
	if err != nil {
		return bad("kernel launch", hipErrorInvalidHandle, err)
	}
	g := &grid{name: cstr(a[11]), entry: C.emud_entry(ptr(a[8])), ctx: ptr(a[9]), free: C.emud_entry(ptr(a[10])),
		gdim: [3]uint32{uint32(a[0]), uint32(a[1]), uint32(a[2])}, bdim: [3]uint32{uint32(a[3]), uint32(a[4]), uint32(a[5])},
		dynBytes: a[6], ctxBytes: a[12], blocks: map[int]*blockMem{}, done: map[int]uint32{}, proc: C.emud_thread_proc()}
	nb := uint64(g.gdim[0]) * uint64(g.gdim[1]) * uint64(g.gdim[2])
	nt := uint64(g.bdim[0]) * uint64(g.bdim[1]) * uint64(g.bdim[2])
	if nb == 0 || nb > 1<<20 || nt == 0 || nt > kernel.MaxBlockThreads {
		return bad("kernel launch "+g.name, hipErrorInvalidValue, fmt.Errorf("grid (%d,%d,%d) of blocks (%d,%d,%d): need 1..2^20 blocks of 1..%d threads",
			g.gdim[0], g.gdim[1], g.gdim[2], g.bdim[0], g.bdim[1], g.bdim[2], kernel.MaxBlockThreads))
	}
	if g.dynBytes > kernel.MaxSharedBytes {
		return bad("kernel launch "+g.name, hipErrorInvalidValue, fmt.Errorf("%d B of dynamic shared memory a block: a block's LDS holds %d B", g.dynBytes, kernel.MaxSharedBytes))
	}
	if err := checkGrid(nb, nt, g.dynBytes); err != nil {
		return bad("kernel launch "+g.name, hipErrorOutOfMemory, fmt.Errorf("grid (%d,%d,%d) of blocks (%d,%d,%d): %w", g.gdim[0], g.gdim[1], g.gdim[2], g.bdim[0], g.bdim[1], g.bdim[2], err))
	}
	g.remaining, g.nt, g.nb = int(nb*nt), uint32(nt), uint32(nb)
	// A CUDA source's launch asks for warps of 32 (cuda_runtime.h), whatever
	// the node's architecture; a HIP launch asks for nothing (0).
	wave := rt.j.Node.Arch().WaveSize
	if a[13] != 0 {
		wave = int(a[13])
	}
	if a[15] != 0 { // hipLaunchKernel, hipLaunchCooperativeKernel
		if name := pcFuncName(a[15]); name != "" {
			g.name = name // the header knows the kernel by its address only
		}
	}
	if a[14] != 0 { // hipLaunchCooperativeKernel
		if err := cooperativeFits(nb, nt, wave, g.dynBytes); err != nil {
			return bad("hipLaunchCooperativeKernel "+g.name, hipErrorCooperativeLaunchTooLarge, err)
		}
		g.coop = &gridBarrier{wl: rt.s.NewWatchList("grid sync")}
	}
	cfg := kernel.Config{Name: g.name, GPU: st.dev, Grid: int(nb), Block: int(nt), WaveSize: wave, Between: laneBetween(),
		Resident: residentBlocks(int(nt), wave, g.dynBytes), Pool: rt.pool}
	body := func(t *kernel.Thread) { runLane(g, t) }
	// The work of one stream runs in order (and the null stream's with
	// the blocking streams'). Work before the kernel that is done (or
	// none) is waited for here, for the race detector's edges, and the
	// grid starts now; else the launch is queued behind it, as HIP queues
	// it, and the thread goes on: a host that sets a flag the stream's
	// earlier work waits for (hipStreamWaitValue32, a kernel's poll)
	// after its launch must not wait for that work at the launch.
	deps := st.deps()
	if !allDone(deps) {
		st.queued(queueLaunch(act, st, g.name, deps, cfg, body))
		return hipSuccess
	}
	if err := st.waitDeps(act); err != nil {
		return bad("kernel launch "+g.name, hipErrorLaunchFailure, err)
	}
	k, err := kernel.Launch(rt.s, cfg, body)
	if err != nil {
		return bad("kernel launch "+g.name, hipErrorInvalidValue, err)
	}
	st.queued(k)
	return hipSuccess
}

// allDone reports whether every op of ops is done.
func allDone(ops []streamOp) bool {
	for _, o := range ops {
		if !o.Done() {
			return false
		}
	}
	return true
}

// queuedLaunch is a kernel launched behind stream work not yet done: an
// actor of its own, ordered after what the launching thread did before
// the launch, waits for that work and then starts the grid.
type queuedLaunch struct {
	name     string
	launched bool
	k        *kernel.Kernel
	err      error
	wl       *sim.WatchList
}

func queueLaunch(act *sim.Actor, st *stream, name string, deps []streamOp, cfg kernel.Config, body func(*kernel.Thread)) *queuedLaunch {
	q := &queuedLaunch{name: name, wl: rt.s.NewWatchList("kernel launch")}
	child := rt.s.Spawn(fmt.Sprintf("kernel %q queued on %s", name, st), func(w *sim.Actor) {
		defer func() {
			q.launched = true
			q.wl.Notify(0, 1)
		}()
		for _, o := range deps {
			if err := o.Wait(w); err != nil {
				q.err = err
				return
			}
		}
		k, err := kernel.Launch(rt.s, cfg, body)
		if err != nil {
			fmt.Fprintf(os.Stderr, "emud: kernel launch %s (queued on %s): %v\n", name, st, err)
			q.err = err
			return
		}
		q.k = k
	})
	if d := rt.s.Race(); d != nil {
		d.Fork(act.RaceThread(), child.RaceThread()) // the grid knows what the host did before the launch
	}
	return q
}

func (q *queuedLaunch) Done() bool { return q.launched && (q.k == nil || q.k.Done()) }

// Wait waits for the grid to start and end, and orders the waiter after
// it.
func (q *queuedLaunch) Wait(a *sim.Actor) error {
	a.Await(sim.Wait{List: q.wl, Lo: 0, Hi: 1, Pred: func() bool { return q.launched },
		Text: func() string { return fmt.Sprintf("kernel %q waits, queued, for its stream's earlier work", q.name) }})
	if q.err != nil {
		return q.err
	}
	return q.k.Wait(a)
}

// lane is one C++ thread of a grid while it runs.
type lane struct {
	t     *kernel.Thread
	l     *C.emud_lane
	g     *grid
	sdmas []*cco.Sdma        // by dev comm handle
	spin  []spinWord         // the words of the last SPIN (for the group wait)
	last  *kernel.NativeSite // the site of the lane's last call but a volatile spin
	// released: the words of the lane's last SPIN, when a quiescent run
	// ended it, not a write (runSpin); valid until the lane's next call
	// other than a spin, fence or clock read.
	released struct {
		words []spinWord
		ok    bool
	}
	barriers []*cco.LsaBarrierSession // the lane's ccoLsaBarrierSessions, by id - 1
	shfl     uint64
	clock    [2]sim.Time // when the lane last read clock64, wall_clock64, plus one (0: never)
	// spinClock: the lane read a clock since its last SPIN or other call
	// (its poll loop has a timeout); timedSince: when its timed spin
	// began, plus one (0: none). runSpin bounds such a spin's wait.
	// credited, run: the watchdog progress the lane's timed spins last
	// credited (plus one) and how long they have run with no other
	// progress since. inSpin: the lane's calls since its last SPIN were
	// spins, fences and clock reads only (a clock read before the loop
	// does not make it timed).
	inSpin     bool
	spinClock  bool
	timedSince sim.Time
	timed      struct{ credited, run sim.Time }
	infos      map[laneInfoKey]*race.Info
	loop       callLoop // the call watch (callwatch.go)
}

var lanes = map[*kernel.Thread]*lane{} // touched only by the running actor

func split(i uint32, d [3]uint32) (x, y, z uint32) {
	return i % d[0], (i / d[0]) % d[1], i / (d[0] * d[1])
}

func runLane(g *grid, t *kernel.Thread) {
	l := C.emud_lane_make(g.entry, g.ctx, g.proc)
	if l == nil {
		t.Fail("launch", errors.New("cannot allocate the lane's stack"))
	}
	ln := &lane{t: t, l: l, g: g}
	lanes[t] = ln
	defer func() {
		delete(lanes, t)
		C.emud_lane_free(l)
		g.laneDone(t.BlockIdx())
	}()
	l.tid[0], l.tid[1], l.tid[2] = split2(uint32(t.ThreadIdx()), g.bdim)
	l.bid[0], l.bid[1], l.bid[2] = split2(uint32(t.BlockIdx()), g.gdim)
	for i := range 3 {
		l.bdim[i], l.gdim[i] = C.uint32_t(g.bdim[i]), C.uint32_t(g.gdim[i])
	}
	l.warp_size, l.lane_id, l.gpu = C.int32_t(t.WarpSize()), C.int32_t(t.Lane()), C.int32_t(t.GPU())
	// The lane's own struct first: a forked rank's process finds its
	// mirror there (procs.c serve_lane).
	ln.allow(unsafe.Pointer(l), C.sizeof_emud_lane)
	ln.allow(g.ctx, g.ctxBytes)
	if g.dynBytes > 0 {
		l.dyn_shared = g.block(t.BlockIdx()).dyn
		if l.dyn_shared == nil {
			t.Fail("launch", fmt.Errorf("no memory for %d bytes of dynamic shared memory", g.dynBytes))
		}
		ln.allow(l.dyn_shared, g.dynBytes)
	}
	for {
		laneRuns(ln)
		l.idle_fences = ln.idleFences()
		C.emud_resume(l)
		if l.unlogged != 0 { // a memcpy, memmove or memset to device memory
			l.unlogged = 0
			rt.announced = false
		}
		ln.takeAccesses()
		laneStops()
		switch l.state {
		case 2:
			ln.flushAccesses(true)
			return
		case 3:
			ln.fault()
		case 1:
			ln.call()
		case C.EMUD_LANE_GONE:
			t.Fail("lane", procGone(l))
		}
	}
}

func split2(i uint32, d [3]uint32) (C.uint32_t, C.uint32_t, C.uint32_t) {
	x, y, z := split(i, d)
	return C.uint32_t(x), C.uint32_t(y), C.uint32_t(z)
}

// allow lets TSan-instrumented lane code touch [p, p+n) of host memory
// (runtime memory lent to the lane); past the slots, the check stays off
// for the rest (never a false report).
func (ln *lane) allow(p unsafe.Pointer, n uint64) {
	l := ln.l
	if p == nil || n == 0 {
		return
	}
	if int(l.nallow) == len(l.allow_lo) {
		l.allow_lo[0], l.allow_hi[0] = 0, ^C.uint64_t(0)
		return
	}
	l.allow_lo[l.nallow], l.allow_hi[l.nallow] = C.uint64_t(uintptr(p)), C.uint64_t(uintptr(p)+uintptr(n))
	l.nallow++
}

// laneInfoKey keys the lane's cache of the race detector's descriptions
// of its native accesses (lane.infos): the device call they preceded, the
// access's pc, write. The cache is the lane's, so it goes when the lane
// returns (a process-wide one keyed by lane kept every lane of every
// launch).
type laneInfoKey struct {
	site  *kernel.NativeSite
	pc    uint64
	write bool
}

// flushAccesses records the device-memory loads and stores the lane's
// TSan-instrumented code logged since its last device call, as accesses
// of its wave's detector thread; atomics and volatile accesses are
// atomic accesses and, for ordering, acquire (and, writing, release)
// their word.
func (ln *lane) flushAccesses(returned bool) {
	l := ln.l
	n := int(l.nlog)
	if n == 0 {
		return
	}
	l.nlog = 0
	var site *kernel.NativeSite // nil: the lane returned
	where := "lane code before the lane returned"
	if !returned && l.file != nil {
		site = ln.site()
		where = "lane code before " + site.String()
	}
	ln.logStores(n, where)
	d := rt.s.Race()
	if d == nil {
		return
	}
	t := ln.t.RaceThread()
	sp := d.Space(rt.mem, "LSA memory")
	for i := range n {
		lo, hi, kind, pc := uint64(l.log_lo[i]), uint64(l.log_hi[i]), int(l.log_kind[i]), uint64(l.log_pc[i])
		// A volatile access is an atomic one here (lane.c's VW says why).
		write, atomic := kind&C.EMUD_ACCESS_WRITE != 0, kind&(C.EMUD_ACCESS_ATOMIC|C.EMUD_ACCESS_VOLATILE) != 0
		k := laneInfoKey{site, pc, write}
		info := ln.infos[k]
		if info == nil {
			op := "load"
			if write {
				op = "store"
			}
			if kind&C.EMUD_ACCESS_VOLATILE != 0 {
				op = "volatile " + op
			}
			at := where
			if line := pcLine(pc); line != "" {
				at = line + ", " + where // the access's own line
			}
			info = &race.Info{Kind: race.KindLane, OpKind: race.OpLane, Op: op,
				Who:  fmt.Sprintf("kernel %q GPU %d block %d wave %d lane %d", ln.g.name, ln.t.GPU(), ln.t.BlockIdx(), ln.t.ThreadIdx()/ln.t.WarpSize(), ln.t.Lane()),
				Site: at}
			if ln.infos == nil {
				ln.infos = map[laneInfoKey]*race.Info{}
			}
			ln.infos[k] = info
		}
		if !atomic {
			d.Access(t, sp, lo, hi, race.Access{Info: info, Write: write})
			continue
		}
		atomicAccess(d, t, sp, lo, hi, info, write)
		if write {
			continue
		}
		if mq := moriRptrIn(lo, hi); mq != nil {
			mq.drainedBy(t)
		}
	}
}

// atomicAccess records t's atomic access of [lo, hi): it conflicts with
// plain accesses only, acquires the word (and its writers) and, writing,
// releases it, an over-approximation of its memory order that can hide a
// race but not invent one. Lanes' atomics and volatile accesses and the
// stream memory operations' words (streammem.go) are recorded so.
func atomicAccess(d *race.Detector, t *race.Thread, sp race.SpaceID, lo, hi uint64, info *race.Info, write bool) {
	d.Access(t, sp, lo, hi, race.Access{Info: info, Write: write, Atomic: true})
	s := d.AddrSync(sp, lo)
	t.Acquire(s)
	d.AcquireWriters(t, sp, lo, hi)
	if write {
		t.Release(s)
	}
}

// logStores announces the lane's logged plain stores to device memory
// (its n log entries) as writes of the lane, at its store's line: the
// words hang reports watch (signal slots, flags) record who wrote them
// and when, and a wait on them wakes now rather than at the grid's end.
// Atomics announce themselves at their own call (EMUD_OP_ATOMIC).
func (ln *lane) logStores(n int, where string) {
	l := ln.l
	wl := rt.mem.Watch()
	prev := rt.s.Writer()
	defer rt.s.SetWriter(prev)
	for i := range n {
		kind := int(l.log_kind[i])
		if kind&C.EMUD_ACCESS_WRITE == 0 || kind&C.EMUD_ACCESS_ATOMIC != 0 {
			continue
		}
		at := where
		if line := pcLine(uint64(l.log_pc[i])); line != "" {
			at = line
		}
		moriNoteStore(ln, uint64(l.log_lo[i]), uint64(l.log_hi[i]), at) // a MORI ring's publish edge (mori.go)
		rt.s.SetWriter(sim.WriterFunc(func() string { return ln.who() + "'s store at " + at }))
		wl.Notify(uint64(l.log_lo[i]), uint64(l.log_hi[i]))
	}
}

// who names the lane as reports do.
func (ln *lane) who() string {
	return fmt.Sprintf("kernel %q GPU %d block %d wave %d lane %d", ln.g.name, ln.t.GPU(), ln.t.BlockIdx(), ln.t.ThreadIdx()/ln.t.WarpSize(), ln.t.Lane())
}

// fault fails the lane that took a signal, naming what and where.
func (ln *lane) fault() {
	l := ln.l
	addr, pc := uint64(l.fault_addr), uint64(l.fault_pc)
	var err error
	if l.sig == C.int(syscall.SIGSEGV) || l.sig == C.int(syscall.SIGBUS) || l.sig >= C.EMUD_SIG_HOST_ACCESS {
		ln.stackOverflow(addr, pc)
	}
	if l.sig >= C.EMUD_SIG_HOST_ACCESS {
		what := "load from"
		if int(l.sig-C.EMUD_SIG_HOST_ACCESS)&C.EMUD_ACCESS_WRITE != 0 {
			what = "store to"
		}
		ln.t.Fail("host access", fmt.Errorf("%s host address %#x (a host pointer: lanes may touch device memory only, hipMalloc or ccoMemAlloc it), pc %s", what, addr, where(pc)))
	}
	switch syscall.Signal(l.sig) {
	case syscall.SIGSEGV, syscall.SIGBUS:
		what := "not device memory: a host pointer, or a pointer that was never allocated"
		if g := rt.mem.GPUOf(addr); g >= 0 {
			what = fmt.Sprintf("an unmapped device address in GPU %d's slice (no allocation holds it)", g)
		}
		err = fmt.Errorf("memory fault at address %#x (%s), pc %s", addr, what, where(pc))
	case syscall.SIGILL, syscall.SIGTRAP:
		err = fmt.Errorf("lane trap (__builtin_trap) at pc %s", where(pc))
		ln.t.Fail("__builtin_trap", err)
	case syscall.SIGABRT:
		err = fmt.Errorf("abort() in the lane (a failed assert?)")
		ln.t.Fail("abort", err)
	case syscall.SIGFPE:
		err = fmt.Errorf("arithmetic fault (integer division by zero?) at pc %s", where(pc))
	default:
		err = fmt.Errorf("signal %d at pc %s", int(l.sig), where(pc))
	}
	ln.t.Fail("fault", err)
}

// stackOverflow fails the lane when the fault at addr is its stack's
// guard page or just below it (a frame larger than the guard page skips
// it): the lane's code ran out of its stack. It read as a memory fault at
// a host address, or with instrumented lane code as a host access.
func (ln *lane) stackOverflow(addr, pc uint64) {
	var size C.uint64_t
	lo := uint64(C.emud_lane_stack(ln.l, &size))
	if addr >= lo+pageBytes || addr+uint64(size) < lo {
		return
	}
	at := pcLine(pc)
	if at == "" {
		at = "pc " + where(pc) + " (build with -g for its line)"
	}
	ln.t.Fail("stack overflow", fmt.Errorf("lane stack overflow in kernel %q at %s: the lane used up its %d KiB stack (deep recursion, or large local arrays, in lane code); the fault at %#x is %s",
		ln.g.name, at, uint64(size)>>10, addr, belowStack(addr, lo)))
}

// pageBytes is the lane stack's guard page (lane.c).
const pageBytes = 4096

func belowStack(addr, lo uint64) string {
	if addr >= lo {
		return "in the guard page below the stack"
	}
	return fmt.Sprintf("%d B below the stack's guard page", lo-addr)
}

// siteKey interns native sites by the address of the file literal.
type siteKey struct {
	file uintptr
	line int32
	fn   uintptr
}

var sites = map[siteKey]*kernel.NativeSite{}

func (ln *lane) site() *kernel.NativeSite {
	if s := ln.ctxSite(); s != nil {
		return s
	}
	l := ln.l
	k := siteKey{uintptr(unsafe.Pointer(l.file)), int32(l.line), uintptr(unsafe.Pointer(l._func))}
	if s := sites[k]; s != nil {
		return s
	}
	file, fn := C.GoString(l.file), C.GoString(l._func)
	s := kernel.NewNativeSite(fn, file, int(l.line), cxx.LoopsAt(file, int(l.line)))
	sites[k] = s
	return s
}

// volatileSite is the point of a lane's spin on volatile loads (lane.c
// volatile_load), which is no call of the lane's: its last call's site,
// since the loop runs after that call and before any later one (so
// lanes still to reach later points of the wave wait for the spin, as
// on a GPU), with its whole call chain where the lane's code records
// one; or, if the lane made no call yet, the load's own line (pc).
func (ln *lane) volatileSite(pc uint64) *kernel.NativeSite {
	if ln.last != nil {
		return ln.last
	}
	file, line := pcFileLine(pc)
	if file == "" {
		file = "(a volatile load in lane code with no line table)"
	}
	return kernel.NewNativeSite("", file, line, cxx.LoopsAt(file, line))
}

func (ln *lane) sdma(h uint64) *cco.Sdma {
	if h == 0 || h > uint64(len(rt.devcomms)) {
		ln.t.Fail("ccoSdma", fmt.Errorf("dev comm handle %d: not a ccoDevComm that ccoDevCommCreate filled", h))
	}
	if rt.devDead[h-1] {
		ln.t.Fail("ccoSdma", fmt.Errorf("dev comm handle %d was destroyed (ccoDevCommDestroy) before this kernel used it", h))
	}
	for uint64(len(ln.sdmas)) < h {
		ln.sdmas = append(ln.sdmas, nil)
	}
	if ln.sdmas[h-1] == nil {
		ln.sdmas[h-1] = cco.NewSdma(ln.t, rt.devcomms[h-1])
	}
	return ln.sdmas[h-1]
}

// queueInRange says on stderr, once per dev comm and call site, that a
// debug-mode (MORI_CCO_SDMA_DEBUG) call's queueId is outside [0,
// sdmaNumQueue): the call does nothing, as in MORI's release and debug
// builds alike (cco.hpp returns before touching a queue; no check traps
// on it), so a queue count clamped to 8 leaves ids 8 and above posting
// nothing with no sign of it but this line.
func (ln *lane) queueInRange(call string, h, q uint64) {
	if h == 0 || h > uint64(len(rt.devcomms)) {
		return // sdma() fails the lane naming the handle
	}
	dc := rt.devcomms[h-1]
	n := int64(dc.Sdma.SdmaNumQueue)
	if !dc.Debug || n == 0 || (int64(q) >= 0 && int64(q) < n) {
		return
	}
	site := ln.site()
	k := queueNote{h, site}
	if queueNoted[k] {
		return
	}
	queueNoted[k] = true
	fmt.Fprintf(os.Stderr, "emud: warning: %s: ccoSdma::%s on rank %d: queueId %d is outside [0, %d) (sdmaNumQueue): the call does nothing, as in MORI's release and debug builds (MORI_CCO_SDMA_DEBUG: emud says so once per call site)\n",
		site, call, dc.Rank, int64(q), n)
}

type queueNote struct {
	h    uint64
	site *kernel.NativeSite
}

var queueNoted = map[queueNote]bool{} // touched only by the running actor

// lsaBarrier runs a ccoLsaBarrierSession call (EMUD_OP_LSA_BARRIER): a[0]
// is which, a[1] the coop, a[2] the dev comm, a[3] the session (when
// opening, the slot), a[4:7] the team, a[7] and a[9] the handle's
// bufOffset and nBarriers (opening), a[7] the timeout in cycles when a[8]
// is 1 (waiting).
func (ln *lane) lsaBarrier(a []uint64) {
	const call = "ccoLsaBarrierSession"
	t := ln.t
	if a[0] == C.EMUD_LSA_OPEN {
		h := a[2]
		if h == 0 || h > uint64(len(rt.devcomms)) {
			t.Fail(call, fmt.Errorf("dev comm handle %d: not a ccoDevComm that ccoDevCommCreate filled", h))
		}
		dc := rt.devcomms[h-1]
		// The handle, by value as the kernel passed it: one of the dev
		// comm's two, or an error naming what it holds.
		n, off := int(int32(a[9])), uint64(uint32(a[7]))
		_, lsaOff, hybridOff := barrierWindow(dc)
		var bh cco.LsaBarrierHandle
		switch {
		case n == dc.LsaBarrier.NBarriers && off == lsaOff:
			bh = dc.LsaBarrier
		case n == dc.HybridLsaBarrier.NBarriers && off == hybridOff:
			bh = dc.HybridLsaBarrier
		default:
			t.Fail(call, fmt.Errorf("a barrier handle {bufOffset %#x, nBarriers %d} that is neither this dev comm's lsaBarrier {%#x, %d} nor its hybridLsaBarrier {%#x, %d}", off, n, lsaOff, dc.LsaBarrier.NBarriers, hybridOff, dc.HybridLsaBarrier.NBarriers))
		}
		team := cco.Team{NRanks: int(int32(a[4])), Rank: int(int32(a[5])), Stride: int(int32(a[6]))}
		s := cco.NewLsaBarrierSessionOn(coopGroup(t, a[1]), dc, team, bh, int(int64(a[3])))
		if ncclDevs[h] {
			// NCCL's barrier: its signals cross the fabric (docs/timing.md).
			s.SetTiming(cftState.ports)
		}
		ln.barriers = append(ln.barriers, s)
		ln.l.ret = C.uint64_t(len(ln.barriers))
		return
	}
	id := a[3]
	if id == 0 || id > uint64(len(ln.barriers)) || ln.barriers[id-1] == nil {
		t.Fail(call, fmt.Errorf("session %d: not a ccoLsaBarrierSession this lane opened (or one already destroyed)", id))
	}
	s := ln.barriers[id-1]
	switch a[0] {
	case C.EMUD_LSA_ARRIVE:
		s.Arrive()
	case C.EMUD_LSA_WAIT:
		if a[8] != 0 {
			ln.l.ret = C.uint64_t(s.WaitTimeout(a[7]))
		} else {
			s.Wait()
		}
	case C.EMUD_LSA_CLOSE:
		s.Close()
		ln.barriers[id-1] = nil
	default:
		t.Fail(call, fmt.Errorf("unknown session call %d (headers and library out of step?)", a[0]))
	}
}

// coopGroup is the lane's group of a Coop (0 thread, 1 warp, 2 block).
func coopGroup(t *kernel.Thread, coop uint64) kernel.Group {
	switch coop {
	case 1:
		return t.WarpGroup()
	case 2:
		return t.BlockGroup()
	}
	return t.ThreadGroup()
}

func (ln *lane) window(call string, p uint64) cco.Window {
	w, ok := rt.windows[uintptr(p)]
	if !ok {
		ln.t.Fail(call, fmt.Errorf("window %#x is not a ccoWindow_t that ccoWindowRegister returned", p))
	}
	return w
}

// waitOpts: postWaitMem/postWaitSignal take Coop and optFlags.
func waitOpts(f uint64) []cco.Option {
	return []cco.Option{cco.Coop(f & 3), cco.OptFlags(f >> 4 & 0xf)}
}

// bcastOpts: putBroadcast takes Coop, signals and optFlags.
func bcastOpts(f uint64) []cco.Option {
	return sigOpts(f, []cco.Option{cco.Coop(f & 3), cco.OptFlags(f >> 4 & 0xf)})
}

func sigOpts(f uint64, o []cco.Option) []cco.Option {
	if f>>2&1 != 0 {
		o = append(o, cco.LocalSignal)
	}
	if f>>3&1 != 0 {
		o = append(o, cco.RemoteSignal)
	}
	return o
}

func putOpts(f uint64) []cco.Option {
	o := []cco.Option{cco.Coop(f & 3), cco.OptFlags(f >> 4 & 0xf)}
	if cco.Coop(f&3) == cco.CoopThread {
		o = append(o, cco.ThreadMode(f>>8&0xf)) // C++ static_asserts it away elsewhere
	}
	return sigOpts(f, o)
}

var (
	shflCall = &kernel.Call[kernel.None]{Name: "__shfl", Run: runShfl}
	spinCall = &kernel.Call[kernel.None]{Name: "atomic load (spin)", Run: runSpin}
	// volatileSpinCall is spinCall for a spin on volatile loads (lane.c
	// volatile_load): the same wait, named for what the lane does.
	volatileSpinCall = &kernel.Call[kernel.None]{Name: volatileSpin, Run: runSpin}
	stepCall         = &kernel.Call[kernel.None]{Name: "atomic access", StepOnly: true, Run: func(*kernel.Active, []kernel.None) error { return nil }}
	clockCall        = &kernel.Call[kernel.None]{Name: "clock read (spin)", Run: func(g *kernel.Active, _ []kernel.None) error { g.Actor().Sleep(clockPoll); return nil }}
	// clockPayCall only gathers the lanes: kernel.Config.Between has made
	// the wave pay for their code before it runs.
	clockPayCall = &kernel.Call[kernel.None]{Name: "clock read", Run: func(*kernel.Active, []kernel.None) error { return nil }}
)

// notifyAll wakes every watcher whose condition now holds: memory may
// have changed anywhere (a grid's end, a fence after stores nothing
// announced).
func notifyAll() {
	rt.mem.Watch().NotifyAll()
	rt.announced = true
}

// fenceWakesAll reports whether a lane's fence must wake every watcher
// whose condition holds: only when some device store since the last such
// wake was not logged (rt.announced), or any may go unlogged (lane.c
// emud_logs_all_stores). The lane's own logged stores were announced at
// this call (flushAccesses). Why, and what is partial: doc.go, "Lanes".
func fenceWakesAll() bool {
	return !rt.announced || C.emud_logs_all_stores() == 0
}

// volatileSpin is volatileSpinCall's name: runSpin tells its groups by it.
const volatileSpin = "volatile load (spin)"

// idleFencesMax is how many fences in a row a lane passes in C while they
// do nothing (lane.c emud_fence_skip): a loop of fences then still makes
// a call every idleFencesMax+1 turns, for the call watch.
const idleFencesMax = 64

// idleFences is the lane's idle_fences for its next resume: how many of
// its fences may pass without a call, nonzero when a fence would do
// nothing now (call's EMUD_OP_FENCE: every store is announced, so it
// would not wake everyone, and the lane has no ring store waiting for a
// publish). The lane's own accesses, counts and unlogged stores since
// then, which its fence would carry, lane.c checks.
func (ln *lane) idleFences() C.int32_t {
	if !rt.announced {
		return 0
	}
	if len(moriPending) > 0 {
		if _, ok := moriPending[ln]; ok {
			return 0
		}
	}
	return idleFencesMax
}

// call runs the lane's pending device call.
func (ln *lane) call() {
	l, t := ln.l, ln.t
	a := unsafe.Slice((*uint64)(unsafe.Pointer(&l.a[0])), len(l.a))
	if l.op == C.EMUD_OP_SPIN && a[4] == 1 {
		t.AtNative(ln.volatileSite(a[5]))
	} else {
		ln.last = ln.site()
		t.AtNative(ln.last)
	}
	defer func() {
		t.AtNative(nil)
		l.nctx = 0 // the next call sets its own (lane.c's access-log flush does not)
		if r := recover(); r != nil {
			if le, ok := r.(*kernel.LaneError); ok && le.Err != nil {
				le.Err = fmt.Errorf("%w (at %s)", le.Err, ln.site()) // the C++ call, for the report
			}
			panic(r)
		}
	}()
	ln.flushAccesses(false) // what the lane did before this call
	if l.op == C.EMUD_OP_ACCESSES {
		return
	}
	ln.watchCall(int(l.op))
	l.ret = 0
	switch l.op {
	case C.EMUD_OP_SPIN, C.EMUD_OP_FENCE, C.EMUD_OP_CLOCK, C.EMUD_OP_STEP:
	default:
		ln.released.ok = false // the lane did something else since
		ln.inSpin, ln.spinClock, ln.timedSince = false, false, 0
	}
	switch l.op {
	case C.EMUD_OP_PUT:
		ln.queueInRange("put", a[8], a[7])
		ln.sdma(a[8]).Put(int(a[1]), ln.window("put", a[2]), a[3], ln.window("put", a[4]), a[5], a[6], int(a[7]), putOpts(a[0])...)
	case C.EMUD_OP_GET:
		ln.queueInRange("get", a[8], a[7])
		ln.sdma(a[8]).Get(int(a[1]), ln.window("get", a[2]), a[3], ln.window("get", a[4]), a[5], a[6], int(a[7]), putOpts(a[0])...)
	case C.EMUD_OP_QUIET:
		ln.sdma(a[2]).Quiet(int(a[1]), cco.Coop(a[0]))
	case C.EMUD_OP_QUIET_QUEUE:
		ln.queueInRange("quietQueue", a[3], a[2])
		ln.sdma(a[3]).QuietQueue(int(a[1]), int(a[2]), cco.Coop(a[0]))
	case C.EMUD_OP_COMMIT:
		if cco.Coop(a[0]) == cco.CoopThread { // warp and block scope ring every queue, whatever queueId says
			ln.queueInRange("commit", a[3], a[2])
		}
		ln.sdma(a[3]).Commit(int(a[1]), int(a[2]), cco.Coop(a[0]))
	case C.EMUD_OP_WAIT_SIGNAL:
		ln.queueInRange("waitSignal", a[3], a[1])
		ln.sdma(a[3]).WaitSignal(int(a[0]), int(a[1]), a[2])
	case C.EMUD_OP_PUT_BCAST:
		ln.queueInRange("putBroadcast", a[11], a[10])
		ln.sdma(a[11]).PutBroadcast(int(a[1]), ln.window("putBroadcast", a[2]), a[3], int(a[4]), ln.window("putBroadcast", a[5]), a[6],
			ln.window("putBroadcast", a[7]), a[8], a[9], int(a[10]), bcastOpts(a[0])...)
	case C.EMUD_OP_POST_WAIT_MEM:
		ln.queueInRange("postWaitMem", a[8], a[2])
		ln.sdma(a[8]).PostWaitMem(int(a[1]), int(a[2]), ln.window("postWaitMem", a[3]), a[4], uint32(a[5]), cco.Cmp(a[6]), uint32(a[7]), waitOpts(a[0])...)
	case C.EMUD_OP_POST_WAIT_SIGNAL:
		ln.queueInRange("postWaitSignal", a[6], a[2])
		ln.sdma(a[6]).PostWaitSignal(int(a[1]), int(a[2]), int(a[3]), int(a[4]), a[5], waitOpts(a[0])...)
	case C.EMUD_OP_SYNC_THREADS:
		t.SyncThreads()
	case C.EMUD_OP_SYNC_WARP:
		t.SyncWarp()
	case C.EMUD_OP_GRID_SYNC:
		kernel.Converge(t, gridSyncCall, kernel.None{})
	case C.EMUD_OP_BALLOT:
		l.ret = C.uint64_t(t.Ballot(a[0] != 0))
	case C.EMUD_OP_ACTIVE_MASK:
		l.ret = C.uint64_t(t.ActiveMask())
	case C.EMUD_OP_SHFL:
		kernel.Converge(t, shflCall, kernel.None{})
		l.ret = C.uint64_t(ln.shfl)
	case C.EMUD_OP_SPIN:
		ln.spin = ln.spinWords(a[3])
		ln.inSpin = true
		c := spinCall
		if a[4] == 1 { // lane.c volatile_load's
			c = volatileSpinCall
		}
		kernel.Converge(t, c, kernel.None{})
	case C.EMUD_OP_STEP:
		// A lock-step point: the lane's atomic access waits for the
		// wave's program order to reach it (hip_runtime.h step).
		kernel.Converge(t, stepCall, kernel.None{})
	case C.EMUD_OP_ATOMIC:
		if rt.mem.GPUOf(a[0]) >= 0 {
			prev := rt.s.Writer()
			rt.s.SetWriter(sim.WriterFunc(func() string { return ln.who() + "'s atomic at " + ln.site().String() }))
			rt.mem.Watch().Notify(a[0], a[0]+a[1])
			rt.s.SetWriter(prev)
		}
	case C.EMUD_OP_FENCE:
		moriPublished(ln) // the lane's stores have landed (mori.go)
		if fenceWakesAll() {
			notifyAll()
		}
	case C.EMUD_OP_LSA_BARRIER:
		ln.lsaBarrier(a)
	case C.EMUD_OP_GIN:
		ln.gin(a)
	case C.EMUD_OP_CFT:
		ln.cftCall(a) // nccl_cft.go
	case C.EMUD_OP_CLOCK:
		// A read of a clock at the instant of the lane's last read of it
		// is a spin on the clock (a delay loop): the lane reads it
		// clockPoll later, so the loop advances virtual time and ends. A
		// read after time passed returns at once, so timing a piece of
		// work is not changed.
		k := min(a[0], 1)
		if laneCode.Owes(t) {
			// The lane's code since its last call takes its time first
			// (lanecost.go), so clock64 around lane work measures it.
			kernel.Converge(t, clockPayCall, kernel.None{})
		} else if ln.clock[k] == t.Now()+1 {
			kernel.Converge(t, clockCall, kernel.None{})
		}
		ln.clock[k] = t.Now() + 1
		ln.spinClock = ln.inSpin
		hz := uint64(2_400_000_000) // clock64: the shader clock of MI355X
		if k == 1 {
			hz = 100_000_000 // wall_clock64: the 100 MHz constant clock
		}
		l.ret = C.uint64_t(uint64(t.Now()) / 1000 * hz / 1_000_000_000)
	case C.EMUD_OP_UNSUPPORTED:
		t.Fail(cstr(a[0]), fmt.Errorf("%s is not supported by emud (see capi/doc.go for the HIP subset)", cstr(a[0])))
	case C.EMUD_OP_TRAP:
		t.Fail(cstr(a[0]), fmt.Errorf("lane trap: %s", cstr(a[0])))
	case C.EMUD_OP_SHARED:
		m := ln.g.block(t.BlockIdx())
		p := m.static[a[0]]
		if p == nil {
			p = ln.g.alloc(a[1], max(a[2], 16))
			if p == nil {
				t.Fail("__shared__", fmt.Errorf("no memory for %d bytes of block shared memory", a[1]))
			}
			m.static[a[0]] = p
		}
		ln.allow(p, a[1])
		l.ret = C.uint64_t(uintptr(p))
	default:
		t.Fail("device call", fmt.Errorf("unknown device call %d (headers and library out of step?)", int(l.op)))
	}
}

// runShfl gives each lane the value of its source lane (a[1]) within its
// width-lane segment (a[2]); a source lane not in the group gives the
// lane its own value.
func runShfl(g *kernel.Active, _ []kernel.None) error {
	vals := map[int]uint64{}
	for _, t := range g.Lanes() {
		vals[t.Lane()] = uint64(lanes[t].l.a[0])
	}
	for _, t := range g.Lanes() {
		ln := lanes[t]
		src, width := int(int32(ln.l.a[1])), int(int32(ln.l.a[2]))
		if width <= 0 || width > t.WarpSize() {
			width = t.WarpSize()
		}
		base := t.Lane() / width * width
		s := base + ((src%width)+width)%width
		v, ok := vals[s]
		if !ok {
			v = vals[t.Lane()]
		}
		ln.shfl = v
	}
	return nil
}

// spinWord is a word a spinning lane polls and the value it read there.
type spinWord struct{ addr, width, seen uint64 }

// spinWords are the words of a lane's SPIN: its last k atomic loads
// (hip_runtime.h note_load's ring), oldest first, which repeat a cycle.
func (ln *lane) spinWords(k uint64) []spinWord {
	if k < 1 || k > C.EMUD_SPIN_WORDS {
		ln.t.Fail("atomic load (spin)", fmt.Errorf("spin over %d words: want 1 to %d (headers and library out of step?)", k, C.EMUD_SPIN_WORDS))
	}
	ws := ln.spin[:0]
	for j := int(k) - 1; j >= 0; j-- {
		i := (int(ln.l.nload) - 1 - j) & 15
		ws = append(ws, spinWord{uint64(ln.l.load_addr[i]), uint64(ln.l.load_width[i]), uint64(ln.l.load_val[i])})
	}
	return ws
}

// runSpin is a group of lanes whose atomic loads at one point of the
// program repeat a cycle over one or a few words with unchanged values:
// they wait, as a subscription, for a write to any of the words they
// poll, after one poll interval.
//
// Two reads of an unchanged word are not always a poll (a wait loop that
// saw its flag, then a read of that flag), so the first such wait ends,
// with nothing written, if the run becomes quiescent (no write can then
// come): the lanes go on. A lane that then spins again on the same words
// and values, having done nothing else but fences and clock reads, is
// polling for good: that wait is a real one, and the run's quiescence is
// a hang naming it.
func runSpin(g *kernel.Active, _ []kernel.None) error {
	a := g.Actor()
	a.Sleep(spinPoll)
	changed := func() bool {
		for _, t := range g.Lanes() {
			for _, w := range lanes[t].spin {
				if load(w.addr, w.width) != w.seen {
					return true
				}
			}
		}
		return false
	}
	if changed() {
		return nil
	}
	// One watched span over all the words: a write between them only
	// wakes the group to check again.
	lo, hi := ^uint64(0), uint64(0)
	again := true
	for _, t := range g.Lanes() {
		ln := lanes[t]
		for _, w := range ln.spin {
			if rt.mem.GPUOf(w.addr) < 0 {
				return nil // not device memory: no writes to watch, poll again
			}
			lo, hi = min(lo, w.addr), max(hi, w.addr+w.width)
		}
		again = again && ln.released.ok && slices.Equal(ln.released.words, ln.spin)
	}
	first := lanes[g.Lanes()[0]].spin
	kind, one := "atomic", "an atomic"
	if g.Call() == volatileSpin {
		kind, one = "volatile", "a volatile"
	}
	what := func() string {
		if len(first) == 1 {
			return fmt.Sprintf("spin on %s load of %#x (%d lanes) at %s: value %#x, never written again", one, first[0].addr, len(g.Lanes()), g.Site(), first[0].seen)
		}
		addrs, vals := make([]string, len(first)), make([]string, len(first))
		for i, w := range first {
			addrs[i], vals[i] = fmt.Sprintf("%#x", w.addr), fmt.Sprintf("%#x", w.seen)
		}
		return fmt.Sprintf("spin on %s loads of %d words in turn (%s; %d lanes) at %s, the load that closed the cycle: values %s, none written again",
			kind, len(first), strings.Join(addrs, ", "), len(g.Lanes()), g.Site(), strings.Join(vals, ", "))
	}
	if d, ok := timedSpin(g); ok {
		// A poll with a timeout: the write, or the lanes' next clock read.
		a.AwaitTimeout(sim.Wait{List: rt.mem.Watch(), Lo: lo, Hi: hi, Pred: changed, Text: what}, d)
		return nil
	}
	written := true
	if again {
		rt.mem.Await(a, lo, hi-lo, changed, what)
	} else {
		written = a.AwaitUnlessQuiescent(sim.Wait{List: rt.mem.Watch(), Lo: lo, Hi: hi, Pred: changed, Text: what})
	}
	for _, t := range g.Lanes() {
		ln := lanes[t]
		ln.released.words, ln.released.ok = append(ln.released.words[:0], ln.spin...), !written
	}
	return nil
}

// timedSpin says whether the group's spin is a poll with a timeout (a
// lane read a clock between its last two SPINs, so its first spin waits
// as an untimed one: MORI's and NCCL's timed
// barrier waits, `while (!flag) if (clock64() - start > t) break;`) and
// how long it waits for a write before the lanes run again to read the
// clock: a sixteenth of the time the spin has lasted, at least one poll,
// so a timeout is overshot by at most 1/16 and reached in a few hundred
// wake-ups (0.2 s from 100 ns: about 240; past 0.8 s a wait is at most
// maxTimedStep). Each wake-up is watchdog
// progress (the program asked to wait that long, as a timed wait longer
// than the watchdog's span is), until the lane's timed spins have run
// maxTimedSpin with no other progress: then, as for a spin without a
// clock read, the spin waits for a write and the run's quiescence is a
// hang report naming it. Before, every such poll was reported as a hang
// at once, where hardware times out.
func timedSpin(g *kernel.Active) (sim.Time, bool) {
	now := g.Actor().Now()
	timed := false
	for _, t := range g.Lanes() {
		ln := lanes[t]
		timed = timed || ln.spinClock
		ln.spinClock = false
	}
	since, run := now, sim.Time(0)
	for _, t := range g.Lanes() {
		ln := lanes[t]
		if !timed {
			ln.timedSince = 0
			continue
		}
		if ln.timedSince == 0 {
			ln.timedSince = now + 1
		}
		since = min(since, ln.timedSince-1)
		if ln.timed.credited != rt.s.LastProgress()+1 {
			ln.timed.run = 0 // progress came from elsewhere since
		}
		run = max(run, ln.timed.run)
	}
	if !timed || run > maxTimedSpin {
		return 0, false
	}
	// At most maxTimedStep: a wait longer than the watchdog's span would
	// credit progress of its own, and the lane's run could not be told
	// from other progress.
	d := min(max(spinPoll, (now-since)/16), maxTimedStep)
	rt.s.Progress()
	for _, t := range g.Lanes() {
		ln := lanes[t]
		ln.timed.credited, ln.timed.run = now+1, ln.timed.run+d
	}
	return d, true
}

// maxTimedSpin bounds how long a lane's timed spins may keep a run going
// with no other progress: longer than any timeout a test waits for
// (MORI's barrier test: 0.2 s).
const maxTimedSpin = 10 * sim.Second

// maxTimedStep is the longest wait of a timed spin: half the watchdog's
// default span.
const maxTimedStep = sim.DefaultWatchdog / 2

// spinPoll is the virtual time between two polls of a spinning lane
// (s_sleep(2) at 2.4 GHz is about 53 ns; rounded up for the load itself).
const spinPoll = 100 * sim.Nanosecond

// clockPoll is the virtual time a lane's clock read takes when it reads
// the clock again at the same instant: about a clock read (s_memtime) and
// the loop around it, rounded; not calibrated. A delay loop on clock64
// overshoots its target by less than this.
const clockPoll = 20 * sim.Nanosecond

func load(addr, width uint64) uint64 {
	switch width {
	case 1:
		return uint64(*(*uint8)(ptr(addr)))
	case 2:
		return uint64(*(*uint16)(ptr(addr)))
	case 4:
		return uint64(*(*uint32)(ptr(addr)))
	}
	return *(*uint64)(ptr(addr))
}

// pcLines maps the return address of a lane's instrumented access to
// its source file:line, from the program's DWARF line table (emud c++
// compiles with -g1 when it instruments lanes); "" where the program has
// none, or is position-independent (its addresses are not the table's).
// Under the seed server the program is the seed form, loaded at bias:
// the table is read once per file (its identity, id), and the cache is
// by address in the file, so the seeds of one server share them.
var pcLines pcLineTable

type pcLineTable struct {
	loaded bool
	bias   uint64
	id     fileID
	d      *dwarf.Data
	cache  map[uint64]fileLine // by pc - bias
	// rows holds the decoded line programs of the units looked up, by
	// unit: a lane's call contexts hit a few units at many addresses, and
	// decoding a unit's whole program for each address was some 40% of
	// the mapping's cost (put.cpp against the MORI-shaped header).
	rows map[dwarf.Offset][]lineRow
}

// lineRow is one row of a unit's line table, as lineAt reads it.
type lineRow struct {
	addr    uint64
	file    string
	hasFile bool
	line    int
	end     bool // the row ends its sequence
}

// unitRows is the decoded line table of unit cu (nil when it has none).
func unitRows(d *dwarf.Data, cu *dwarf.Entry) []lineRow {
	if rows, ok := pcLines.rows[cu.Offset]; ok {
		return rows
	}
	var rows []lineRow
	if lr, err := d.LineReader(cu); err == nil && lr != nil {
		var e dwarf.LineEntry
		for lr.Next(&e) == nil {
			r := lineRow{addr: e.Address, hasFile: e.File != nil, line: e.Line, end: e.EndSequence}
			if e.File != nil {
				r.file = e.File.Name
			}
			rows = append(rows, r)
		}
	}
	if pcLines.rows == nil {
		pcLines.rows = map[dwarf.Offset][]lineRow{}
	}
	pcLines.rows[cu.Offset] = rows
	return rows
}

func pcLine(pc uint64) string { return pcEntry(pc).show }

// pcFileLine is pcLine's file and line ("", 0 where unknown).
func pcFileLine(pc uint64) (string, int) {
	e := pcEntry(pc)
	return e.file, e.line
}

// pcEntry is pc's file, line and "file:line", looked up once a pc: a
// lane's logged store asked for its line at each device call, and the
// formatting was half of an NCCL launch's garbage.
func pcEntry(pc uint64) fileLine {
	if pc == 0 {
		return fileLine{}
	}
	if !pcLines.loaded {
		pcLines.loaded = true
		pcLines.cache = map[uint64]fileLine{}
		pcLines.d, _ = lineDWARF("/proc/self/exe", false) // nil: no line table
	}
	if pc <= pcLines.bias {
		return fileLine{} // below the seed form: the server's own code
	}
	pc -= pcLines.bias
	if s, ok := pcLines.cache[pc]; ok {
		return s
	}
	var s fileLine
	if d := pcLines.d; d != nil {
		at := pc - 1 // the call instruction, not the one after it
		if cu, err := d.Reader().SeekPC(at); err == nil {
			s = lineAt(unitRows(d, cu), at)
			s.file = unitPath(cu, s.file)
		}
	}
	if s.file != "" {
		s.show = s.file + ":" + strconv.Itoa(s.line)
	}
	pcLines.cache[pc] = s
	return s
}

// unitPath is a file name of unit cu's line table as a path: DWARF 5
// directories are relative to the unit's compilation directory, which
// debug/dwarf joins only for DWARF 4. A header found through a relative
// -I was named relative to the run's directory, so run elsewhere its
// loops were unknown and the lanes' order, and the digest, changed.
func unitPath(cu *dwarf.Entry, file string) string {
	if dir, _ := cu.Val(dwarf.AttrCompDir).(string); file != "" && dir != "" && !filepath.IsAbs(file) {
		return filepath.Join(dir, file)
	}
	return file
}

type fileLine struct {
	file string
	line int
	show string // file:line, "" where the file is unknown (set by pcEntry)
}

// lineAt scans a unit's line table for the row that covers pc: the last
// row at or below pc whose sequence goes on past it (LineReader.SeekPC
// misses pcs in the units GCC splits into several sequences, hot and
// cold).
func lineAt(rows []lineRow, pc uint64) fileLine {
	var prev lineRow
	have := false
	for _, e := range rows {
		if have && prev.addr <= pc && pc < e.addr && prev.hasFile && prev.line > 0 {
			return fileLine{file: prev.file, line: prev.line}
		}
		prev, have = e, !e.end
	}
	return fileLine{}
}

// where names a pc for a report: the executable's file:line when
// addr2line finds it, else the address.
func where(pc uint64) string { return fmt.Sprintf("%#x", pc) }

// pcCallerLine is the line of the program's own code that pc runs in:
// where pc is code inlined from a header (std::mutex::lock's
// pthread_mutex_lock call, std::atomic's load, a lambda inlined into
// std::thread's start), the innermost of its inlined calls
// (DW_AT_call_file, DW_AT_call_line) made from a file of the program's,
// not the C++ library's or emud's own headers; else pcLine's. For
// reports only: it walks the unit's entries.
func pcCallerLine(pc uint64) string {
	own := pcEntry(pc)
	if pcLines.d == nil || pc <= pcLines.bias || own.show == "" || !systemFile(own.file) {
		return own.show
	}
	d, at := pcLines.d, pc-pcLines.bias-1
	r := d.Reader()
	cu, err := r.SeekPC(at)
	if err != nil || !cu.Children {
		return own.show
	}
	lr, err := d.LineReader(cu)
	if err != nil || lr == nil {
		return own.show
	}
	files := lr.Files()
	covers := func(e *dwarf.Entry) bool {
		rs, err := d.Ranges(e)
		if err != nil {
			return false
		}
		for _, rg := range rs {
			if rg[0] <= at && at < rg[1] {
				return true
			}
		}
		return false
	}
	best := own.show
	for {
		e, err := r.Next()
		if err != nil || e == nil {
			break
		}
		if e.Tag == 0 {
			continue // the end of some entry's children
		}
		switch e.Tag {
		case dwarf.TagInlinedSubroutine:
			if !covers(e) {
				break
			}
			// A call on pc's chain, outermost first: the innermost made
			// from the program's own file wins.
			idx, _ := e.Val(dwarf.AttrCallFile).(int64)
			line, _ := e.Val(dwarf.AttrCallLine).(int64)
			if idx >= 0 && int(idx) < len(files) && files[idx] != nil && line > 0 { // DWARF 4 has no file 0: nil
				if file := unitPath(cu, files[idx].Name); !systemFile(file) {
					best = file + ":" + strconv.Itoa(int(line))
				}
			}
			continue
		case dwarf.TagSubprogram, dwarf.TagLexDwarfBlock:
			if covers(e) {
				continue // into its children
			}
		case dwarf.TagNamespace, dwarf.TagClassType, dwarf.TagStructType:
			continue // functions may be defined inside
		}
		if e.Children {
			r.SkipChildren()
		}
	}
	return best
}

// systemFile: a file of the C or C++ library's headers, or emud's own,
// never the line a report should name for a program's statement.
func systemFile(f string) bool {
	return strings.HasPrefix(f, "/usr/include/") || strings.HasPrefix(f, "/usr/lib/") ||
		strings.HasPrefix(f, "/usr/local/include/") || emudOwnFile(f)
}
