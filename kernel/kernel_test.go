package kernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/emud-dev/emud/internal/testmain"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMain(m *testing.M) { testmain.Run(m) }

func run(t *testing.T, seed uint64, cfg Config, fn func(*Thread)) (*Kernel, error) {
	t.Helper()
	s := sim.New(sim.Config{Seed: seed})
	k, err := Launch(s, cfg, fn)
	require.NoError(t, err)
	return k, s.Run()
}

func TestLaunchValidation(t *testing.T) {
	s := sim.New(sim.Config{})
	nop := func(*Thread) {}
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Grid: 0, Block: 64}, "grid of 0 blocks"},
		{Config{Grid: 1, Block: 0}, "block of 0 threads"},
		{Config{Grid: 1, Block: 2048}, "block of 2048 threads"},
		{Config{Grid: 1, Block: 64, WaveSize: 16}, "wave size 16"},
		{Config{Grid: 1, Block: 64, SharedBytes: -1}, "shared memory"},
		{Config{Grid: 1, Block: 64, SharedBytes: MaxSharedBytes + 1}, "shared memory"},
		{Config{Grid: 1, Block: 64, GPU: -1}, "GPU -1"},
	} {
		_, err := Launch(s, tc.cfg, nop)
		require.Error(t, err, "%+v", tc.cfg)
		assert.Contains(t, err.Error(), tc.want)
	}
	_, err := Launch(s, Config{Grid: 1, Block: 1}, nil)
	assert.ErrorContains(t, err, "nil kernel function")
	_, err = Launch(nil, Config{Grid: 1, Block: 1}, nop)
	assert.ErrorContains(t, err, "nil simulator")
}

func TestIndices(t *testing.T) {
	type ids struct{ gpu, blk, tid, lane, wave, bdim, gdim, ws int }
	var got []ids
	k, err := run(t, 1, Config{GPU: 3, Grid: 2, Block: 40, WaveSize: 32}, func(th *Thread) {
		got = append(got, ids{th.GPU(), th.BlockIdx(), th.ThreadIdx(), th.Lane(), th.WaveIdx(), th.BlockDim(), th.GridDim(), th.WarpSize()})
	})
	require.NoError(t, err)
	require.True(t, k.Done())
	require.Len(t, got, 80)
	seen := map[[2]int]bool{}
	for _, g := range got {
		assert.Equal(t, 3, g.gpu)
		assert.Equal(t, g.tid%32, g.lane)
		assert.Equal(t, g.tid/32, g.wave)
		assert.Equal(t, 40, g.bdim)
		assert.Equal(t, 2, g.gdim)
		seen[[2]int{g.blk, g.tid}] = true
	}
	assert.Len(t, seen, 80)
}

func TestBallotMatchFirstLane(t *testing.T) {
	res := make([][4]uint64, 64)
	_, err := run(t, 1, Config{Grid: 1, Block: 64}, func(th *Thread) {
		l := th.Lane()
		if l%2 == 1 { // only odd lanes: the active set is the odd lanes
			res[l][0] = th.Ballot(l%4 == 1)
			res[l][1] = th.MatchAny(uint64(l % 3))
			res[l][2] = th.ReadFirstLane(uint64(100 + l))
			res[l][3] = th.ActiveMask()
		}
	})
	require.NoError(t, err)
	var odd, mod4 uint64
	for l := 0; l < 64; l++ {
		if l%2 == 1 {
			odd |= 1 << l
			if l%4 == 1 {
				mod4 |= 1 << l
			}
		}
	}
	for l := 1; l < 64; l += 2 {
		assert.Equal(t, mod4, res[l][0], "ballot lane %d", l)
		var want uint64
		for u := 1; u < 64; u += 2 {
			if u%3 == l%3 {
				want |= 1 << u
			}
		}
		assert.Equal(t, want, res[l][1], "match_any lane %d", l)
		assert.Equal(t, uint64(101), res[l][2], "readfirstlane lane %d", l)
		assert.Equal(t, odd, res[l][3], "activemask lane %d", l)
	}
}

