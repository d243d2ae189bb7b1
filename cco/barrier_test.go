package cco_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// Teams and their rank mapping on a 4-node × 4-GPU shape (cco.hpp §3).
func TestTeams(t *testing.T) {
	c := cco.DevComm{Rank: 5, NRanks: 16, LsaRank: 1, LsaSize: 4}
	assert.Equal(t, cco.Team{NRanks: 16, Rank: 5, Stride: 1}, cco.TeamWorld(c))
	assert.Equal(t, cco.Team{NRanks: 4, Rank: 1, Stride: 1}, cco.TeamLsa(c))
	assert.Equal(t, cco.Team{NRanks: 12, Rank: -1, Stride: 1}, cco.TeamCrossNode(c))
	assert.Equal(t, cco.Team{NRanks: 3, Rank: -1, Stride: 4}, cco.TeamRail(c))
	lsa := cco.TeamLsa(c)
	for tr, want := range []int{4, 5, 6, 7} {
		assert.Equal(t, want, cco.TeamRankToWorld(c, lsa, tr), "lsa %d", tr)
		assert.Equal(t, want, cco.TeamRankToGdaRank(c, lsa, tr))
	}
	// CrossNode skips my node (ranks 4..7).
	for tr, want := range []int{0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15} {
		assert.Equal(t, want, cco.CrossNodeTeamRankToWorld(c, tr), "cross-node %d", tr)
		assert.Equal(t, want, cco.TeamRankToGdaRank(c, cco.TeamCrossNode(c), tr))
	}
	// Rail: LSA rank 1 on nodes 0, 2, 3.
	for tr, want := range []int{1, 9, 13} {
		assert.Equal(t, want, cco.RailTeamRankToWorld(c, tr), "rail %d", tr)
		assert.Equal(t, want, cco.TeamRankToGdaRank(c, cco.TeamRail(c), tr))
	}
	// emud's one node: no other nodes.
	one := cco.DevComm{Rank: 2, NRanks: 4, LsaRank: 2, LsaSize: 4}
	assert.Zero(t, cco.TeamCrossNode(one).NRanks)
	assert.Zero(t, cco.TeamRail(one).NRanks)
}

// Four ranks, launched 5 µs apart, each write their value and sync on LSA
// barrier 0: after it every rank reads every value (the race detector,
// when on, sees the barrier's release/acquire order them). The epoch moves
// to 1 and a second session on the slot resumes there.
func TestLsaBarrierSession(t *testing.T) {
	const ranks = 4
	r := newRig(t, 1, rigOpts{ranks: ranks, barriers: 2})
	seen := make([][]uint32, ranks)
	epochs := make([]uint32, ranks)
	r.s.Spawn("host", func(a *sim.Actor) {
		for rank := 0; rank < ranks; rank++ {
			dc := r.dcs[rank]
			_, err := kernel.Launch(r.s, kernel.Config{Name: fmt.Sprintf("bar%d", rank), GPU: rank, Grid: 1, Block: 1}, func(th *kernel.Thread) {
				m := cco.NewMem(th, dc)
				m.Store32(r.send[rank].LocalPtr(0), uint32(100+rank))
				s := cco.NewLsaBarrierSession(th, dc, cco.TeamLsa(dc), 0)
				s.Sync()
				for p := 0; p < ranks; p++ {
					seen[rank] = append(seen[rank], m.Load32(r.send[rank].LsaPtr(p, 0)))
				}
				s.Close()
				s2 := cco.NewLsaBarrierSession(th, dc, cco.TeamLsa(dc), 0)
				epochs[rank] = s2.Epoch()
				s2.Close()
			})
			require.NoError(t, err)
			a.Sleep(5 * sim.Microsecond)
		}
	})
	require.NoError(t, r.s.Run())
	for rank := 0; rank < ranks; rank++ {
		assert.Equal(t, []uint32{100, 101, 102, 103}, seen[rank], "rank %d", rank)
		assert.Equal(t, uint32(1), epochs[rank], "rank %d", rank)
	}
}

