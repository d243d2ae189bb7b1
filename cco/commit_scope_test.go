package cco_test

import (
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commit<Warp> and commit<Block> ring every queue of the peer (lane or
// thread l < n rings queue l, queueId ignored); commit<Thread> rings one
// (docs/cco-semantics.md §7). Called by lane 0 alone, commit<Warp> rings only
// queue 0: the other lanes would have rung the others.
func TestCommitScopes(t *testing.T) {
	const n = 4
	for _, tc := range []struct {
		name    string
		threads int
		commit  func(t *kernel.Thread, sdma *cco.Sdma)
		rung    []bool
	}{
		{"thread rings its queue", 64, func(t *kernel.Thread, sdma *cco.Sdma) {
			if t.Lane() == 0 {
				sdma.Commit(1, 2)
			}
		}, []bool{false, false, true, false}},
		{"thread out of range rings nothing", 64, func(t *kernel.Thread, sdma *cco.Sdma) {
			if t.Lane() == 0 {
				sdma.Commit(1, n)
			}
		}, []bool{false, false, false, false}},
		{"warp rings every queue", 64, func(t *kernel.Thread, sdma *cco.Sdma) {
			sdma.Commit(1, 3, cco.CoopWarp) // queueId ignored
		}, []bool{true, true, true, true}},
		{"warp from lane 0 alone rings queue 0", 64, func(t *kernel.Thread, sdma *cco.Sdma) {
			if t.Lane() == 0 {
				sdma.Commit(1, 3, cco.CoopWarp)
			}
		}, []bool{true, false, false, false}},
		{"block rings every queue", 128, func(t *kernel.Thread, sdma *cco.Sdma) {
			sdma.Commit(1, 0, cco.CoopBlock)
		}, []bool{true, true, true, true}},
		{"warp of the second wave rings queues by lane", 128, func(t *kernel.Thread, sdma *cco.Sdma) {
			if t.WaveIdx() == 1 {
				sdma.Commit(1, 0, cco.CoopWarp)
			}
		}, []bool{true, true, true, true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= seeds; seed++ {
				r := newRig(t, seed, rigOpts{ranks: 2, queues: n})
				r.fillBytes(r.send[0], 0, patterned(int(seed), 4*64))
				r.launch(0, 1, tc.threads, func(th *kernel.Thread, sdma *cco.Sdma) {
					if th.ThreadIdx() < n {
						q := th.ThreadIdx()
						sdma.Put(1, r.recv[0], uint64(q*64), r.send[0], uint64(q*64), 64, q, cco.SdmaOptFlagsAggregate)
					}
					th.SyncThreads()
					tc.commit(th, sdma)
				})
				require.NoError(t, r.s.Run(), "seed %d", seed)
				got := r.readBytes(r.recv[1], 0, 4*64)
				for q := 0; q < n; q++ {
					qu, err := r.node.Queue(0, 1, q)
					require.NoError(t, err)
					if tc.rung[q] {
						assert.Zero(t, qu.Ring().Unrung(), "seed %d queue %d rung", seed, q)
						assert.Equal(t, patterned(int(seed), 4*64)[q*64:(q+1)*64], got[q*64:(q+1)*64], "seed %d queue %d's put landed", seed, q)
					} else {
						assert.Equal(t, uint64(cco.Unit), qu.Ring().Unrung(), "seed %d queue %d not rung", seed, q)
						assert.Equal(t, make([]byte, 64), got[q*64:(q+1)*64], "seed %d queue %d's put never ran", seed, q)
					}
				}
			}
		})
	}
}

// wrapped is a running total as the engine sees it: its low 32 bits.
func wrapped(total uint64) uint32 { return uint32(total) }

// PostWaitMemPutPtr advice: compare with Eq on a per-call epoch. A Ge on a
// running total misbehaves across the u32 wrap: the target wraps to a small
// number that an old flag value already satisfies.
func TestPostWaitMemEpochVersusRunningTotal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value uint32
		cmp   cco.Cmp
		early bool
	}{
		{"Ge on a running total that wrapped releases early", wrapped(0xFFFFFFFF + 1), cco.SdmaCmpGe, true},
		{"Eq on the call's epoch waits", 2, cco.SdmaCmpEq, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for seed := uint64(1); seed <= seeds; seed++ {
				// The early release is a planted wrap: the detector's
				// lifecycle check names it (scenario/planted/lifecycle_test.go), so it stays
				// off here where the test measures the release itself.
				r := newRig(t, seed, rigOpts{ranks: 2, racy: tc.early})
				const flagOff = 4096
				// The previous call left the flag at 0xFFFFFFFF (running
				// total) or at epoch 1; the peer has not updated it yet.
				old := uint32(0xFFFFFFFF)
				if tc.cmp == cco.SdmaCmpEq {
					old = 1
				}
				require.NoError(t, r.mem.Store32(r.recv[0].LocalPtr(flagOff), old))
				r.fillBytes(r.send[0], 0, patterned(4, 32))
				r.launch(0, 1, 1, func(th *kernel.Thread, sdma *cco.Sdma) {
					sdma.PostWaitMemPutPtr(1, 0, r.recv[0], flagOff, tc.value, tc.cmp, 0xFFFFFFFF,
						r.recv[0].LsaPtr(1, 0), r.send[0].LocalPtr(0), 32)
				})
				var before bool
				r.s.Spawn("peer", func(a *sim.Actor) {
					a.Sleep(50 * sim.Microsecond)
					before = assert.ObjectsAreEqual(patterned(4, 32), r.readBytes(r.recv[1], 0, 32))
					// The peer now publishes this call: total+1 (wrapped) or epoch 2.
					require.NoError(t, r.mem.Store32(r.recv[0].LocalPtr(flagOff), tc.value))
				})
				require.NoError(t, r.s.Run(), "seed %d", seed)
				assert.Equal(t, tc.early, before, "seed %d: did the copy run before the peer's flag update?", seed)
				assert.Equal(t, patterned(4, 32), r.readBytes(r.recv[1], 0, 32), "seed %d: it ran in the end", seed)
			}
		})
	}
}

