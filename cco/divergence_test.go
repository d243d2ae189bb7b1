package cco_test

// Leader-only device calls are convergence points for their whole coop
// group, and lanes rejoin by program order, whatever Go's code layout (CI
// runs these under -gcflags=all=-N -l as well as the default).

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/signal"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The reproducer: 2 ranks, 4 lanes. In a loop, a warp-scope put
// with a remote signal; lane 0 computes the next expected count; the wave
// reads it with ReadFirstLane and every lane waits for it. Every lane must
// see lane 0's value, and the data of every step must have landed.
func TestLeaderPutThenReadFirstLane(t *testing.T) {
	const steps, chunk = 6, 256
	for seed := uint64(1); seed <= 4; seed++ {
		r := newRig(t, seed, rigOpts{ranks: 2, winBytes: steps * chunk})
		for me := 0; me < 2; me++ {
			r.fillBytes(r.send[me], 0, patterned(me, steps*chunk))
		}
		got := make([][][4]uint64, 2) // [rank][step][lane] expected
		seen := make([][][4]byte, 2)  // first byte of the step's chunk, read after the wait
		for me := 0; me < 2; me++ {
			me := me
			got[me] = make([][4]uint64, steps)
			seen[me] = make([][4]byte, steps)
			r.launch(me, 1, 4, func(th *kernel.Thread, s *cco.Sdma) {
				peer := 1 - me
				var exp signal.Expected
				for step := 0; step < steps; step++ {
					off := uint64(step * chunk)
					s.Put(peer, r.recv[me], off, r.send[me], off, chunk, 0, cco.CoopWarp, cco.RemoteSignal)
					var e uint64
					if th.Lane() == 0 {
						e = exp.Next(peer, 0)
					}
					e = th.ReadFirstLane(e)
					got[me][step][th.Lane()] = e
					s.WaitSignal(peer, 0, e)
					b := make([]byte, 1)
					require.NoError(t, r.mem.Read(r.recv[me].LocalPtr(off), b))
					seen[me][step][th.Lane()] = b[0]
				}
			})
		}
		require.NoError(t, r.s.Run(), "seed %d", seed)
		for me := 0; me < 2; me++ {
			for step := 0; step < steps; step++ {
				for l := 0; l < 4; l++ {
					assert.Equal(t, uint64(step+1), got[me][step][l], "seed %d rank %d step %d lane %d: expected from ReadFirstLane", seed, me, step, l)
					assert.Equal(t, pattern(1-me, step*chunk), seen[me][step][l], "seed %d rank %d step %d lane %d: data after waitSignal", seed, me, step, l)
				}
			}
		}
	}
}