// A rank that never arrives: the others' sync with a timeout returns 1
// after the timeout, the epoch unchanged; without a timeout the run hangs
// and the report names the barrier slot and the missing rank.
func TestLsaBarrierTimeout(t *testing.T) {
	r := newRig(t, 1, rigOpts{ranks: 2, barriers: 1})
	var status int
	var epoch uint32
	var took sim.Time
	r.launch(0, 1, 1, func(th *kernel.Thread, _ *cco.Sdma) {
		s := cco.NewLsaBarrierSession(th, r.dcs[0], cco.TeamLsa(r.dcs[0]), 0)
		start := th.Now()
		status = s.SyncTimeout(24000) // 10 µs at 2.4 GHz
		took = th.Now() - start
		epoch = s.Epoch()
	})
	require.NoError(t, r.s.Run())
	assert.Equal(t, 1, status)
	assert.Equal(t, uint32(0), epoch)
	assert.GreaterOrEqual(t, took, 10*sim.Microsecond)

	r = newRig(t, 1, rigOpts{ranks: 2, barriers: 1})
	r.launch(0, 1, 1, func(th *kernel.Thread, _ *cco.Sdma) {
		cco.NewLsaBarrierSession(th, r.dcs[0], cco.TeamLsa(r.dcs[0]), 0).Sync()
	})
	var h *sim.HangError
	require.ErrorAs(t, r.s.Run(), &h)
	assert.Contains(t, h.Text(), "ccoLsaBarrierSession::wait on LSA rank 0, barrier 0")
	assert.Contains(t, h.Text(), "LSA rank 1 has not arrived")

	r = newRig(t, 1, rigOpts{ranks: 2, barriers: 1})
	r.launch(0, 1, 1, func(th *kernel.Thread, _ *cco.Sdma) {
		cco.NewLsaBarrierSession(th, r.dcs[0], cco.TeamLsa(r.dcs[0]), 3)
	})
	assert.ErrorContains(t, r.s.Run(), "barrier index 3 outside the dev comm's 1 LSA barriers")
}

// A comm without SDMA queues: every call does nothing, as on hardware, and
// the host says so once per dev comm.
func TestNoQueuesSaysSoOnce(t *testing.T) {
	r := newRig(t, 1, rigOpts{ranks: 2, env: cco.Env{}})
	require.Zero(t, r.dcs[0].Sdma.SdmaNumQueue)
	r.launch(0, 1, 1, func(th *kernel.Thread, s *cco.Sdma) {
		for i := 0; i < 3; i++ {
			s.Put(1, r.recv[0], 0, r.send[0], 0, 64, 0, cco.RemoteSignal)
			s.Quiet(1)
		}
	})
	require.NoError(t, r.s.Run())
	var n int
	for _, w := range r.h.Warnings() {
		if strings.Contains(w, "has no SDMA queues") {
			n++
		}
	}
	assert.Equal(t, 1, n, "%q", r.h.Warnings())
	assert.Empty(t, r.node.Queues())
}

// Warp and block scope (ccoCoopWarp, ccoCoopBlock): every lane of the
// group builds the session and syncs; the lanes share the peers (lane r
// arrives at and waits for peer r), so after the sync every lane of every
// rank reads every rank's value, and every lane's epoch is 1; Close
// persists it from rank 0 of the group, and the next session resumes.
func TestLsaBarrierSessionGroupScopes(t *testing.T) {
	const ranks = 4
	for _, tc := range []struct {
		name  string
		block int
		group func(*kernel.Thread) kernel.Group
	}{
		{"warp", 64, (*kernel.Thread).WarpGroup},
		{"block", 128, (*kernel.Thread).BlockGroup},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1, rigOpts{ranks: ranks, barriers: 1})
			bad := make([]int, ranks)
			epochs := make([][]uint32, ranks)
			for rank := range ranks {
				dc := r.dcs[rank]
				epochs[rank] = make([]uint32, tc.block)
				r.launch(rank, 1, tc.block, func(th *kernel.Thread, _ *cco.Sdma) {
					m := cco.NewMem(th, dc)
					if th.ThreadIdx() == 0 {
						m.Store32(r.send[rank].LocalPtr(0), uint32(100+rank))
					}
					s := cco.NewLsaBarrierSessionGroup(tc.group(th), dc, cco.TeamLsa(dc), 0)
					s.Sync()
					for p := range ranks {
						if m.Load32(r.send[rank].LsaPtr(p, 0)) != uint32(100+p) {
							bad[rank]++
						}
					}
					s.Close()
					s2 := cco.NewLsaBarrierSessionGroup(tc.group(th), dc, cco.TeamLsa(dc), 0)
					epochs[rank][th.ThreadIdx()] = s2.Epoch()
					s2.Close()
				})
			}
			require.NoError(t, r.s.Run())
			for rank := range ranks {
				assert.Zero(t, bad[rank], "rank %d: lanes that read a value before its rank arrived", rank)
				for lane, e := range epochs[rank] {
					require.Equal(t, uint32(1), e, "rank %d lane %d", rank, lane)
				}
			}
		})
	}
}

