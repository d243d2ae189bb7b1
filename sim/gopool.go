package sim

import (
	"sync"

	"github.com/emud-dev/emud/internal/racebuild"
)

// Under the race detector an ended goroutine keeps its share of the
// detector's history for the life of the process (racebuild's doc), so a
// test binary that runs thousands of short runs, each starting its actors'
// goroutines afresh, grew by gigabytes. There, an actor whose function
// returned leaves its goroutine idle for a later actor, of this run or
// another, instead of ending it; at most maxIdleGoroutines wait. Without
// -race goroutines are cheap and every run ends its own (goleak checks
// it). An actor killed at the end of a run exits through runtime.Goexit
// and takes its goroutine with it either way.
const maxIdleGoroutines = 1024

var goPool struct {
	sync.Mutex
	idle []chan func()
}

// goStart runs f on a goroutine of its own: a new one, or under -race an
// idle one an ended actor left.
func goStart(f func()) {
	if !racebuild.Enabled {
		go f()
		return
	}
	goPool.Lock()
	if n := len(goPool.idle); n > 0 {
		c := goPool.idle[n-1]
		goPool.idle = goPool.idle[:n-1]
		goPool.Unlock()
		c <- f
		return
	}
	goPool.Unlock()
	go pooledGoroutine(make(chan func()), f)
}

// pooledGoroutine runs f, then waits for the next function goStart hands
// it, until the pool is full.
func pooledGoroutine(c chan func(), f func()) {
	for {
		f()
		goPool.Lock()
		if len(goPool.idle) >= maxIdleGoroutines {
			goPool.Unlock()
			return
		}
		goPool.idle = append(goPool.idle, c)
		goPool.Unlock()
		f = <-c
	}
}
