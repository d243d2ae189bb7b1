package fabric_test

import (
	"errors"
	"testing"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/race"
	"github.com/stretchr/testify/require"
)

// The fence checker (debug mode): rank 0 puts into rank 1, both sync on a
// barrier, rank 1 loads the data. Only proxies and orders that order the
// fabric write before the generic load pass.
func TestFenceChecker(t *testing.T) {
	type step func(th *kernel.Thread, dc fabric.DevComm, bar *fabric.BarrierSession)
	sync := func(o fabric.MemoryOrder, p, c fabric.ProxyType) step {
		return func(th *kernel.Thread, dc fabric.DevComm, bar *fabric.BarrierSession) {
			bar.Sync(th.WarpGroup(), o, p, c)
		}
	}
	cases := []struct {
		name     string
		producer []step // rank 0, after its flush
		consumer []step // rank 1
		want     string // "" = passes
	}{
		{"barrier acq_rel Fabric→Generic", []step{sync(fabric.AcqRel, fabric.ProxyFabric, fabric.ProxyGeneric)},
			[]step{sync(fabric.AcqRel, fabric.ProxyFabric, fabric.ProxyGeneric)}, ""},
		{"explicit fences around a Generic barrier",
			[]step{func(th *kernel.Thread, dc fabric.DevComm, bar *fabric.BarrierSession) {
				fabric.MemFence(th.WarpGroup(), dc, fabric.Release, fabric.ProxyFabric, fabric.ProxyGeneric, fabric.FenceScopeSys)
			}, sync(fabric.AcqRel, fabric.ProxyGeneric, fabric.ProxyGeneric)},
			[]step{sync(fabric.AcqRel, fabric.ProxyGeneric, fabric.ProxyGeneric), func(th *kernel.Thread, dc fabric.DevComm, bar *fabric.BarrierSession) {
				fabric.MemFence(th.WarpGroup(), dc, fabric.Acquire, fabric.ProxyFabric, fabric.ProxyGeneric, fabric.FenceScopeSys)
			}}, ""},
		{"barrier with the wrong proxies", []step{sync(fabric.AcqRel, fabric.ProxyGeneric, fabric.ProxyFabric)},
			[]step{sync(fabric.AcqRel, fabric.ProxyGeneric, fabric.ProxyFabric)},
			"missing ncclMemFence(release, Fabric, Generic, Sys) on rank 0 after its flush"},
		{"consumer acquires, producer never released", []step{sync(fabric.Acquire, fabric.ProxyFabric, fabric.ProxyGeneric)},
			[]step{sync(fabric.Acquire, fabric.ProxyFabric, fabric.ProxyGeneric)},
			"missing ncclMemFence(release, Fabric, Generic, Sys) on rank 0"},
		{"relaxed barrier", []step{sync(fabric.Relaxed, fabric.ProxyFabric, fabric.ProxyGeneric)},
			[]step{sync(fabric.Relaxed, fabric.ProxyFabric, fabric.ProxyGeneric)},
			"missing ncclMemFence(release, Fabric, Generic, Sys) on rank 0"},
		{"producer releases, consumer never acquires",
			[]step{sync(fabric.Release, fabric.ProxyFabric, fabric.ProxyGeneric)},
			[]step{sync(fabric.Release, fabric.ProxyFabric, fabric.ProxyGeneric)},
			"missing ncclMemFence(acquire, Fabric, Generic, Sys) on rank 1"},
		{"Cta-scope fence does not order window memory",
			[]step{func(th *kernel.Thread, dc fabric.DevComm, bar *fabric.BarrierSession) {
				fabric.MemFence(th.WarpGroup(), dc, fabric.AcqRel, fabric.ProxyFabric, fabric.ProxyGeneric, fabric.FenceScopeCta)
			}, sync(fabric.AcqRel, fabric.ProxyGeneric, fabric.ProxyGeneric)},
			[]step{sync(fabric.AcqRel, fabric.ProxyGeneric, fabric.ProxyGeneric)},
			"missing ncclMemFence(release, Fabric, Generic, Sys) on rank 0"},
	}
	// The same cases under the race detector, which orders by
	// happens-before and proxy fences instead of virtual time.
	for _, mode := range []string{"checker", "race"} {
		for _, tc := range cases {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				for seed := uint64(1); seed <= 3; seed++ {
					r := newRig(t, seed, job.FabricConfig{Debug: mode == "checker", Race: mode == "race"}, tc.want != "")
					data := pattern(4, 32)
					var got []byte
					r.launch(t, 0, 32, 16+32, func(th *kernel.Thread, dc fabric.DevComm) {
						w := th.WarpGroup()
						copy(th.Shared()[16:], data)
						cft := fabric.NewCft(w, dc, 0)
						bar := fabric.NewCftBarrierSession(w, dc, 0, false)
						le, off := fabric.GetPeerLeInfo(r.W[0], 0, 1, dc)
						cft.Put(w, le, off, 16, 32)
						cft.Submit(w)
						cft.Flush(w)
						for _, s := range tc.producer {
							s(th, dc, bar)
						}
					})
					r.launch(t, 1, 32, 64, func(th *kernel.Thread, dc fabric.DevComm) {
						bar := fabric.NewCftBarrierSession(th.WarpGroup(), dc, 0, false)
						for _, s := range tc.consumer {
							s(th, dc, bar)
						}
						if th.Lane() == 0 {
							got = make([]byte, 32)
							dc.Load(th, r.W[1], 0, got)
						}
					})
					err := r.Sim.Run()
					if tc.want == "" {
						require.NoError(t, err)
						require.Equal(t, data, got)
						continue
					}
					if mode == "race" {
						var re *race.Error
						require.True(t, errors.As(err, &re), "seed %d: %v", seed, err)
						rep := re.Reports[0]
						require.Equal(t, "fabric", rep.First.Kind)
						require.Equal(t, "put write", rep.First.Op)
						require.Equal(t, "generic load", rep.Second.Op)
						require.Contains(t, rep.First.Who, "rank 0's put to rank 1")
						require.Contains(t, rep.Second.Who, "GPU 1")
						require.Contains(t, rep.Missing, "acquire")
						continue
					}
					var fe *fabric.FenceError
					require.True(t, errors.As(err, &fe), "seed %d: %v", seed, err)
					require.Equal(t, 1, fe.Reader)
					require.Equal(t, 0, fe.Writer)
					require.Equal(t, fabric.ProxyFabric, fe.Proxy)
					require.ErrorContains(t, err, tc.want)
				}
			})
		}
	}
}