// Queues belong to the process: two jobs (two unique ids) whose ranks share
// a GPU pair use one ring and one commit chain, as MORI's anvil keys queues
// by (src GPU, dst GPU, channel) (test_sdma_put_mt's shape).
func TestQueuesSharedAcrossComms(t *testing.T) {
	for seed := uint64(1); seed <= seeds; seed++ {
		r := newRig(t, seed, rigOpts{ranks: 2})
		comms, err := cco.CommCreateAll(r.h, 2, 0)
		require.NoError(t, err)
		var wins []cco.Window
		var dcs []cco.DevComm
		for _, c := range comms {
			b, err := cco.MemAlloc(c, 4096)
			require.NoError(t, err)
			w, err := cco.WindowRegister(c, b, 4096)
			require.NoError(t, err)
			wins = append(wins, w)
			reqs := cco.DevCommRequirementsInitializer()
			dc, err := cco.DevCommCreate(c, &reqs)
			require.NoError(t, err)
			dcs = append(dcs, dc)
		}
		r.fillBytes(r.send[0], 0, patterned(1, 64))
		require.NoError(t, r.mem.Write(wins[0].LocalPtr(0), patterned(2, 64)))
		r.launch(0, 1, 1, func(th *kernel.Thread, sdma *cco.Sdma) {
			sdma.Put(1, r.recv[0], 0, r.send[0], 0, 64, 0, cco.RemoteSignal)
			sdma.Quiet(1)
		})
		_, err = kernel.Launch(r.s, kernel.Config{Name: "job2", GPU: 0, Grid: 1, Block: 1}, func(th *kernel.Thread) {
			sdma := cco.NewSdma(th, dcs[0])
			sdma.Put(1, wins[1], 128, wins[0], 0, 64, 0, cco.RemoteSignal)
			sdma.Quiet(1)
		})
		require.NoError(t, err)
		require.NoError(t, r.s.Run(), "seed %d", seed)
		qu, err := r.node.Queue(0, 1, 0)
		require.NoError(t, err)
		assert.Equal(t, uint64(4*cco.Unit), qu.Ring().CommittedWptr(), "both jobs' COPY+ATOMIC went through one ring")
		assert.Equal(t, patterned(1, 64), r.readBytes(r.recv[1], 0, 64))
		got := make([]byte, 64)
		require.NoError(t, r.mem.Read(wins[1].LsaPtr(1, 128), got))
		assert.Equal(t, patterned(2, 64), got)
		// Each job's signal lands in its own dev comm's pool.
		assert.Equal(t, uint64(1), r.signal(1, 0, 0))
		v, err := dcs[1].Signal(0, 0)
		require.NoError(t, err)
		assert.Equal(t, uint64(1), v)
		assert.Len(t, r.node.Queues(), 1, "one queue for both jobs (quiet does not create the unused queue 1)")
	}
}