// In a group, each lane's timeout status is its own (MORI's waitInternal):
// with LSA rank 2 of 3 never arriving, rank 0's lane 1 (which waits for
// rank 2) returns 1 and keeps its epoch, lane 0 (rank 1, which arrived)
// returns 0 and advances.
func TestLsaBarrierGroupTimeoutPerLane(t *testing.T) {
	r := newRig(t, 1, rigOpts{ranks: 3, barriers: 1})
	status := make([]int, 64)
	epoch := make([]uint32, 64)
	r.launch(0, 1, 64, func(th *kernel.Thread, _ *cco.Sdma) {
		s := cco.NewLsaBarrierSessionGroup(th.WarpGroup(), r.dcs[0], cco.TeamLsa(r.dcs[0]), 0)
		status[th.Lane()] = s.SyncTimeout(24000)
		epoch[th.Lane()] = s.Epoch()
	})
	r.launch(1, 1, 1, func(th *kernel.Thread, _ *cco.Sdma) {
		cco.NewLsaBarrierSession(th, r.dcs[1], cco.TeamLsa(r.dcs[1]), 0).Arrive()
	})
	require.NoError(t, r.s.Run())
	assert.Equal(t, []int{0, 1, 0}, status[:3])
	assert.Equal(t, []uint32{1, 0, 1}, epoch[:3], "lanes with no peer to wait for advance too")
}

// The hybrid barrier's LSA half (reqs.barrierCount) is a barrier of its
// own: a session on hybridLsaBarrier slot 0 orders the ranks' writes as
// lsaBarrier's does and moves only its own epoch; a handle of neither is
// refused naming both.
func TestHybridLsaBarrierSession(t *testing.T) {
	const ranks = 4
	r := newRig(t, 1, rigOpts{ranks: ranks, barriers: 2, hybrid: 3})
	require.Equal(t, 2, r.dcs[0].LsaBarrier.NBarriers)
	require.Equal(t, 3, r.dcs[0].HybridLsaBarrier.NBarriers)
	require.NotEqual(t, r.dcs[0].LsaBarrier.Base(), r.dcs[0].HybridLsaBarrier.Base())
	seen := make([][]uint32, ranks)
	epochs := make([][2]uint32, ranks)
	for rank := range ranks {
		dc := r.dcs[rank]
		r.launch(rank, 1, 1, func(th *kernel.Thread, _ *cco.Sdma) {
			m := cco.NewMem(th, dc)
			m.Store32(r.send[rank].LocalPtr(0), uint32(100+rank))
			s := cco.NewLsaBarrierSessionOn(th.ThreadGroup(), dc, cco.TeamLsa(dc), dc.HybridLsaBarrier, 0)
			s.Sync()
			for p := range ranks {
				seen[rank] = append(seen[rank], m.Load32(r.send[rank].LsaPtr(p, 0)))
			}
			s.Close()
			h := cco.NewLsaBarrierSessionOn(th.ThreadGroup(), dc, cco.TeamLsa(dc), dc.HybridLsaBarrier, 0)
			l := cco.NewLsaBarrierSession(th, dc, cco.TeamLsa(dc), 0)
			epochs[rank] = [2]uint32{h.Epoch(), l.Epoch()}
			h.Close()
			l.Close()
		})
	}
	require.NoError(t, r.s.Run())
	for rank := range ranks {
		assert.Equal(t, []uint32{100, 101, 102, 103}, seen[rank], "rank %d", rank)
		assert.Equal(t, [2]uint32{1, 0}, epochs[rank], "rank %d: hybrid slot 0 passed once, lsaBarrier slot 0 never", rank)
	}

	r = newRig(t, 1, rigOpts{ranks: 2, barriers: 1})
	r.launch(0, 1, 1, func(th *kernel.Thread, _ *cco.Sdma) {
		cco.NewLsaBarrierSessionOn(th.ThreadGroup(), r.dcs[0], cco.TeamLsa(r.dcs[0]), r.dcs[1].LsaBarrier, 0)
	})
	err := r.s.Run()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "a barrier handle that is neither this dev comm's lsaBarrier nor its hybridLsaBarrier")
}

