package main

/*
#include "lane.h"
*/
import "C"

import (
	"fmt"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// host is one thread of the C++ program as the emulation sees it: a sim
// actor that runs the thread's calls. While the actor runs, the thread
// runs; when the thread makes a call, the actor carries it out (blocking
// in virtual time if it must) and the thread waits. So host threads take
// turns the simulator chooses, the same on every run, and the code
// between two calls takes no virtual time.
type host struct {
	id     int
	name   string
	req    chan func(*sim.Actor) // nil: the thread ended
	ack    chan struct{}
	dev    int
	exited bool           // the thread returned (set by its actor)
	wl     *sim.WatchList // joiners wait here
	gone   chan struct{}  // closed when the actor has ended
	actor  *sim.Actor
	end    race.Sync // released when the thread returns; pthread_join acquires it
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
// the creating host (-1 for main).
func newHost(parent int) *host {
	rt.mu.Lock()
	h := &host{id: len(rt.hosts), req: make(chan func(*sim.Actor)), ack: make(chan struct{}), gone: make(chan struct{})}
	rt.hosts = append(rt.hosts, h)
	rt.mu.Unlock()
	h.name = fmt.Sprintf("host thread %d", h.id)
	if h.id == 0 {
		h.name = "host main thread"
	}
	if parent >= 0 {
		h.dev = hostByID(parent).dev // a new thread starts on its creator's device... as HIP: device 0
		h.dev = 0
	}
	h.wl = rt.s.NewWatchList(h.name)
	h.actor = rt.s.Spawn(h.name, h.body)
	if d := rt.s.Race(); d != nil && parent >= 0 {
		// The new thread is ordered after what its creator did so far.
		d.Fork(hostByID(parent).actor.RaceThread(), h.actor.RaceThread())
	}
	return h
}

func (h *host) body(a *sim.Actor) {
	for f := range h.req {
		if f == nil {
			if t := a.RaceThread(); t != nil {
				t.Release(&h.end)
			}
			h.exited = true
			h.wl.Notify(0, 1)
			close(h.gone)
			return
		}
		f(a)
		h.ack <- struct{}{}
	}
}

// do runs f on the thread's actor and waits for it.
func (h *host) do(f func(*sim.Actor)) {
	h.req <- f
	<-h.ack
}

// exit ends the thread's actor.
func (h *host) exit() {
	h.req <- nil
	<-h.gone
}

//export emudGoHostSpawn
func emudGoHostSpawn(parent C.int) C.int {
	p := hostByID(int(parent))
	var id int
	p.do(func(*sim.Actor) { id = newHost(int(parent)).id })
	return C.int(id)
}

//export emudGoHostAttach
func emudGoHostAttach(id C.int) {
	// The thread's code starts when its actor first runs.
	hostByID(int(id)).do(func(*sim.Actor) {})
}

//export emudGoHostExit
func emudGoHostExit(id C.int) { hostByID(int(id)).exit() }

//export emudGoHostJoin
func emudGoHostJoin(self, child C.int) {
	c := hostByID(int(child))
	hostByID(int(self)).do(func(a *sim.Actor) {
		a.Await(sim.Wait{List: c.wl, Lo: 0, Hi: 1, Pred: func() bool { return c.exited },
			Text: func() string { return fmt.Sprintf("pthread_join of %s, which has not returned", c.name) }})
		if t := a.RaceThread(); t != nil {
			t.Acquire(&c.end)
		}
	})
}