// Lanes that skip an if-body wait after it and reconverge: the call after
// the if sees all 64 lanes, whichever side of the branch the low lanes took.
func TestReconvergence(t *testing.T) {
	for _, tc := range []struct {
		name string
		body func(l int) bool
	}{{"low lanes in body", func(l int) bool { return l < 32 }}, {"high lanes in body", func(l int) bool { return l >= 32 }}} {
		t.Run(tc.name, func(t *testing.T) {
			var inBody, after [64]uint64
			_, err := run(t, 2, Config{Grid: 1, Block: 64}, func(th *Thread) {
				if tc.body(th.Lane()) {
					inBody[th.Lane()] = th.ActiveMask()
				}
				after[th.Lane()] = th.ActiveMask()
			})
			require.NoError(t, err)
			for l := 0; l < 64; l++ {
				assert.Equal(t, ^uint64(0), after[l], "lane %d after the if", l)
				if tc.body(l) {
					assert.Equal(t, 32, Popc(inBody[l]), "lane %d in the body", l)
				}
			}
		})
	}
}

// A loop whose trip count differs per lane: iteration i is active on the
// lanes with l > i, and everyone meets after the loop.
func TestLoopDivergence(t *testing.T) {
	var masks [8][]uint64
	var after uint64
	_, err := run(t, 3, Config{Grid: 1, Block: 8}, func(th *Thread) {
		l := th.Lane()
		for i := 0; i < l; i++ {
			masks[l] = append(masks[l], th.ActiveMask())
		}
		m := th.ActiveMask()
		if l == 0 {
			after = m
		}
	})
	require.NoError(t, err)
	assert.Equal(t, uint64(0xff), after)
	for l := 0; l < 8; l++ {
		require.Len(t, masks[l], l)
		for i, m := range masks[l] {
			want := uint64(0xff) &^ (uint64(1)<<uint(i+1) - 1)
			assert.Equal(t, want, m, "lane %d iteration %d", l, i)
		}
	}
}

// Two waves exchange values through shared memory across SyncThreads; a
// third wave that returns early does not hold the barrier.
func TestSyncThreadsSharedMemory(t *testing.T) {
	got := make([]uint32, 128)
	k, err := run(t, 4, Config{Grid: 2, Block: 192, SharedBytes: 128 * 4}, func(th *Thread) {
		if th.ThreadIdx() >= 128 {
			return // wave 2 leaves at once
		}
		sh := th.Shared()
		binary.LittleEndian.PutUint32(sh[4*th.ThreadIdx():], uint32(th.ThreadIdx()*10+th.BlockIdx()))
		th.SyncThreads()
		peer := 127 - th.ThreadIdx()
		v := binary.LittleEndian.Uint32(sh[4*peer:])
		th.BlockGroup().Sync()
		if th.BlockIdx() == 1 {
			got[th.ThreadIdx()] = v
		}
	})
	require.NoError(t, err)
	require.NoError(t, k.Err())
	for i := range got {
		assert.Equal(t, uint32((127-i)*10+1), got[i], "thread %d", i)
	}
}

func TestCoopGroups(t *testing.T) {
	type r struct{ rank, size int }
	var th1, wp, bl [128]r
	_, err := run(t, 5, Config{Grid: 1, Block: 128}, func(th *Thread) {
		i := th.ThreadIdx()
		g := th.ThreadGroup()
		th1[i] = r{g.ThreadRank(), g.Size()}
		w := th.WarpGroup()
		wp[i] = r{w.ThreadRank(), w.Size()}
		w.Sync()
		b := th.BlockGroup()
		bl[i] = r{b.ThreadRank(), b.Size()}
		g.Sync()
		assert.Equal(t, ScopeBlock, b.Scope())
	})
	require.NoError(t, err)
	for i := 0; i < 128; i++ {
		assert.Equal(t, r{0, 1}, th1[i])
		assert.Equal(t, r{i % 64, 64}, wp[i])
		assert.Equal(t, r{i, 128}, bl[i])
	}
	assert.Equal(t, "warp", ScopeWarp.String())
}

func TestPanicFailsKernelNotProcess(t *testing.T) {
	k, err := run(t, 6, Config{Name: "boom", GPU: 2, Grid: 2, Block: 64}, func(th *Thread) {
		th.SyncWarp()
		if th.BlockIdx() == 1 && th.Lane() == 17 {
			var lanes []int
			lanes[th.Lane()]++ // index out of range
		}
		th.SyncWarp()
	})
	var le *LaneError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, "boom", le.Kernel)
	assert.Equal(t, 2, le.GPU)
	assert.Equal(t, 1, le.Block)
	assert.Equal(t, 17, le.Lane)
	assert.Equal(t, "panic", le.Call)
	assert.Contains(t, le.Error(), "GPU 2 block 1 thread 17 (wave 0 lane 17)")
	assert.Contains(t, le.Stack, "kernel_test.go")
	assert.Same(t, le, k.Err())
}