// Non-leader lanes wait at a leader-only call until the leader has run it:
// after a warp-scope quietQueue returns on lane 5, the leader's put has
// landed; after a warp-scope put and get every lane resumes together (one
// ActiveMask of all lanes), for put, get, putBroadcast, postWaitSignal,
// quiet and quietQueue.
func TestLeaderOnlyCallsConvergeTheWave(t *testing.T) {
	type call func(th *kernel.Thread, s *cco.Sdma, r *rig, me int)
	put := func(th *kernel.Thread, s *cco.Sdma, r *rig, me int) {
		s.Put(1-me, r.recv[me], 0, r.send[me], 0, 4096, 0, cco.CoopWarp)
	}
	for _, tc := range []struct {
		name string
		fn   call
	}{
		{"put", put},
		{"get", func(th *kernel.Thread, s *cco.Sdma, r *rig, me int) {
			s.Get(1-me, r.recv[me], 0, r.send[1-me], 0, 4096, 1, cco.CoopWarp)
		}},
		{"putBroadcast", func(th *kernel.Thread, s *cco.Sdma, r *rig, me int) {
			s.PutBroadcast(1-me, r.recv[me], 0, me, r.recv[me], 8192, r.send[me], 0, 4096, 0, cco.CoopWarp)
		}},
		{"postWaitSignal", func(th *kernel.Thread, s *cco.Sdma, r *rig, me int) {
			s.PostWaitSignal(1-me, 0, me, 1, 0, cco.CoopWarp)
		}},
		{"quiet", func(th *kernel.Thread, s *cco.Sdma, r *rig, me int) {
			put(th, s, r, me)
			s.Quiet(1-me, cco.CoopWarp)
		}},
		{"quietQueue", func(th *kernel.Thread, s *cco.Sdma, r *rig, me int) {
			put(th, s, r, me)
			s.QuietQueue(1-me, 0, cco.CoopWarp)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 3, rigOpts{ranks: 2, winBytes: 16 << 10})
			for me := 0; me < 2; me++ {
				r.fillBytes(r.send[me], 0, patterned(me, 4096))
			}
			masks := make([][64]uint64, 2)
			left := make([][64]sim.Time, 2) // when each lane left the call
			for me := 0; me < 2; me++ {
				me := me
				r.launch(me, 1, 64, func(th *kernel.Thread, s *cco.Sdma) {
					tc.fn(th, s, r, me)
					left[me][th.Lane()] = th.Now()
					masks[me][th.Lane()] = th.ActiveMask()
				})
			}
			require.NoError(t, r.s.Run())
			for me := 0; me < 2; me++ {
				require.NotZero(t, left[me][0], "rank %d: the leader's call takes CU time", me)
				for l := 0; l < 64; l++ {
					assert.Equal(t, left[me][0], left[me][l], "rank %d lane %d left the call at another time than the leader", me, l)
					assert.Equal(t, ^uint64(0), masks[me][l], "rank %d lane %d", me, l)
				}
			}
		})
	}
}

// After a warp-scope quietQueue, a non-leader lane's load sees the put
// that the leader drained: it waited at the call for the leader.
func TestNonLeaderLoadsAfterQuietQueue(t *testing.T) {
	r := newRig(t, 1, rigOpts{ranks: 2, winBytes: 64 << 10})
	r.fillBytes(r.send[0], 0, patterned(7, 64<<10))
	var got [64]byte
	r.launch(0, 1, 64, func(th *kernel.Thread, s *cco.Sdma) {
		s.Put(1, r.recv[0], 0, r.send[0], 0, 64<<10, 0, cco.CoopWarp)
		s.QuietQueue(1, 0, cco.CoopWarp)
		b := make([]byte, 1)
		require.NoError(t, r.mem.Read(r.recv[1].LocalPtr(uint64(th.Lane())*1024+1023), b))
		got[th.Lane()] = b[0]
	})
	require.NoError(t, r.s.Run())
	for l := range got {
		assert.Equal(t, pattern(7, l*1024+1023), got[l], "lane %d", l)
	}
}

// An 8-rank ring all-reduce of uint32 sums (reduce-scatter then
// all-gather): lane 0 posts each step's chunk with a warp-scope put and a
// remote signal, lane 0 computes the expected count, ReadFirstLane hands it
// to the wave, every lane waits, then every lane reduces its share of the
// chunk. Every element is checked on every rank.
func TestRingAllReduceLeaderPut(t *testing.T) {
	for seed := uint64(1); seed <= 3; seed++ {
		ringAllReduce(t, seed)
	}
}

