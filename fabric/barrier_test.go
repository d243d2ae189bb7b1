package fabric_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A barrier orders: after it, every rank sees every other rank's put. Run
// twice in separate launches: epochs persist across kernels.
func TestBarrierAcrossLaunches(t *testing.T) {
	for _, mm := range []bool{false, true} {
		t.Run(fmt.Sprintf("multimem=%v", mm), func(t *testing.T) {
			for seed := uint64(1); seed <= 5; seed++ {
				const n = 4
				r := newRig(t, seed, job.FabricConfig{Topology: fabric.Topology{NRanks: n}, Debug: true})
				epochs := make([][]uint32, 2)
				kern := func(launch int) func(th *kernel.Thread, dc fabric.DevComm) {
					return func(th *kernel.Thread, dc fabric.DevComm) {
						w := th.WarpGroup()
						cft := fabric.NewCft(w, dc, 0)
						bar := fabric.NewCftBarrierSession(w, dc, 0, mm)
						copy(th.Shared()[16:32], pattern(launch*10+dc.Rank, 16))
						for p := 0; p < n; p++ {
							if p != dc.Rank {
								le, off := fabric.GetPeerLeInfo(r.W[dc.Rank], uint64(dc.Rank*16), p, dc)
								cft.Put(w, le, off, 16, 16)
							}
						}
						cft.Submit(w)
						cft.Flush(w)
						bar.Sync(w, fabric.AcqRel, fabric.ProxyFabric, fabric.ProxyGeneric)
						got := make([]byte, 16*n)
						dc.Load(th, r.W[dc.Rank], 0, got)
						for p := 0; p < n; p++ {
							if p != dc.Rank {
								require.Equal(t, pattern(launch*10+p, 16), got[p*16:p*16+16], "launch %d rank %d from %d", launch, dc.Rank, p)
							}
						}
						if th.Lane() == 0 {
							epochs[launch] = append(epochs[launch], bar.Epoch())
						}
						bar.Sync(w, fabric.AcqRel, fabric.ProxyGeneric, fabric.ProxyFabric) // nobody overwrites before all have read
					}
				}
				r.Sim.Spawn("host", func(a *sim.Actor) {
					for launch := 0; launch < 2; launch++ {
						var ks []*kernel.Kernel
						for rank := 0; rank < n; rank++ {
							ks = append(ks, r.launch(t, rank, 32, 64, kern(launch)))
						}
						require.NoError(t, kernel.WaitAll(a, ks...))
					}
				})
				require.NoError(t, r.Sim.Run())
				step := uint32(1)
				if mm {
					step = n
				}
				for rank := 0; rank < n; rank++ {
					require.Equal(t, step, epochs[0][rank])
					require.Equal(t, 3*step, epochs[1][rank], "the second launch starts from the first's stored epoch")
				}
			}
		})
	}
}

