package main

/*
#include "lane.h"
*/
import "C"

import (
	"fmt"
	"unsafe"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// host is one thread of the C++ program as the emulation sees it: a sim
// actor whose turn the thread itself holds. While the actor runs, the
// thread runs; a call the thread makes is carried out right there, on the
// thread (its cgo callback), blocking in virtual time if it must (the
// actor's Sleep and Await hand the turn to whatever runs next and wait
// for it to come back), and when it returns the thread goes on. So host
// threads take turns the simulator chooses, the same on every run, the
// code between two calls takes no virtual time, and a call that does not
// block costs no switch between OS threads (a host call once went to a
// goroutine of the actor's and back: two switches, most of a C++
// program's wall time). The actor's own goroutine only starts the turn
// (on the thread's turnstile, ts) and takes the last one back when the
// thread returns (back); the
// actor is foreign (sim.Actor.SetForeign) because its turns are taken on
// a C thread.
type host struct {
	id     int
	name   string
	back   chan struct{} // the thread gives its last turn back when it returns
	dev    int
	exited bool           // the thread returned
	wl     *sim.WatchList // joiners wait here
	actor  *sim.Actor
	end    race.Sync // released when the thread returns; pthread_join acquires it
	// attached: the thread took its first turn (begin); touched only by
	// the thread itself. late: the thread was running before its host
	// was made (the main thread, threads started before the first HIP
	// call), so its first turn waits for its first call.
	attached, late bool
	// when the thread last left emud for its own code (the spin watch
	// says it): a HIP/cco call's file and line, or words
	lastFile *C.char
	lastLine int
	lastName string
	loop     callLoop // the call watch (callwatch.go)
	// onExit runs in the thread's last turn, as it returns: the thread
	// of a host function (hostfunc.go) completes its stream work there.
	onExit []func(*sim.Actor)
	ts     turnstile
	// perThread is the thread's per-thread default stream of each device
	// (hipStreamPerThread, cudaStreamPerThread), made on first use.
	perThread map[int]*stream
}

// turnstile is a host thread's sim.Turnstile: a futex word (turn.c) the
// thread waits on for its turn, in a cgo call.
type turnstile struct{ word uint32 }

func (t *turnstile) ptr() *C.uint32_t { return (*C.uint32_t)(unsafe.Pointer(&t.word)) }

func (t *turnstile) Wake() { C.emud_turn_wake(t.ptr()) }

func (t *turnstile) Pass(to sim.Turnstile) {
	if o, ok := to.(*turnstile); ok {
		C.emud_turn_pass(o.ptr(), t.ptr())
		return
	}
	to.Wake()
	C.emud_turn_wait(t.ptr())
}

func hostByID(id int) *host {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if id < 0 || id >= len(rt.hosts) {
		return nil
	}
	return rt.hosts[id]
}

// newHost makes host thread len(hosts) and spawns its actor; parent is
// the creating host (-1 for main). The thread takes its first turn with
// begin.
func newHost(parent int) *host {
	rt.mu.Lock()
	h := &host{id: len(rt.hosts), back: make(chan struct{})}
	rt.hosts = append(rt.hosts, h)
	rt.mu.Unlock()
	h.name = fmt.Sprintf("host thread %d", h.id)
	if h.id == 0 {
		h.name = "host main thread"
	}
	// A new thread starts on device 0, as HIP's do, whatever its
	// creator's current device.
	h.wl = rt.s.NewWatchList(h.name)
	h.actor = rt.s.Spawn(h.name, h.body)
	h.actor.SetForeign()
	h.actor.SetTurnstile(&h.ts)
	if d := rt.s.Race(); d != nil && parent >= 0 {
		// The new thread is ordered after what its creator did so far.
		d.Fork(hostByID(parent).actor.RaceThread(), h.actor.RaceThread())
	}
	return h
}

// body is the actor's function: it hands its first turn to the thread
// and ends when the thread gives the last one back.
func (h *host) body(*sim.Actor) {
	if h.late {
		// Its thread runs its own code until its first call: the spin
		// watch names it if that never comes.
		hostRuns(h, nil, "it started (before the program's first HIP/cco call)", 0)
	}
	h.actor.EnterThread()
	<-h.back
}

// begin waits for the thread's first turn: called on the thread before
// its first call. The thread waits on its turnstile, so that a turn
// passed to it from another host thread (sim.Actor.SetTurnstile) can
// reach it there from its first block on.
func (h *host) begin() { C.emud_turn_wait(h.ts.ptr()) }

// attach is begin for a thread's first call, once: the main thread and
// the threads adopted at start call in whenever they first do.
func (h *host) attach() {
	if !h.attached {
		h.attached = true
		h.begin()
		if h.id == 0 {
			// The main thread's first call, in its turn: the threads it
			// started before it become host threads now.
			h.do(func(*sim.Actor) { adoptEarly() })
		}
	}
}

// do runs f on the calling thread, which holds the actor's turn.
func (h *host) do(f func(*sim.Actor)) { f(h.actor) }

// exit ends the thread's actor: called on the thread, in its turn, when
// it returns. After it the thread must not touch the emulation.
func (h *host) exit() {
	if t := h.actor.RaceThread(); t != nil {
		t.Release(&h.end)
	}
	for _, f := range h.onExit {
		f(h.actor)
	}
	h.onExit = nil
	h.exited = true
	h.wl.Notify(0, 1)
	h.actor.LeaveThread(func() { h.back <- struct{}{} })
}

//export emudGoHostSpawn
func emudGoHostSpawn(parent C.int) C.int {
	p := hostByID(int(parent))
	p.attach()
	p.flushStores()
	hostStops()
	var id int
	p.do(func(*sim.Actor) { id = newHost(int(parent)).id })
	hostRuns(p, nil, "its pthread_create returned", 0)
	return C.int(id)
}

//export emudGoHostAttach
func emudGoHostAttach(id C.int) {
	// The thread's code starts when its actor first runs.
	h := hostByID(int(id))
	h.attach()
	hostRuns(h, nil, "it started", 0)
}

//export emudGoHostExit
func emudGoHostExit(id C.int) {
	h := hostByID(int(id))
	h.flushStores()
	hostStops()
	h.exit()
}

//export emudGoHostStores
func emudGoHostStores(id C.int) {
	if h := hostByID(int(id)); h != nil {
		h.attach()
		h.flushStores()
	}
}

// flushStores announces the thread's logged plain stores to device
// memory (lane.c's host log, from an instrumented program) as writes of
// the thread, at each store's line: the words hang reports watch record
// who wrote them. Called on the thread, in its turn.
func (h *host) flushStores() {
	h.flushAtomics()
	rt.announced = false // its own code ran: stores of uninstrumented code (a library's) are not logged
	lg := C.emud_host_stores()
	n := int(lg.n)
	if n == 0 {
		return
	}
	lg.n = 0
	wl := rt.mem.Watch()
	prev := rt.s.Writer()
	defer rt.s.SetWriter(prev)
	for i := range n {
		at := pcLine(uint64(lg.pc[i]))
		if at == "" {
			at = "its own code after " + h.lastCallText()
		}
		rt.s.SetWriter(sim.WriterFunc(func() string { return h.name + "'s store at " + at }))
		wl.Notify(uint64(lg.lo[i]), uint64(lg.hi[i]))
	}
}

//export emudGoHostJoin
func emudGoHostJoin(self, child C.int) {
	c, h := hostByID(int(child)), hostByID(int(self))
	h.attach()
	h.flushStores()
	hostStops()
	defer hostRuns(h, nil, "its pthread_join returned", 0)
	h.do(func(a *sim.Actor) {
		a.Await(sim.Wait{List: c.wl, Lo: 0, Hi: 1, Pred: func() bool { return c.exited },
			Text: func() string { return fmt.Sprintf("pthread_join of %s, which has not returned", c.name) }})
		if t := a.RaceThread(); t != nil {
			t.Acquire(&c.end)
		}
	})
}

// hostAtomicsAll stands for every word once some host thread's log of
// atomic words ran over (lane.c keeps 64 a call): that thread releases
// it, and from then on every thread's acquires take it too.
var (
	hostAtomicsAll  race.Sync
	hostAtomicsOver bool
)

// flushAtomics takes the words the thread's instrumented code loaded
// (acquired) and stored or updated (released) with atomics or volatile
// accesses since its last emud call (lane.c host_atomic) to the race
// detector: the acquires, then the releases, each on the word's
// synchronisation (the one lanes' atomics use), so a std::atomic flag,
// a std::promise or a volatile word between host threads, or between a
// lane and a host thread, orders what each does around it. A release
// taken at the next call orders what the thread did up to that call,
// not only up to its store: an over-approximation that can hide a race,
// never invent one. Called on the thread, in its turn.
func (h *host) flushAtomics() {
	lg := C.emud_host_atomics()
	n, over := int(lg.n), lg.over != 0
	if n == 0 && !over {
		return
	}
	lg.n, lg.over = 0, 0
	d := rt.s.Race()
	t := h.actor.RaceThread()
	if d == nil || t == nil {
		return
	}
	sp := d.Space(rt.mem, "LSA memory")
	hostAtomicsOver = hostAtomicsOver || over
	for i := range n {
		t.Acquire(d.AddrSync(sp, uint64(lg.addr[i])))
	}
	if hostAtomicsOver {
		t.Acquire(&hostAtomicsAll)
	}
	for i := range n {
		if lg.write[i] != 0 {
			t.Release(d.AddrSync(sp, uint64(lg.addr[i])))
		}
	}
	if over {
		t.Release(&hostAtomicsAll)
	}
}
