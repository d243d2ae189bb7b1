package kernel

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/sim"
)

// A grid over Config.Resident runs that many blocks at once, each later
// block when one retires, in block order; the host's wait covers them
// all. Each block's lanes sleep 1 µs, so 10 blocks 3 at a time take 4 µs
// (all at once, 1 µs), block b starting at (b/3) µs.
func TestResidentBlocks(t *testing.T) {
	for _, tc := range []struct {
		name              string
		resident, maxLive int
		took              sim.Time
	}{
		{"all at once", 0, 10, sim.Microsecond},
		{"grid fits", 10, 10, sim.Microsecond},
		{"three at a time", 3, 3, 4 * sim.Microsecond},
		{"one at a time", 1, 1, 10 * sim.Microsecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sim.New(sim.Config{Seed: 3})
			live, started, maxLive, lanes := map[int]int{}, map[int]sim.Time{}, 0, 0
			sleep := &Call[None]{Name: "sleep", Run: func(g *Active, _ []None) error {
				g.Actor().Sleep(sim.Microsecond)
				return nil
			}}
			k, err := Launch(s, Config{Grid: 10, Block: 96, Resident: tc.resident}, func(th *Thread) {
				b := th.BlockIdx()
				if _, ok := started[b]; !ok {
					started[b] = RunningLane(s).w.a.Now()
				}
				live[b]++
				maxLive = max(maxLive, len(live))
				Converge(th, sleep, None{})
				th.SyncThreads()
				lanes++
				if live[b]--; live[b] == 0 {
					delete(live, b)
				}
			})
			require.NoError(t, err)
			var took sim.Time
			s.Spawn("host", func(a *sim.Actor) {
				require.NoError(t, k.Wait(a))
				took = a.Now()
			})
			require.NoError(t, s.Run())
			assert.Equal(t, 960, lanes)
			assert.Equal(t, tc.maxLive, maxLive, "blocks alive at once")
			assert.Equal(t, tc.took, took)
			if tc.resident > 0 && tc.resident < 10 {
				for b := range 10 { // in block order, as blocks retire
					assert.Equal(t, sim.Time(b/tc.resident)*sim.Microsecond, started[b], "block %d's start", b)
				}
			}
		})
	}
}

// A grid over Config.Resident gives the same digest for the same seed,
// under perturbation too (each later block's start skew is drawn when it
// starts).
func TestResidentDeterministic(t *testing.T) {
	digest := func(seed uint64) string {
		s := sim.New(sim.Config{Seed: seed, Perturb: 2})
		_, err := Launch(s, Config{Grid: 12, Block: 128, Resident: 5}, func(th *Thread) {
			th.SyncThreads()
			th.Ballot(th.Lane()%3 == 0)
		})
		require.NoError(t, err)
		require.NoError(t, s.Run())
		return s.Digest()
	}
	assert.Equal(t, digest(5), digest(5))
	assert.NotEqual(t, digest(5), digest(6))
}

// launchGridWideWait launches a grid-wide wait of cfg.Grid blocks on s:
// every block but the last waits for a flag the last block raises (lanes
// calling name), and a host actor waits for the kernel.
func launchGridWideWait(t *testing.T, s *sim.Sim, cfg Config, name string) *Kernel {
	t.Helper()
	flag := s.NewWatchList("flag")
	set := false
	wait := &Call[None]{Name: name, Run: func(g *Active, _ []None) error {
		g.Actor().Await(sim.Wait{List: flag, Pred: func() bool { return set }, What: "the last block's flag"})
		return nil
	}}
	raise := &Call[None]{Name: "raise", Run: func(g *Active, _ []None) error {
		set = true
		flag.Notify(0, 1)
		return nil
	}}
	k, err := Launch(s, cfg, func(th *Thread) {
		if th.BlockIdx() == cfg.Grid-1 {
			Converge(th, raise, None{})
			return
		}
		Converge(th, wait, None{})
	})
	require.NoError(t, err)
	s.Spawn("host", func(a *sim.Actor) { _ = k.Wait(a) })
	return k
}

// A resident block that waits for a block that cannot start until it
// retires is a hang (on a GPU too), and the report says the grid's later
// blocks have not started and how many are resident.
func TestResidentGridWideWaitHangs(t *testing.T) {
	s := sim.New(sim.Config{Seed: 1})
	k := launchGridWideWait(t, s, Config{Name: "gridwide", Grid: 4, Block: 64, Resident: 2}, "wait-for-block-3")
	err := s.Run()
	var h *sim.HangError
	require.ErrorAs(t, err, &h)
	assert.Contains(t, h.Text(), `kernel "gridwide" on GPU 0: 2 waves still running, 2 of its 4 blocks not started (at most 2 blocks resident at once; a block starts when a resident one retires: a wait of resident blocks on later ones hangs on a GPU too)`)
	assert.Contains(t, h.Text(), "wait-for-block-3 by lanes 0-63")
	assert.Equal(t, 2, k.Waiting())
}

