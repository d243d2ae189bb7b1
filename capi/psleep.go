package main

/*
#include <errno.h>
*/
import "C"

import (
	"fmt"
	"math"
	"strings"

	"github.com/emud-dev/emud/sim"
)

// threadSleepCall is EMUD_H_THREAD_SLEEP (psleep.c): the host thread
// sleeps a[0] ns of virtual time, giving its turn up meanwhile; a[1] says
// why (a sleep call, a yield, a poll of its own code, a retry of a lock
// or once: psync.c) and a[2] is a poll's or retry's site (a pc), for hang
// reports.
func threadSleepCall(h *host, act *sim.Actor, a []uint64, bad func(string, int, error) int) int {
	var why string
	switch a[1] {
	case 1:
		why = "a sleep"
	case 2:
		why = "sched_yield (1 µs of virtual time)"
	case 3:
		why = "a poll in its own code%s: a loop of atomic operations or locks that sees the same values each time (1 µs of virtual time between runs)"
	case 4:
		why = "a retry of pthread_spin_lock, or of a pthread_once another thread runs%s (1 µs of virtual time between tries)"
	default:
		return bad("sleep", C.EINVAL, fmt.Errorf("unknown sleep kind %d (headers and library out of step?)", a[1]))
	}
	ns := a[0]
	if ns > math.MaxInt64/uint64(sim.Nanosecond) {
		ns = math.MaxInt64 / uint64(sim.Nanosecond)
	}
	// Built only if a report asks: a poll sleeps a microsecond at a time.
	pc := a[2]
	act.SetLabelFunc(func() string {
		if !strings.Contains(why, "%s") {
			return h.name + ": " + why
		}
		at := ""
		if line := pcCallerLine(pc); pc != 0 && line != "" {
			at = " at " + line
		}
		return h.name + ": " + fmt.Sprintf(why, at)
	})
	act.Sleep(sim.Time(ns) * sim.Nanosecond)
	act.SetLabel("")
	return 0
}