func TestFailFromDeviceCall(t *testing.T) {
	trap := &Call[None]{Name: "trap", Run: func(g *Active, _ []None) error {
		return g.Errorf(g.Lanes()[len(g.Lanes())-1], "rule %d broken", 3)
	}}
	_, err := run(t, 7, Config{Grid: 1, Block: 64}, func(th *Thread) {
		if th.Lane() < 10 {
			Converge(th, trap, None{})
		}
	})
	var le *LaneError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 9, le.Lane)
	assert.Equal(t, "trap", le.Call)
	assert.EqualError(t, le.Err, "rule 3 broken")

	_, err = run(t, 7, Config{Grid: 1, Block: 64}, func(th *Thread) {
		if th.Lane() == 5 {
			th.Fail("check", errors.New("nope"))
		}
	})
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 5, le.Lane)
	assert.Equal(t, "check", le.Call)
}

// A call whose Run blocks: the wave's actor waits; the group runs once.
func TestBlockingCallAndHostWait(t *testing.T) {
	s := sim.New(sim.Config{Seed: 8})
	runs := 0
	var groupSize int
	sleep := &Call[*uint64]{Name: "sleep", Run: func(g *Active, at []*uint64) error {
		runs++
		groupSize = len(g.Lanes())
		g.Actor().Sleep(5 * sim.Microsecond)
		for _, p := range at {
			*p = uint64(g.Actor().Now())
		}
		return nil
	}}
	var at [64]uint64
	k, err := Launch(s, Config{Grid: 1, Block: 64}, func(th *Thread) {
		Converge(th, sleep, &at[th.Lane()])
	})
	require.NoError(t, err)
	var hostSaw sim.Time
	s.Spawn("host", func(a *sim.Actor) {
		require.NoError(t, k.Wait(a))
		hostSaw = a.Now()
	})
	require.NoError(t, s.Run())
	assert.Equal(t, 1, runs)
	assert.Equal(t, 64, groupSize)
	assert.Equal(t, 5*sim.Microsecond, hostSaw)
	for l := range at {
		assert.Equal(t, uint64(5*sim.Microsecond), at[l])
	}
}

// A barrier some waves never reach hangs, and the report names the
// barrier and what the other wave's lanes are doing.
func TestBarrierHangReport(t *testing.T) {
	block := &Call[None]{Name: "wait-forever", Run: func(g *Active, _ []None) error {
		g.Actor().Await(sim.Wait{List: g.Actor().Sim().NewWatchList("never"), Pred: func() bool { return false }, What: "a flag nobody sets"})
		return nil
	}}
	_, err := run(t, 9, Config{Grid: 1, Block: 128}, func(th *Thread) {
		if th.WaveIdx() == 1 {
			Converge(th, block, None{})
		}
		th.SyncThreads()
	})
	var h *sim.HangError
	require.ErrorAs(t, err, &h)
	txt := h.Text()
	assert.Contains(t, txt, "block barrier (SyncThreads) of block 0: 1 of 2 live waves arrived")
	assert.Contains(t, txt, "wait-forever by lanes 0-63")
}

func TestDeterministicDigest(t *testing.T) {
	digest := func(seed uint64) string {
		s := sim.New(sim.Config{Seed: seed})
		for g := 0; g < 2; g++ {
			_, err := Launch(s, Config{GPU: g, Grid: 2, Block: 128}, func(th *Thread) {
				th.SyncThreads()
				th.Ballot(th.Lane()%3 == 0)
				th.SyncThreads()
			})
			require.NoError(t, err)
		}
		require.NoError(t, s.Run())
		return s.Digest()
	}
	assert.Equal(t, digest(11), digest(11))
	assert.NotEqual(t, digest(11), digest(12))
}

func TestMaskString(t *testing.T) {
	assert.Equal(t, "0-63", maskString(^uint64(0)))
	assert.Equal(t, "0,2-4,63", maskString(1|0b11100|1<<63))
	assert.Equal(t, "", maskString(0))
}