// A pool's budget is not the GPU's: a grid-wide wait over more lanes than
// the pool holds runs once its resident lanes all wait, since Overflow
// (at the run's quiescent point) starts the blocks the budget held back,
// and the run is one digest a seed. It hangs only where the CUs'
// Config.Resident would too, and, without Overflow hooked, at the budget
// (what Overflow saves a correct grid-wide wait from: a false hang).
func TestPoolOverflowAtQuiescence(t *testing.T) {
	run := func(resident int, hook bool) (*Kernel, string, error) {
		s := sim.New(sim.Config{Seed: 3})
		pool, err := NewPool(128) // two 64-lane blocks
		require.NoError(t, err)
		if hook {
			s.OnQuiescent(pool.Overflow)
		}
		k := launchGridWideWait(t, s, Config{Name: "gridwide", Grid: 6, Block: 64, Resident: resident, Pool: pool}, "wait-for-last")
		err = s.Run()
		return k, s.Digest(), err
	}
	k, d1, err := run(0, true)
	require.NoError(t, err, "the CUs hold every block: no hang")
	assert.True(t, k.Done())
	_, d2, _ := run(0, true)
	assert.Equal(t, d1, d2, "one digest a seed")

	_, _, err = run(4, true)
	var h *sim.HangError
	require.ErrorAs(t, err, &h, "past what the CUs hold: a hang, as on a GPU")
	assert.Contains(t, h.Text(), "2 of its 6 blocks not started (at most 4 blocks resident at once")

	_, _, err = run(0, false)
	require.ErrorAs(t, err, &h, "no Overflow: the budget alone holds the blocks back")
	assert.Contains(t, h.Text(), "4 of its 6 blocks not started")
}

func TestResidentValidation(t *testing.T) {
	_, err := Launch(sim.New(sim.Config{}), Config{Grid: 2, Block: 64, Resident: -1}, func(*Thread) {})
	assert.ErrorContains(t, err, "-1 resident blocks")
}

// A Pool bounds the lanes alive at once of launches on several GPUs
// (within a block a GPU), and
// one GPU alone may use all of it. Block b of each GPU's grid waits for
// block b of every GPU (as NCCL's RMS-norm kernels' per-block LSA
// barriers do): blocks start in order on each GPU, so all finish.
func TestPoolAcrossGPUs(t *testing.T) {
	for _, tc := range []struct {
		name          string
		gpus, maxLive int
	}{
		{"one GPU takes the pool", 1, 256},
		// GPU 0 launches first and takes the pool; each other GPU starts
		// one block at once (a GPU with none alive always may): the pool
		// is over by at most a block a GPU.
		{"three GPUs share it", 3, 256 + 2*64},
		{"eight GPUs, a block each at least", 8, 256 + 7*64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := sim.New(sim.Config{Seed: 2})
			pool, err := NewPool(256)
			require.NoError(t, err)
			arrived := make([]int, 8)
			bar := s.NewWatchList("bar")
			meet := &Call[None]{Name: "meet", Run: func(g *Active, _ []None) error {
				b := g.Wave().b.idx
				arrived[b]++
				bar.Notify(0, 1)
				g.Actor().Await(sim.Wait{List: bar, Pred: func() bool { return arrived[b] == tc.gpus }, What: "block's peers"})
				g.Actor().Sleep(sim.Microsecond)
				return nil
			}}
			live, maxLive, lanes := 0, 0, 0
			var ks []*Kernel
			for gpu := range tc.gpus {
				k, err := Launch(s, Config{GPU: gpu, Grid: 8, Block: 64, Pool: pool}, func(th *Thread) {
					live++
					maxLive = max(maxLive, live)
					Converge(th, meet, None{})
					lanes++
					live--
				})
				require.NoError(t, err)
				ks = append(ks, k)
			}
			s.Spawn("host", func(a *sim.Actor) { require.NoError(t, WaitAll(a, ks...)) })
			require.NoError(t, s.Run())
			assert.Equal(t, tc.gpus*8*64, lanes)
			assert.Equal(t, tc.maxLive, maxLive, "lanes alive at once")
			assert.Zero(t, pool.Live())
		})
	}
	_, err := NewPool(0)
	assert.ErrorContains(t, err, "pool of 0 lanes")
}

// Two launches on one GPU share its part of a Pool: the second starts its
// blocks as the first's retire, and the lanes alive never pass the pool
// (the GPU has lanes alive, so no block starts past it).
func TestPoolTwoLaunchesOneGPU(t *testing.T) {
	s := sim.New(sim.Config{Seed: 4})
	pool, err := NewPool(128)
	require.NoError(t, err)
	sleep := &Call[None]{Name: "sleep", Run: func(g *Active, _ []None) error {
		g.Actor().Sleep(sim.Microsecond)
		return nil
	}}
	live, maxLive, lanes := 0, 0, 0
	body := func(th *Thread) {
		live++
		maxLive = max(maxLive, live)
		Converge(th, sleep, None{})
		lanes++
		live--
	}
	a, err := Launch(s, Config{Name: "a", Grid: 4, Block: 64, Pool: pool}, body)
	require.NoError(t, err)
	b, err := Launch(s, Config{Name: "b", Grid: 4, Block: 64, Pool: pool}, body)
	require.NoError(t, err)
	assert.Equal(t, 2, a.Waiting(), "a: two blocks fit at its launch")
	assert.Equal(t, 4, b.Waiting(), "b: none fits at its launch")
	var took sim.Time
	s.Spawn("host", func(h *sim.Actor) {
		require.NoError(t, WaitAll(h, a, b))
		took = h.Now()
	})
	require.NoError(t, s.Run())
	assert.Equal(t, 512, lanes)
	assert.Equal(t, 128, maxLive)
	assert.Equal(t, 4*sim.Microsecond, took, "8 blocks, 2 at a time")
	assert.Zero(t, pool.Live())
}