// fixedSignal is a SignalTiming whose signals take d (and records them).
type fixedSignal struct {
	d    sim.Time
	sent [][2]int
}

func (f *fixedSignal) LsaSignal(now sim.Time, src, dst int) sim.Time {
	f.sent = append(f.sent, [2]int{src, dst})
	return now + f.d
}

// A timed LSA barrier (SetTiming, NCCL's in C++): a peer sees an arrival
// when its signal lands, not at the store. Rank 1 arrives 3 µs after rank
// 0 and signals take 1 µs: rank 0 leaves at 4 µs (it left at 3 µs,
// untimed), rank 1 at 3 µs (rank 0's signal landed at 1 µs). With a
// timeout that passes while the signal flies, rank 0's wait times out.
func TestLsaBarrierTimed(t *testing.T) {
	for _, c := range []struct {
		name    string
		timing  bool
		timeout uint64 // cycles at 2.4 GHz; 0: none
		left    [2]sim.Time
		status  int
	}{
		{"untimed", false, 0, [2]sim.Time{3 * sim.Microsecond, 3 * sim.Microsecond}, 0},
		{"timed", true, 0, [2]sim.Time{4 * sim.Microsecond, 3 * sim.Microsecond}, 0},
		{"timed, rank 0 times out first", true, 2400 * 3, [2]sim.Time{3 * sim.Microsecond, 3 * sim.Microsecond}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, 1, rigOpts{ranks: 2, barriers: 1})
			sig := &fixedSignal{d: sim.Microsecond}
			var left [2]sim.Time
			status := -1
			r.s.Spawn("host", func(a *sim.Actor) {
				for rank := range 2 {
					dc := r.dcs[rank]
					_, err := kernel.Launch(r.s, kernel.Config{Name: fmt.Sprintf("bar%d", rank), GPU: rank, Grid: 1, Block: 1}, func(th *kernel.Thread) {
						s := cco.NewLsaBarrierSession(th, dc, cco.TeamLsa(dc), 0)
						if c.timing {
							s.SetTiming(sig)
						}
						if rank == 0 && c.timeout != 0 {
							status = s.SyncTimeout(c.timeout)
						} else {
							s.Sync()
						}
						left[rank] = th.Now()
					})
					require.NoError(t, err)
					a.Sleep(3 * sim.Microsecond)
				}
			})
			require.NoError(t, r.s.Run())
			// Launches cost what they cost: compare against rank 0's start.
			assert.InDelta(t, float64(c.left[0]), float64(left[0]), float64(100*sim.Nanosecond), "rank 0 left")
			assert.InDelta(t, float64(c.left[1]), float64(left[1]), float64(100*sim.Nanosecond), "rank 1 left")
			if c.timeout != 0 {
				assert.Equal(t, c.status, status)
			}
			if c.timing {
				assert.Equal(t, [][2]int{{0, 1}, {1, 0}}, sig.sent)
			}
		})
	}
}
