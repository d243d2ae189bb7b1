package main

/*
#include <errno.h>
*/
import "C"

import (
	"fmt"
	"math"

	"github.com/emud-dev/emud/sim"
)

// threadSleepCall is EMUD_H_THREAD_SLEEP (psleep.c): the host thread
// sleeps a[0] ns of virtual time, giving its turn up meanwhile; a[1] says
// why (a sleep call, a yield, a poll of its own code), for hang reports.
func threadSleepCall(h *host, act *sim.Actor, a []uint64, bad func(string, int, error) int) int {
	var why string
	switch a[1] {
	case 1:
		why = "a sleep"
	case 2:
		why = "sched_yield (1 µs of virtual time)"
	case 3:
		why = "a poll of an atomic or volatile word in its own code (1 µs of virtual time between runs of loads)"
	default:
		return bad("sleep", C.EINVAL, fmt.Errorf("unknown sleep kind %d (headers and library out of step?)", a[1]))
	}
	ns := a[0]
	if ns > math.MaxInt64/uint64(sim.Nanosecond) {
		ns = math.MaxInt64 / uint64(sim.Nanosecond)
	}
	// Built only if a report asks: a poll sleeps a microsecond at a time.
	act.SetLabelFunc(func() string { return h.name + ": " + why })
	act.Sleep(sim.Time(ns) * sim.Nanosecond)
	act.SetLabel("")
	return 0
}
