package kernel

import (
	"reflect"
	"runtime"
	"testing"

	"github.com/emud-dev/emud/internal/racebuild"
	"github.com/emud-dev/emud/internal/testmain"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Under -race a run's idle lane coroutines outlive it for the next run
// (sharedWorkers), so a test binary of thousands of runs does not leave a
// goroutine's race-detector history behind per lane per run (it grew to
// 8 GB): the second run of the same shape starts no goroutine. Without
// -race every run ends its own (TestWorkersReused). testmain's leak check
// ignores the idle ones by worker.loop's name.
func TestWorkersSharedAcrossRunsUnderRace(t *testing.T) {
	name := runtime.FuncForPC(reflect.ValueOf((*worker).loop).Pointer()).Name()
	assert.Contains(t, testmain.IdleFuncs, name, "testmain must name the function idle workers wait in")
	inside := func() {
		s := sim.New(sim.Config{Seed: 3})
		k, err := Launch(s, Config{Grid: 2, Block: 64}, func(th *Thread) { th.SyncThreads() })
		require.NoError(t, err)
		require.NoError(t, s.Run())
		require.NoError(t, k.Err())
	}
	inside()
	before := workersStarted.Load()
	inside()
	started := workersStarted.Load() - before
	if !racebuild.Enabled {
		assert.Nil(t, sharedWorkers.get(), "without -race no worker outlives its run")
		assert.EqualValues(t, 64, started, "without -race the second run starts its own workers")
		return
	}
	assert.Zero(t, started, "the second run takes the first run's idle workers and starts none")
}

// The runs that borrow one sim.Scratch (an explore worker's seeds) share
// its idle lane workers: the second and third start none, each run's
// digest is a fresh run's, and Close ends the workers.
func TestWorkersKeptInScratch(t *testing.T) {
	run := func(sc *sim.Scratch) string {
		s := sim.New(sim.Config{Seed: 3, Scratch: sc})
		k, err := Launch(s, Config{Grid: 2, Block: 64}, func(th *Thread) { th.SyncThreads() })
		require.NoError(t, err)
		require.NoError(t, s.Run())
		require.NoError(t, k.Err())
		return s.Digest()
	}
	fresh := run(nil)
	sc := sim.NewScratch()
	var started []int64
	for range 3 {
		before := workersStarted.Load()
		assert.Equal(t, fresh, run(sc))
		started = append(started, workersStarted.Load()-before)
	}
	assert.Zero(t, started[1], "the second run takes the first run's idle workers")
	assert.Zero(t, started[2])
	p := sc.Local(poolKey{}, func() any { return &workerPool{} }).(*workerPool)
	assert.Len(t, p.idle, 64, "kept idle between runs")
	sc.Close()
	assert.Nil(t, p.idle, "Close ended them")
}
