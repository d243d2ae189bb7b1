package main

/*
#include "lane.h"
*/
import "C"

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// A free section is a blocking call outside emud that waits for other
// ranks (MPI_Barrier, MPI_Recv, MPI_Finalize ...; mpi.c): a host thread
// holds its turn between emud calls, so made in the turn such a call
// would keep the ranks it waits for from ever reaching theirs. In a free
// section the thread gives its turn up and makes the call at once, in
// real time, beside the emulation; its actor waits in virtual time until
// the run is quiescent (nothing else can run: every rank is blocked in
// emud or out in such a call), and only then do the sections come back,
// all together while the simulation stands still, in actor order. So
// where a section comes back in the run, and what ran before it, depends
// only on the run, not on how long the real call took: one seed, one
// digest. At a quiescent point the sections still out are waited for (in
// wall time, holding the simulation still) until all have returned; one
// that has not after EMUD_FREE_GRACE while others have is taken to wait
// for what a returned rank will do next (a receive posted before its
// sender's emud work), and the returned ones go on without it, with a
// warning that the run's order from there depends on wall time. None
// returned for EMUD_SPIN_LIMIT is a hang report naming each call.

// freeSec is a host thread's free section.
type freeSec struct {
	h        *host
	name     string         // the call that opened it
	cur      unsafe.Pointer // where the C side keeps the call the thread is in now (a const char*)
	since    sim.Time
	returned bool          // the real call returned (under freeState.mu)
	admitted bool          // a quiescent point let it back in (set in a turn)
	back     chan struct{} // the turn, from the actor's waiting goroutine to the thread
}

var freeState freeSections

type freeSections struct {
	mu      sync.Mutex
	out     []*freeSec       // sections not yet let back in, in the order they began
	byHost  map[int]*freeSec // the host thread's open section
	poke    chan struct{}    // a section returned
	wl      *sim.WatchList   // admitted sections' actors wait here
	gen     uint64           // bumped by each quiescent point's decision (in a turn)
	sync    race.Sync        // every section's begin releases it, every return acquires it
	warned  bool
	initted bool
}

// freeGrace reads EMUD_FREE_GRACE (a Go duration, default 2s).
func freeGrace() (time.Duration, error) {
	v := os.Getenv("EMUD_FREE_GRACE")
	if v == "" {
		return 2 * time.Second, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("EMUD_FREE_GRACE=%q: want a positive duration such as 2s", v)
	}
	return d, nil
}

func freeHost() *host {
	h := hostByID(int(C.emud_host_id()))
	if h == nil {
		fmt.Fprintln(os.Stderr, "emud: a blocking call outside emud (MPI) from a thread emud does not know")
		os.Exit(exitFailed)
	}
	return h
}

// emudGoFreeBegin opens the calling host thread's free section: called in
// its turn, before the real call.
//
//export emudGoFreeBegin
func emudGoFreeBegin(name *C.char, cur unsafe.Pointer) {
	h := freeHost()
	h.attach()
	h.flushStores()
	hostStops()
	f := &freeSec{h: h, name: C.GoString(name), cur: cur, since: rt.s.Now(), back: make(chan struct{})}
	if t := h.actor.RaceThread(); t != nil {
		// What the rank did before the call is ordered before what any
		// rank does after its own: an over-approximation of the MPI
		// call's edges (it can hide a race, never invent one).
		t.Release(&freeState.sync)
	}
	freeState.mu.Lock()
	if !freeState.initted {
		freeState.initted = true
		freeState.byHost = map[int]*freeSec{}
		freeState.poke = make(chan struct{}, 1)
		freeState.wl = rt.s.NewWatchList("free sections")
	}
	freeState.byHost[h.id] = f
	freeState.out = append(freeState.out, f)
	freeState.mu.Unlock()
}

// open says whether host thread id has a free section open: it runs its
// own code outside the turns.
func (fs *freeSections) open(id int) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.byHost[id] != nil
}

// emudGoFreeRelease gives the thread's turn up: its actor waits, on a
// goroutine of its own, for a quiescent point to let it back in. After
// it the thread must not touch the emulation until emudGoFreeEnd.
//
//export emudGoFreeRelease
func emudGoFreeRelease() {
	h := freeHost()
	freeState.mu.Lock()
	f := freeState.byHost[h.id]
	freeState.mu.Unlock()
	go f.wait()
}

// call names the call the thread is in now: the one that opened the
// section, or a later one made in it.
func (f *freeSec) call() string {
	if p := atomic.LoadPointer((*unsafe.Pointer)(f.cur)); p != nil {
		if now := C.GoString((*C.char)(p)); now != f.name {
			return fmt.Sprintf("%s (in the section its %s opened)", now, f.name)
		}
	}
	return f.name
}

