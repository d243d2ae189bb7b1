package main

/*
#include <errno.h>
*/
import "C"

import (
	"fmt"

	"github.com/emud-dev/emud/sim"
)

// threadBarrier is a pthread barrier between host threads (pbarrier.c):
// its waits are the simulator's, so the threads that have not arrived
// get their turns, a barrier some thread never reaches is a hang report
// naming it, and for the race detector each round is a synchronisation
// every arrival releases and every leaver acquires.
type threadBarrier struct {
	hostBarrier
	count int
}

var threadBarriers = map[uint64]*threadBarrier{} // touched only by the running actor

// threadBarrierCall is EMUD_H_THREAD_BARRIER: a[0] the barrier, a[1] its
// count (from its pthread_barrier_init; 0 unknown), a[2] 1 wait, 2
// destroy; a wait sets a[3] to 1 in the one thread pthread_barrier_wait
// tells it is the serial one.
func threadBarrierCall(act *sim.Actor, a []uint64, bad func(string, int, error) int) int {
	switch a[2] {
	case 1:
		b := threadBarriers[a[0]]
		if b == nil {
			if a[1] == 0 {
				return bad("pthread_barrier_wait", C.EINVAL, fmt.Errorf("barrier %#x: no pthread_barrier_init of it is known (more than 256 barriers live?)", a[0]))
			}
			b = &threadBarrier{count: int(a[1]), hostBarrier: hostBarrier{wl: rt.s.NewWatchList(fmt.Sprintf("pthread barrier %#x", a[0]))}}
			threadBarriers[a[0]] = b
		}
		a[3] = 0
		if b.arrive(act, b.count, func() string {
			return fmt.Sprintf("pthread_barrier_wait on %#x: %d of %d threads arrived", a[0], b.arrived, b.count)
		}) {
			a[3] = 1
		}
	case 2:
		delete(threadBarriers, a[0])
	default:
		return bad("pthread barrier", C.EINVAL, fmt.Errorf("unknown barrier call %d (headers and library out of step?)", a[2]))
	}
	return 0
}