// ringAllReduce runs and checks the ring all-reduce; it returns the run's
// trace digest and end time.
func ringAllReduce(t *testing.T, seed uint64) string {
	const ranks, lanes = 8, 64
	const elems = 8 * 256 // per rank; chunk = elems/ranks
	const chunk = elems / ranks
	const bytes = 4 * elems
	{
		// recv holds the staging area: one chunk slot per step, so no slot
		// is reused before its reader is done.
		r := newRig(t, seed, rigOpts{ranks: ranks, winBytes: bytes + 4*chunk*2*(ranks-1)})
		for me := 0; me < ranks; me++ {
			buf := make([]byte, bytes)
			for i := 0; i < elems; i++ {
				binary.LittleEndian.PutUint32(buf[4*i:], uint32((me+1)*(i+3)))
			}
			r.fillBytes(r.send[me], 0, buf)
		}
		for me := 0; me < ranks; me++ {
			me := me
			r.launch(me, 1, lanes, func(th *kernel.Thread, s *cco.Sdma) {
				next, prev := (me+1)%ranks, (me+ranks-1)%ranks
				var exp signal.Expected
				step := func(k int, send int, stage uint64) {
					// Send chunk `send` of my buffer to next's staging slot k.
					s.Put(next, r.recv[me], stage, r.send[me], uint64(4*send*chunk), 4*chunk, 0, cco.CoopWarp, cco.RemoteSignal)
					var e uint64
					if th.Lane() == 0 {
						e = exp.Next(prev, 0)
					}
					e = th.ReadFirstLane(e)
					s.WaitSignal(prev, 0, e)
				}
				// Reduce-scatter: after step k, chunk (me-k-1) holds k+2 contributions.
				for k := 0; k < ranks-1; k++ {
					send := (me - k + 2*ranks) % ranks
					recvc := (me - k - 1 + 2*ranks) % ranks
					stage := uint64(4 * chunk * k)
					step(k, send, stage)
					for i := th.Lane(); i < chunk; i += lanes {
						in, err := r.mem.Load32(r.recv[me].LocalPtr(stage + uint64(4*i)))
						require.NoError(t, err)
						at := r.send[me].LocalPtr(uint64(4 * (recvc*chunk + i)))
						v, err := r.mem.Load32(at)
						require.NoError(t, err)
						require.NoError(t, r.mem.Store32(at, v+in))
					}
					th.SyncWarp()
					s.Quiet(next, cco.CoopWarp)
				}
				// All-gather: forward the completed chunks around the ring.
				for k := 0; k < ranks-1; k++ {
					send := (me + 1 - k + 2*ranks) % ranks
					recvc := (me - k + 2*ranks) % ranks
					stage := uint64(4 * chunk * (ranks - 1 + k))
					step(k, send, stage)
					for i := th.Lane(); i < chunk; i += lanes {
						in, err := r.mem.Load32(r.recv[me].LocalPtr(stage + uint64(4*i)))
						require.NoError(t, err)
						require.NoError(t, r.mem.Store32(r.send[me].LocalPtr(uint64(4*(recvc*chunk+i))), in))
					}
					th.SyncWarp()
					s.Quiet(next, cco.CoopWarp)
				}
			})
		}
		require.NoError(t, r.s.Run(), "seed %d", seed)
		wrong := 0
		for me := 0; me < ranks; me++ {
			buf := r.readBytes(r.send[me], 0, bytes)
			for i := 0; i < elems; i++ {
				want := uint32(0)
				for q := 0; q < ranks; q++ {
					want += uint32((q + 1) * (i + 3))
				}
				if binary.LittleEndian.Uint32(buf[4*i:]) != want {
					wrong++
				}
			}
		}
		require.Zero(t, wrong, fmt.Sprintf("seed %d: %d of %d elements wrong", seed, wrong, ranks*elems))
		return fmt.Sprintf("%s at %v", r.s.Digest(), r.s.Now())
	}
}

var updateDigests = flag.Bool("update-digests", false, "rewrite testdata/divergence.digests")

// The digests of divergent kernels are pinned in a golden file, so a run
// under other compiler flags (CI: -gcflags=all=-N -l, -race) that took
// another schedule fails here even when its data is right.
func TestDivergenceDigests(t *testing.T) {
	var sb strings.Builder
	for seed := uint64(1); seed <= 2; seed++ {
		fmt.Fprintf(&sb, "ring all-reduce seed %d: %s\n", seed, ringAllReduce(t, seed))
	}
	const golden = "testdata/divergence.digests"
	if *updateDigests {
		require.NoError(t, os.WriteFile(golden, []byte(sb.String()), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err, "run with -update-digests to create it")
	assert.Equal(t, string(want), sb.String())
}