// wait is the section's actor while the thread is out: it holds no turn
// until a quiescent point admits it, then hands the turn to the thread.
func (f *freeSec) wait() {
	a := f.h.actor
	text := func() string {
		return fmt.Sprintf("its %s to return: a call outside emud, since %v; the thread is back at its next emud call, "+
			"and let in when nothing in the emulation can run", f.call(), f.since)
	}
	for !f.admitted {
		gen := freeState.gen
		a.AwaitUnlessQuiescent(sim.Wait{List: freeState.wl, Lo: 0, Hi: 1, Pred: func() bool { return f.admitted }, Text: text})
		if !f.admitted && freeState.gen == gen && rt.s.LastRelease() == freeOut() {
			// The run is quiescent and this is the first section to run
			// since. Released with other actors (a lane's first spin
			// wait ends there too), the run may go on without any
			// section: wait for the next quiescent point instead.
			freeDecide()
		}
	}
	f.back <- struct{}{}
}

// freeOut is how many sections wait to be let in.
func freeOut() int {
	freeState.mu.Lock()
	defer freeState.mu.Unlock()
	return len(freeState.out)
}

// freeDecide lets the sections that returned back in, in the order they
// began; called in the turn of a section's actor at a quiescent point,
// with the simulation still while it waits in wall time.
func freeDecide() {
	grace, _ := freeGrace()
	limit, _ := spinLimit()
	start := time.Now()
	var back time.Time // when the first section was back
	for {
		freeState.mu.Lock()
		all, some := true, false
		for _, f := range freeState.out {
			all = all && f.returned
			some = some || f.returned
		}
		if some && back.IsZero() {
			back = time.Now()
		}
		var late []*freeSec
		if some && !all && time.Since(back) >= grace {
			for _, f := range freeState.out {
				if !f.returned {
					late = append(late, f)
				}
			}
		}
		freeState.mu.Unlock()
		if all || len(late) > 0 {
			if len(late) > 0 && !freeState.warned {
				freeState.warned = true
				fmt.Fprintf(os.Stderr, "emud: warning: at %v %s's %s had not returned %v (EMUD_FREE_GRACE) after another rank's call outside "+
					"emud was back, with nothing else in the run left to do: the returned ones go on without it, so from here the run's order depends on wall time "+
					"(a receive posted before its sender's emud work does this; the same seed may give another digest)\n",
					rt.s.Now(), late[0].h.name, late[0].call(), grace)
			}
			break
		}
		if !some && limit > 0 && time.Since(start) >= limit {
			fail(freeHang(limit))
			select {}
		}
		wait := grace - time.Since(back)
		if !some {
			wait = limit - time.Since(start)
			if limit == 0 {
				wait = time.Hour
			}
		}
		select {
		case <-freeState.poke:
		case <-time.After(max(wait, time.Millisecond)):
		}
	}
	freeState.gen++
	freeState.mu.Lock()
	keep := freeState.out[:0]
	for _, f := range freeState.out {
		if f.returned {
			f.admitted = true
		} else {
			keep = append(keep, f)
		}
	}
	freeState.out = keep
	freeState.mu.Unlock()
	freeState.wl.Notify(0, 1)
}

// freeHang is the report of sections none of which returned while
// nothing in the emulation could run.
func freeHang(limit time.Duration) *sim.HangError {
	freeState.mu.Lock()
	out := slices.Clone(freeState.out)
	freeState.mu.Unlock()
	var ws []sim.Waiter
	var names []string
	for _, f := range out {
		ws = append(ws, sim.Waiter{Kind: "rank", Name: f.h.name, State: "outside emud", Since: f.since,
			WaitsFor: fmt.Sprintf("its %s to return: not back for %v of wall time (EMUD_SPIN_LIMIT) while nothing in the emulation could run", f.call(), limit)})
		names = append(names, fmt.Sprintf("%s's %s", f.h.name, f.call()))
	}
	return rt.s.OutsideHang(ws, sim.Because(fmt.Sprintf("every rank is blocked in emud or out in a blocking call outside it (MPI), and "+
		"none of those calls returned (%s): MPI calls that do not match (a collective some rank never makes, a receive no rank "+
		"sends to), or a rank that waits in emud for what another does after its MPI call", strings.Join(names, ", "))))
}

// emudGoFreeEnd is the thread's return from its real call: it waits for
// a quiescent point to let it back in, and holds its turn again.
//
//export emudGoFreeEnd
func emudGoFreeEnd() {
	h := freeHost()
	freeState.mu.Lock()
	f := freeState.byHost[h.id]
	delete(freeState.byHost, h.id)
	f.returned = true
	freeState.mu.Unlock()
	select {
	case freeState.poke <- struct{}{}:
	default:
	}
	<-f.back
	if t := h.actor.RaceThread(); t != nil {
		t.Acquire(&freeState.sync)
	}
	hostRuns(h, nil, "its "+f.name+" (a call outside emud) returned", 0) // the emud call that ended the section runs next
}