// A lost arrival makes the timeout variants return ncclTimeout, per
// thread; the slot is then poisoned for later sessions.
func TestBarrierTimeout(t *testing.T) {
	for _, mm := range []bool{false, true} {
		t.Run(fmt.Sprintf("multimem=%v", mm), func(t *testing.T) {
			const n = 4
			r := newRig(t, 3, job.FabricConfig{Topology: fabric.Topology{NRanks: n},
				Faults: fabric.FaultPlan{DropBarrier: []fabric.BarrierRef{{Rank: 2, Index: 0, Multimem: mm}}}})
			res := make([][]fabric.Result, n)
			for rank := 0; rank < n; rank++ {
				r.launch(t, rank, 64, 64, func(th *kernel.Thread, dc fabric.DevComm) {
					b := th.BlockGroup()
					bar := fabric.NewCftBarrierSession(b, dc, 0, mm)
					got := bar.SyncTimeout(b, fabric.AcqRel, fabric.ProxyGeneric, fabric.ProxyGeneric, 100_000)
					if th.ThreadIdx() < 4 {
						res[dc.Rank] = append(res[dc.Rank], got)
					}
				})
			}
			require.NoError(t, r.Sim.Run())
			for rank := 0; rank < n; rank++ {
				for th, got := range res[rank] {
					want := fabric.Success
					switch {
					case mm && th == 0:
						want = fabric.Timeout // thread 0 polls the multimem inbox: it misses rank 2's add
					case !mm && rank != 2 && th == 2-boolInt(rank < 2):
						want = fabric.Timeout // the thread that polls rank 2's inbox
					}
					require.Equal(t, want, got, "rank %d thread %d", rank, th)
				}
			}
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestBarrierPoisonedAfterTimeout(t *testing.T) {
	const n = 2
	r := newRig(t, 3, job.FabricConfig{Topology: fabric.Topology{NRanks: n},
		Faults: fabric.FaultPlan{DropBarrier: []fabric.BarrierRef{{Rank: 1, Index: 0}}}})
	timedOut := false
	r.Sim.Spawn("host", func(a *sim.Actor) {
		k := r.launch(t, 0, 32, 64, func(th *kernel.Thread, dc fabric.DevComm) {
			w := th.WarpGroup()
			bar := fabric.NewCftBarrierSession(w, dc, 0, false)
			got := bar.SyncTimeout(w, fabric.Release, fabric.ProxyGeneric, fabric.ProxyGeneric, 10_000)
			if th.Lane() == 0 { // the only thread with a peer to poll
				timedOut = got == fabric.Timeout
			}
		})
		k1 := r.launch(t, 1, 32, 64, func(th *kernel.Thread, dc fabric.DevComm) {
			w := th.WarpGroup()
			bar := fabric.NewCftBarrierSession(w, dc, 0, false)
			bar.Arrive(w, fabric.Release, fabric.ProxyGeneric, fabric.ProxyGeneric)
		})
		require.NoError(t, kernel.WaitAll(a, k, k1))
		k = r.launch(t, 0, 32, 64, func(th *kernel.Thread, dc fabric.DevComm) {
			fabric.NewCftBarrierSession(th.WarpGroup(), dc, 0, false)
		})
		_ = k.Wait(a)
	})
	err := r.Sim.Run()
	require.True(t, timedOut)
	require.ErrorContains(t, err, "barrier index 0 (unicast) is poisoned")
}

func TestBarrierSessionRules(t *testing.T) {
	cases := []struct {
		name     string
		caps     fabric.CftCap
		index    uint32
		multimem bool
		want     string
	}{
		{"index beyond cftBarrierCount", 0, 1, false, "not below cftBarrierCount 1"},
		{"multimem without NCCL_CFT_MULTIMEM", fabric.CapCft, 0, true, "needs NCCL_CFT_MULTIMEM"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, 1, job.FabricConfig{Caps: tc.caps})
			r.launch(t, 0, 32, 64, func(th *kernel.Thread, dc fabric.DevComm) {
				fabric.NewCftBarrierSession(th.WarpGroup(), dc, tc.index, tc.multimem)
			})
			require.ErrorContains(t, r.Sim.Run(), tc.want)
		})
	}
}

// Misuse that hangs on hardware ends in the simulator's hang report, with
// the barrier or the unsubmitted group named as the lead cause.
func TestHangDiagnosis(t *testing.T) {
	t.Run("a rank uses another barrier index", func(t *testing.T) {
		const n = 4
		r := newRig(t, 2, job.FabricConfig{Topology: fabric.Topology{NRanks: n}, Barriers: 2})
		for rank := 0; rank < n; rank++ {
			r.launch(t, rank, 32, 64, func(th *kernel.Thread, dc fabric.DevComm) {
				idx := uint32(0)
				if dc.Rank == 3 {
					idx = 1
				}
				w := th.WarpGroup()
				fabric.NewCftBarrierSession(w, dc, idx, false).Sync(w, fabric.AcqRel, fabric.ProxyGeneric, fabric.ProxyGeneric)
			})
		}
		err := r.Sim.Run()
		var h *sim.HangError
		require.True(t, errors.As(err, &h), "%v", err)
		require.NotEmpty(t, h.Causes)
		require.Equal(t, fabric.CauseBarrierWaits, h.Causes[0].Kind)
		// Ranks 0–2 wait for rank 3 at index 0: one cause, said for the three
		// (merged as sim merges causes that differ only by rank); rank 3
		// waits for them at index 1.
		require.Len(t, h.Causes, 2)
		const rule = ": every rank must arrive at the same barrier indices (a barrier index synchronises only the CTAs that use it)"
		assert.Equal(t, sim.Cause{Kind: fabric.CauseBarrierWaits, Layer: sim.LayerAPI, Ranks: []int{0, 1, 2},
			Text: "at CFT barrier index 0 (unicast) in block 0 for its inbox at 0x20090 to reach 1, it holds 0; rank 3 never arrived at barrier index 0 (unicast) (it arrived at indices [1])" + rule}, h.Causes[0])
		assert.True(t, strings.HasPrefix(h.Causes[0].String(), "ranks 0–2 each wait at CFT barrier index 0 (unicast)"), h.Causes[0].String())
		assert.Equal(t, sim.Cause{Kind: fabric.CauseBarrierWaits, Layer: sim.LayerAPI, Ranks: []int{3},
			Text: "at CFT barrier index 1 (unicast) in block 0 for its inbox at 0x200a0 to reach 1, it holds 0; " +
				"rank 0 never arrived at barrier index 1 (unicast) (it arrived at indices [0]); rank 1 never arrived at barrier index 1 (unicast) (it arrived at indices [0]); rank 2 never arrived at barrier index 1 (unicast) (it arrived at indices [0])" + rule}, h.Causes[1])
		require.Contains(t, h.Text(), "CFT barrier index 1 (unicast)")
	})
	t.Run("a dropped arrival", func(t *testing.T) {
		const n = 2
		r := newRig(t, 2, job.FabricConfig{Topology: fabric.Topology{NRanks: n}, Faults: fabric.FaultPlan{DropBarrier: []fabric.BarrierRef{{Rank: 1, Index: 0, Multimem: true}}}})
		for rank := 0; rank < n; rank++ {
			r.launch(t, rank, 32, 64, func(th *kernel.Thread, dc fabric.DevComm) {
				w := th.WarpGroup()
				fabric.NewCftBarrierSession(w, dc, 0, true).Sync(w, fabric.AcqRel, fabric.ProxyGeneric, fabric.ProxyGeneric)
			})
		}
		var h *sim.HangError
		require.True(t, errors.As(r.Sim.Run(), &h))
		require.Equal(t, fabric.CauseBarrierWaits, h.Causes[0].Kind)
		// A multimem barrier waits for every rank's arrival, its own too:
		// both wait for rank 1's, one cause said for the two.
		assert.Equal(t, []int{0, 1}, h.Causes[0].Ranks)
		assert.Contains(t, h.Causes[0].Text, "rank 1 arrived but the fault plan dropped its arrivals")
	})
	for _, tc := range []struct {
		debug bool
		ranks []int // the ranks whose warp 1 skips submit
	}{{false, []int{0}}, {true, []int{0}}, {false, []int{0, 1}}} {
		t.Run(fmt.Sprintf("a group skipped submit on ranks %v, debug=%v", tc.ranks, tc.debug), func(t *testing.T) {
			r := newRig(t, 2, job.FabricConfig{Debug: tc.debug})
			for _, rank := range tc.ranks {
				r.launch(t, rank, 64, 64, func(th *kernel.Thread, dc fabric.DevComm) {
					blk := th.BlockGroup()
					cft := fabric.NewCft(blk, dc, 0)
					le, off := fabric.GetPeerLeInfo(r.W[dc.Rank], 0, 1-dc.Rank, dc)
					w := th.WarpGroup()
					cft.Put(w, le, off+uint64(th.WaveIdx())*16, 16, 16)
					if th.WaveIdx() == 0 {
						cft.Submit(w)
					}
					cft.Flush(blk)
				})
			}
			err := r.Sim.Run()
			if tc.debug {
				var le *kernel.LaneError
				require.True(t, errors.As(err, &le), "%v", err)
				require.ErrorContains(t, err, "1 operations issued by warp 1 of block 0 on rank 0 were never submitted")
				return
			}
			var h *sim.HangError
			require.True(t, errors.As(err, &h), "%v", err)
			// One cause whatever the number of ranks that skipped: the
			// same misuse, said for all of them.
			require.Len(t, h.Causes, 1)
			assert.Equal(t, sim.Cause{Kind: fabric.CauseFlushWaits, Layer: sim.LayerAPI, Ranks: tc.ranks,
				Text: "in ncclCft flush on block 0 ncclCftSmem@0 for 1 operation(s) that were issued but never submitted, by warp 1 of block 0 (put ×1): every group that issues must call submit before flushSmem and flush"}, h.Causes[0])
			assert.True(t, strings.HasPrefix(h.Causes[0].String(), sim.Who(tc.ranks)+" in ncclCft flush on block 0"), h.Causes[0].String())
		})
	}
}
