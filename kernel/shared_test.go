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