// Without debug the checker is off: the same racy kernel runs (memory is
// sequentially consistent in the emulator).
func TestFenceCheckerOffInRelease(t *testing.T) {
	r := newRig(t, 1, job.FabricConfig{}, true)
	r.launch(t, 0, 32, 48, func(th *kernel.Thread, dc fabric.DevComm) {
		w := th.WarpGroup()
		cft := fabric.NewCft(w, dc, 0)
		le, off := fabric.GetPeerLeInfo(r.W[0], 0, 1, dc)
		cft.Put(w, le, off, 16, 32)
		cft.Submit(w)
		cft.Flush(w)
		fabric.NewCftBarrierSession(w, dc, 0, false).Sync(w, fabric.Relaxed, fabric.ProxyGeneric, fabric.ProxyGeneric)
	})
	r.launch(t, 1, 32, 64, func(th *kernel.Thread, dc fabric.DevComm) {
		fabric.NewCftBarrierSession(th.WarpGroup(), dc, 0, false).Sync(th.WarpGroup(), fabric.Relaxed, fabric.ProxyGeneric, fabric.ProxyGeneric)
		dc.Load(th, r.W[1], 0, make([]byte, 32))
	})
	require.NoError(t, r.Sim.Run())
}

// Generic stores read by the fabric (a peer's get): the barrier must
// order Generic → Fabric.
func TestFenceCheckerGenericToFabric(t *testing.T) {
	cases := []struct {
		name string
		p, c fabric.ProxyType
		want string
	}{
		{"Generic→Fabric barrier", fabric.ProxyGeneric, fabric.ProxyFabric, ""},
		{"Fabric→Generic barrier", fabric.ProxyFabric, fabric.ProxyGeneric, "missing ncclMemFence(release, Generic, Fabric, Sys) on rank 1"},
	}
	for _, mode := range []string{"checker", "race"} {
		for _, tc := range cases {
			t.Run(mode+"/"+tc.name, func(t *testing.T) {
				r := newRig(t, 2, job.FabricConfig{Debug: mode == "checker", Race: mode == "race"}, tc.want != "")
				data := pattern(8, 16)
				var got []byte
				r.launch(t, 1, 32, 64, func(th *kernel.Thread, dc fabric.DevComm) {
					w := th.WarpGroup()
					if th.Lane() == 0 {
						dc.Store(th, r.W[1], 0, data)
					}
					fabric.NewCftBarrierSession(w, dc, 0, false).Sync(w, fabric.AcqRel, tc.p, tc.c)
				})
				r.launch(t, 0, 32, 64, func(th *kernel.Thread, dc fabric.DevComm) {
					w := th.WarpGroup()
					cft := fabric.NewCft(w, dc, 0)
					fabric.NewCftBarrierSession(w, dc, 0, false).Sync(w, fabric.AcqRel, tc.p, tc.c)
					le, off := fabric.GetPeerLeInfo(r.W[0], 0, 1, dc)
					cft.Get(w, le, off, 16, 16)
					cft.Submit(w)
					cft.Flush(w)
					if th.Lane() == 0 {
						got = append([]byte(nil), th.Shared()[16:32]...)
					}
				})
				err := r.Sim.Run()
				if tc.want == "" {
					require.NoError(t, err)
					require.Equal(t, data, got)
					return
				}
				if mode == "race" {
					var re *race.Error
					require.True(t, errors.As(err, &re), "%v", err)
					rep := re.Reports[0]
					require.Equal(t, "generic store", rep.First.Op)
					require.Equal(t, "Generic", rep.First.Proxy)
					require.Equal(t, "get read", rep.Second.Op)
					require.Equal(t, "Fabric", rep.Second.Proxy)
					require.Contains(t, rep.Missing, "ncclMemFence(release, Generic → Fabric, Sys)")
					return
				}
				var fe *fabric.FenceError
				require.True(t, errors.As(err, &fe), "%v", err)
				require.Equal(t, fabric.ProxyGeneric, fe.Proxy)
				require.Equal(t, fabric.ProxyFabric, fe.Reads)
				require.ErrorContains(t, err, tc.want)
			})
		}
	}
}