// Lane coroutines are reused by later kernels of the same run, and the pool
// ends them when the run ends (goleak checks that in TestMain).
func TestWorkersReused(t *testing.T) {
	s := sim.New(sim.Config{Seed: 10})
	var idle, made []int
	sum := 0
	s.Spawn("host", func(a *sim.Actor) {
		for round := 0; round < 3; round++ {
			k, err := Launch(s, Config{Grid: 2, Block: 64}, func(th *Thread) {
				th.SyncThreads()
				sum += th.ThreadIdx()
			})
			require.NoError(t, err)
			require.NoError(t, k.Wait(a))
			idle = append(idle, len(lanePool(s).idle))
			made = append(made, lanePool(s).made)
		}
	})
	require.NoError(t, s.Run())
	// Each block is one wave that never blocks, so block 1 already runs on
	// block 0's workers, and every later kernel on the same 64.
	assert.Equal(t, []int{64, 64, 64}, made, "workers created")
	assert.Equal(t, []int{64, 64, 64}, idle, "workers idle between kernels")
	assert.Equal(t, 3*2*(63*64/2), sum)
	assert.Nil(t, lanePool(s).idle, "drained when the run ended")
}

// A Thread used from another lane's code fails the lane that did it, with
// a message saying so, instead of corrupting the wave.
func TestThreadUsedByAnotherLane(t *testing.T) {
	var lane0 *Thread
	_, err := run(t, 11, Config{Grid: 1, Block: 64}, func(th *Thread) {
		if th.Lane() == 0 {
			lane0 = th
		}
		th.SyncWarp()
		if th.Lane() == 5 {
			lane0.SyncWarp()
		}
	})
	var le *LaneError
	require.ErrorAs(t, err, &le)
	assert.Equal(t, 5, le.Lane)
	assert.Contains(t, le.Error(), "syncwarp called on GPU 0 block 0 thread 0 (wave 0 lane 0)'s Thread from another lane")
}

// A call's Run gets each active lane's own argument, aligned with Lanes,
// whatever the types of the calls the wave ran before (the argument
// scratch is shared by the wave's calls).
func TestCallArgsFollowLanes(t *testing.T) {
	type got struct {
		lanes []int
		args  []string
	}
	var names []got
	name := &Call[string]{Name: "name", Run: func(g *Active, args []string) error {
		r := got{args: slices.Clone(args)}
		for _, th := range g.Lanes() {
			r.lanes = append(r.lanes, th.Lane())
		}
		names = append(names, r)
		return nil
	}}
	double := &Call[*int]{Name: "double", Run: func(g *Active, args []*int) error {
		for _, p := range args {
			*p *= 2
		}
		return nil
	}}
	var vals [8]int
	_, err := run(t, 3, Config{Grid: 1, Block: 8}, func(th *Thread) {
		vals[th.Lane()] = th.Lane()
		if th.Lane()%2 == 1 {
			Converge(th, double, &vals[th.Lane()])
		}
		Converge(th, name, fmt.Sprint("lane", th.Lane()))
		ConvergeIf(th, double, &vals[th.Lane()], th.Lane() < 4)
	})
	require.NoError(t, err)
	assert.Equal(t, []got{{lanes: []int{0, 1, 2, 3, 4, 5, 6, 7},
		args: []string{"lane0", "lane1", "lane2", "lane3", "lane4", "lane5", "lane6", "lane7"}}}, names)
	assert.Equal(t, [8]int{0, 4, 4, 12, 4, 10, 6, 14}, vals)
}

// A lane names itself (Who, in every write record of a tracked word it
// posts toward) as fmt would, in one allocation.
func TestThreadWho(t *testing.T) {
	var names []string
	var allocs []float64
	_, err := run(t, 1, Config{Name: `all"to"all`, GPU: 5, Grid: 2, Block: 70, WaveSize: 64}, func(th *Thread) {
		if th.Lane() == 3 || th.Lane() == 0 && th.WaveIdx() == 1 {
			names = append(names, th.Who())
			allocs = append(allocs, testing.AllocsPerRun(5, func() { _ = th.Who() }))
			assert.Equal(t, fmt.Sprintf("kernel %q GPU %d block %d wave %d lane %d", `all"to"all`, 5, th.BlockIdx(), th.WaveIdx(), th.Lane()), names[len(names)-1])
		}
	})
	require.NoError(t, err)
	assert.Len(t, names, 6)
	for _, a := range allocs {
		assert.LessOrEqual(t, a, 1.0)
	}
}
