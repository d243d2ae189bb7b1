package main

/*
#include <errno.h>
#include "lane.h"
*/
import "C"

import (
	"fmt"
	"math"

	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
)

// threadSync is a pthread mutex or condition variable that host threads
// wait for in virtual time (pmutex.c): a wait ends at the next wake after
// it began (an unlock of the mutex, a signal or broadcast of the
// condition), and for the race detector each wake and unlock releases
// sync, which each lock and each return from a wait acquires.
type threadSync struct {
	wl   *sim.WatchList
	gen  uint64 // bumped by each wake
	sync race.Sync
}

var threadSyncs = map[uint64]*threadSync{} // touched only by the running actor

func threadSyncOf(obj uint64, what string) *threadSync {
	s := threadSyncs[obj]
	if s == nil {
		s = &threadSync{wl: rt.s.NewWatchList(fmt.Sprintf("%s %#x", what, obj))}
		threadSyncs[obj] = s
	}
	return s
}

// The calls of EMUD_H_THREAD_SYNC (pmutex.c's).
const (
	syncMutexWait = 1 + iota
	syncCondWait
	syncWake
	syncRelease
	syncAcquire
	syncFutexWait
	syncObjWait
)

// What a syncObjWait waits for (psync.c's WAIT_*), in its hang report.
var objWaitText = map[uint64]string{
	1: "sem_wait on %#x: no sem_post",
	2: "pthread_rwlock_rdlock of %#x: held for writing, no unlock",
	3: "pthread_rwlock_wrlock of %#x: held, no unlock",
}

// threadSyncCall is EMUD_H_THREAD_SYNC: a[0] what, a[1] the object; a
// mutex wait's a[2] is the owner's thread id (a[4] = 1: lock it
// natively, its owner is not a host thread in a turn), a condition
// wait's and a futex wait's the timeout in ns (MaxUint64: none; a[4] =
// 1: timed out); an object wait's (psync.c: a semaphore, a read-write
// lock) also, with a[3] what it waits for and a[5] the ns it waited.
func threadSyncCall(h *host, act *sim.Actor, a []uint64, bad func(string, int, error) int) int {
	obj := a[1]
	a[4] = 0
	switch a[0] {
	case syncMutexWait:
		owner := int(C.emud_host_of_tid(C.int(a[2])))
		o := hostByID(owner)
		if o == nil || o == h || o.exited || freeState.open(owner) {
			a[4] = 1
			return 0
		}
		s := threadSyncOf(obj, "pthread mutex")
		g0 := s.gen
		act.Await(sim.Wait{List: s.wl, Lo: 0, Hi: 1, Pred: func() bool { return s.gen != g0 },
			Text: func() string { return fmt.Sprintf("pthread_mutex_lock of %#x, held by %s", obj, o.name) }})
		s.acquire(act)
	case syncCondWait, syncFutexWait, syncObjWait:
		what, text := "pthread condition variable", "pthread_cond_wait on %#x: no signal or broadcast"
		switch a[0] {
		case syncFutexWait:
			what, text = "futex word", "a futex wait on %#x (std::future, std::atomic::wait, std::latch ...): no wake"
		case syncObjWait:
			t, ok := objWaitText[a[3]]
			if !ok {
				return bad("semaphore or read-write lock", C.EINVAL, fmt.Errorf("unknown wait kind %d (headers and library out of step?)", a[3]))
			}
			what, text = "semaphore or read-write lock", t
		}
		t0 := act.Now()
		s := threadSyncOf(obj, what)
		g0 := s.gen
		w := sim.Wait{List: s.wl, Lo: 0, Hi: 1, Pred: func() bool { return s.gen != g0 },
			Text: func() string { return fmt.Sprintf(text, obj) }}
		if a[2] == math.MaxUint64 {
			act.Await(w)
		} else {
			ps := a[2]
			if ps > math.MaxInt64/1000 {
				ps = math.MaxInt64 / 1000
			}
			if !act.AwaitTimeout(w, sim.Time(ps*1000)) {
				a[4] = 1
			}
		}
		a[5] = uint64((act.Now() - t0) / sim.Nanosecond)
		s.acquire(act)
	case syncWake:
		s := threadSyncOf(obj, "pthread object")
		s.release(act)
		s.gen++
		s.wl.Notify(0, 1)
	case syncRelease:
		threadSyncOf(obj, "pthread mutex").release(act)
	case syncAcquire:
		threadSyncOf(obj, "pthread mutex").acquire(act)
	default:
		return bad("pthread mutex or condition", C.EINVAL, fmt.Errorf("unknown call %d (headers and library out of step?)", a[0]))
	}
	return 0
}

func (s *threadSync) release(act *sim.Actor) {
	if t := act.RaceThread(); t != nil {
		t.Release(&s.sync)
	}
}

func (s *threadSync) acquire(act *sim.Actor) {
	if t := act.RaceThread(); t != nil {
		t.Acquire(&s.sync)
	}
}
