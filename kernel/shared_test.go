package kernel

import (
	"fmt"
	"reflect"
	"runtime"
	"slices"
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
	p := sim.WorkerLocal(sc, poolKey, func() *workerPool { return &workerPool{} })
	assert.Len(t, p.idle, 64, "kept idle between runs")
	sc.Close()
	assert.Nil(t, p.idle, "Close ended them")
}

// TestArgScratchKeptInArena: the waves of the runs that borrow one
// sim.Scratch take their calls' argument scratches from the launch
// arena, where ended waves left them (the wave's calls alternate two
// argument types: each keeps its own): every call sees its lanes'
// arguments, in every run, and the arena keeps at most one scratch per
// wave and type, the same ones run after run.
func TestArgScratchKeptInArena(t *testing.T) {
	ints := &Call[int]{Name: "ints", Run: func(g *Active, args []int) error {
		for i, th := range g.Lanes() {
			if args[i] != th.BlockIdx()*100+th.Lane() {
				return fmt.Errorf("lane %d got %d", th.Lane(), args[i])
			}
		}
		return nil
	}}
	strs := &Call[string]{Name: "strs", Run: func(g *Active, args []string) error {
		for i, th := range g.Lanes() {
			if args[i] != fmt.Sprint(th.Lane()) {
				return fmt.Errorf("lane %d got %q", th.Lane(), args[i])
			}
		}
		return nil
	}}
	sc := sim.NewScratch()
	defer sc.Close()
	var kept []any
	for run := range 3 {
		s := sim.New(sim.Config{Seed: uint64(run), Scratch: sc})
		_, err := Launch(s, Config{Grid: 2, Block: 8}, func(th *Thread) {
			for range 3 {
				Converge(th, ints, th.BlockIdx()*100+th.Lane())
				Converge(th, strs, fmt.Sprint(th.Lane()))
			}
		})
		require.NoError(t, err)
		require.NoError(t, s.Run(), "run %d", run)
		ar := sim.WorkerLocal(sc, arenaKey, func() *launchArena { return nil })
		assert.NotEmpty(t, ar.args)
		assert.LessOrEqual(t, len(ar.args), 4, "run %d: two waves, two types", run)
		if run > 0 {
			assert.ElementsMatch(t, kept, ar.args, "run %d reused the scratches", run)
		}
		kept = slices.Clone(ar.args)
	}
}

type countCode struct{ lanes map[int]bool }

func (c *countCode) Run(t *Thread) { c.lanes[t.BlockIdx()*64+t.ThreadIdx()] = true }

// TestLaunchCode: a kernel launched with a Code runs its Run on every
// thread, as Launch runs its function; a nil Code is refused by name.
func TestLaunchCode(t *testing.T) {
	s := sim.New(sim.Config{Seed: 1})
	c := &countCode{lanes: map[int]bool{}}
	_, err := LaunchCode(s, Config{Name: "code", Grid: 2, Block: 40}, c)
	require.NoError(t, err)
	require.NoError(t, s.Run())
	assert.Len(t, c.lanes, 80)
	assert.True(t, c.lanes[64+39])
	_, err = LaunchCode(s, Config{Name: "none", Grid: 1, Block: 1}, nil)
	assert.ErrorContains(t, err, `kernel "none": nil kernel code`)
	_, err = Launch(s, Config{Name: "nofn", Grid: 1, Block: 1}, nil)
	assert.ErrorContains(t, err, `kernel "nofn": nil kernel function`)
}
