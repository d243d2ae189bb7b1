package sim

import (
	"reflect"
	"runtime"
	"testing"
	"time"

	"github.com/emud-dev/emud/internal/racebuild"
	"github.com/emud-dev/emud/internal/testmain"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Under -race an actor whose function returned leaves its goroutine for a
// later actor (goStart), so a test binary of thousands of runs does not
// leave a goroutine's race-detector history behind per actor per run: the
// second run of the same shape starts no goroutine. testmain's leak check
// ignores the idle ones by pooledGoroutine's name.
func TestActorGoroutinesReusedUnderRace(t *testing.T) {
	name := runtime.FuncForPC(reflect.ValueOf(pooledGoroutine).Pointer()).Name()
	assert.Contains(t, testmain.IdleFuncs, name, "testmain must name the function idle goroutines wait in")
	inside := func() int {
		s := New(Config{Seed: 2})
		n := 0
		for i := range 8 {
			s.Spawn("a", func(a *Actor) {
				a.Sleep(Time(10 - i))
				if i == 0 {
					n = runtime.NumGoroutine()
				}
			})
		}
		require.NoError(t, s.Run())
		return n
	}
	inside()
	if racebuild.Enabled {
		// An actor's goroutine shelves itself just after handing the
		// token back, so Run can return a moment before it is idle.
		require.Eventually(t, func() bool {
			goPool.Lock()
			defer goPool.Unlock()
			return len(goPool.idle) >= 8
		}, 5*time.Second, time.Millisecond)
	}
	after := settledGoroutines()
	second := inside()
	if !racebuild.Enabled {
		assert.Greater(t, second, after, "without -race the second run starts its own goroutines")
		return
	}
	assert.Equal(t, after, second, "the second run takes the first run's idle goroutines and starts none")
}

// settledGoroutines is runtime.NumGoroutine once it has held still for a
// few milliseconds: a goroutine on its way out (require.Eventually's
// checker, a finished test's helper) is not counted as one the next run
// could have reused.
func settledGoroutines() int {
	n, same := runtime.NumGoroutine(), 0
	for i := 0; i < 1000 && same < 5; i++ {
		time.Sleep(time.Millisecond)
		if m := runtime.NumGoroutine(); m == n {
			same++
		} else {
			n, same = m, 0
		}
	}
	return n
}
