package main

/*
#include "lane.h"
*/
import "C"

import (
	"fmt"
	"os"
	"sync/atomic"
	"time"

	"github.com/emud-dev/emud/sim"
)

// A thread that holds the turn runs its own code: a lane between two
// device calls, a host thread between two emud calls. Nothing else runs
// until it calls into emud again, and virtual time stands still. A loop
// that polls a flag with an atomic load calls in (a SPIN), so it advances
// virtual time; one on a plain load never does (the compiler may keep the
// value in a register, so the loop cannot see the flag change even
// natively), and would freeze the process. The spin watch reports it
// instead: a thread that has not called in for EMUD_SPIN_LIMIT of wall
// time (10s; "0" turns the watch off) ends the run as a hang (exit 2),
// naming the thread and its last call.
//
// The marks are atomics because the watch reads them from its own
// goroutine; the thread that sets one has just left the simulation for
// its own code, so the simulation is still while the watch reads it.
var spinWatch spinMarks

type spinMarks struct {
	seq  atomic.Uint64        // bumped each time a thread leaves for its own code
	lane atomic.Pointer[lane] // the lane running its code, or nil
	host atomic.Pointer[host] // the host thread running its code, or nil
}

// defaultSpinLimit is EMUD_SPIN_LIMIT's default: far past any lane's or
// host thread's honest work between two calls in a test program.
const defaultSpinLimit = 10 * time.Second

// spinLimit reads EMUD_SPIN_LIMIT (a Go duration; 0 turns the watch off).
func spinLimit() (time.Duration, error) {
	v := os.Getenv("EMUD_SPIN_LIMIT")
	if v == "" {
		return defaultSpinLimit, nil
	}
	if v == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("EMUD_SPIN_LIMIT=%q: want a duration such as 10s, or 0 for no limit", v)
	}
	return d, nil
}

// laneRuns marks ln as running its own code (until laneStops).
func laneRuns(ln *lane) {
	spinWatch.seq.Add(1)
	spinWatch.lane.Store(ln)
}

func laneStops() { spinWatch.lane.Store(nil) }

// hostRuns marks h as running its own code, until hostStops, since its
// call at file:line returned (file nil: since what name says).
func hostRuns(h *host, file *C.char, name string, line int) {
	h.lastFile, h.lastName, h.lastLine = file, name, line
	spinWatch.seq.Add(1)
	spinWatch.host.Store(h)
}

func hostStops() { spinWatch.host.Store(nil) }

// watchSpins checks every limit/8 that some thread called in since the
// last check; one that did not for limit ends the run.
func watchSpins(limit time.Duration, stop <-chan struct{}) {
	every := max(limit/8, time.Millisecond)
	tick := time.NewTicker(every)
	defer tick.Stop()
	var last uint64
	var held time.Duration
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		seq, ln, h := spinWatch.seq.Load(), spinWatch.lane.Load(), spinWatch.host.Load()
		if (ln == nil && h == nil) || seq != last {
			last, held = seq, 0
			continue
		}
		if held += every; held >= limit {
			fail(frozen(ln, h, limit))
		}
	}
}

// frozen is the hang report of the thread that held the turn past limit.
func frozen(ln *lane, h *host, limit time.Duration) *sim.HangError {
	if ln != nil {
		name := fmt.Sprintf("kernel %q GPU %d block %d wave %d lane %d", ln.g.name, ln.t.GPU(), ln.t.BlockIdx(), ln.t.ThreadIdx()/ln.t.WarpSize(), ln.t.Lane())
		since := "the kernel started"
		if ln.l.file != nil {
			since = "its device call at " + ln.site().String() + " returned"
		}
		return rt.s.FrozenHang(sim.Waiter{Kind: "spinner", Name: name, State: "running its own code", Since: rt.s.Now(),
			WaitsFor: fmt.Sprintf("nothing: no device call for %v of wall time since %s%s", limit, since, inProcess(int(C.emud_remote_pid(ln.l)), "its next device call"))},
			sim.Because(fmt.Sprintf("%s runs its own code and never calls into emud, so virtual time stands still: a loop on a plain load "+
				"(which the compiler may keep in a register, so the loop never sees the flag change) or work longer than EMUD_SPIN_LIMIT (%v). "+
				"Poll a flag with an atomic load (__hip_atomic_load, __atomic_load_n, atomicAdd(p, 0)) or wait with ccoSdma::waitSignal: "+
				"both advance virtual time", name, limit)))
	}
	rt.mu.Lock()
	pid := procs.pids[h.id]
	rt.mu.Unlock()
	return rt.s.FrozenHang(sim.Waiter{Kind: "spinner", Name: h.name, State: "running its own code", Since: rt.s.Now(),
		WaitsFor: fmt.Sprintf("nothing: no emud call for %v of wall time since %s%s", limit, h.lastCallText(), inProcess(pid, "its next call"))},
		sim.Because(fmt.Sprintf("emud runs host threads one at a time, in turns, and %s holds its turn without calling into emud, so no other "+
			"host thread or lane runs: a wait in its own code for what another thread does (a flag polled with plain loads, a lock of its own making) "+
			"never ends, though it would natively, or it worked longer than EMUD_SPIN_LIMIT (%v). Wait with an emud call instead (pthread_join, "+
			"a pthread barrier, mutex or condition variable, hipStreamSynchronize, hipEventSynchronize, ccoBarrierAll)", h.name, limit)))
}

// lastCallText says when the host thread last left emud.
func (h *host) lastCallText() string {
	if h.lastFile != nil {
		return fmt.Sprintf("its call at %s:%d returned", C.GoString(h.lastFile), h.lastLine)
	}
	return h.lastName
}

// inProcess says, for a thread or lane that runs in rank process pid
// (0: in this one), that the coordinator waits on that process's socket
// for what.
func inProcess(pid int, what string) string {
	if pid == 0 {
		return ""
	}
	return fmt.Sprintf(" (it runs in rank process %d: the coordinator waits on its socket for %s)", pid, what)
}
