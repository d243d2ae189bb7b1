package fabric_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/nic"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func gdaReqs(conn fabric.GdaConnection, bars int) fabric.DevCommRequirements {
	return fabric.DevCommRequirements{GinContextCount: 2, GinSignalCount: 8, GinCounterCount: 4,
		GdaConnectionType: conn, RailGdaBarrierCount: bars}
}

// MORI's world↔GDA rank mapping, on 3 nodes × 4 GPUs, seen from rank 5
// (node 1, LSA rank 1).
func TestGdaRankMapping(t *testing.T) {
	cases := []struct {
		conn       fabric.GdaConnection
		rank, n    int
		toWorld    []int // GDA index i → world rank
		notInTeams []int // world ranks with no GDA index
	}{
		{fabric.GdaConnectionFull, 5, 12, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, nil},
		{fabric.GdaConnectionRail, 1, 3, []int{1, 5, 9}, []int{0, 2, 3, 4, 6, 7, 8, 10, 11}},
		{fabric.GdaConnectionCrossNode, 4, 9, []int{0, 1, 2, 3, 5, 8, 9, 10, 11}, []int{4, 6, 7}},
		{fabric.GdaConnectionNone, 0, 0, nil, []int{0, 5, 11}},
	}
	for _, tc := range cases {
		t.Run(tc.conn.String(), func(t *testing.T) {
			r := newGinRig(t, ginOpts{nodes: 3, gpus: 4, reqs: gdaReqs(tc.conn, 0)})
			dc := r.dcs[5]
			var got []int
			for i := range tc.n {
				w := fabric.GdaPeerToWorld(dc, i)
				got = append(got, w)
				assert.Equal(t, i, fabric.WorldPeerToGda(dc, w), "round trip of GDA index %d", i)
			}
			assert.Equal(t, tc.toWorld, got)
			assert.Equal(t, -1, fabric.GdaPeerToWorld(dc, tc.n), "one past the team")
			for _, w := range tc.notInTeams {
				assert.Equal(t, -1, fabric.WorldPeerToGda(dc, w), "world rank %d", w)
			}
			r.launch(t, 5, 64, func(th *kernel.Thread, dc fabric.DevComm) {
				gda := fabric.NewGda(th, dc, 3) // context 3 of 2: QP 3 mod 2, as MORI's qpIdx
				if gda.Rank != tc.rank || gda.NRanks != tc.n {
					th.Fail("check", errors.New("ccoGda's rank/nRanks differ from MORI's constructor"))
				}
			})
			require.NoError(t, r.s.Run())
		})
	}
}

// gdaExchange: on 2 nodes × 2 GPUs every rank puts block bytes of W to its
// rail peer's V with ccoGda_SignalInc(0), twice (two halves), then waits
// for 1 twice (each wait consumes one, MORI's shadow) and checks V.
func TestGdaPutSignalShadow(t *testing.T) {
	const block = 16 << 10
	for _, conn := range []fabric.GdaConnection{fabric.GdaConnectionRail, fabric.GdaConnectionCrossNode, fabric.GdaConnectionFull} {
		t.Run(conn.String(), func(t *testing.T) {
			r := newGinRig(t, ginOpts{seed: 2, race: true, reqs: gdaReqs(conn, 0)})
			for rank := range r.n {
				require.NoError(t, r.sys.Write(rank, r.W[rank], 0, pattern(rank, 2*block)))
				r.launch(t, rank, 64, func(th *kernel.Thread, dc fabric.DevComm) {
					if th.ThreadIdx() != 0 {
						return
					}
					gda := fabric.NewGda(th, dc, 0)
					peer := (dc.Rank + dc.LsaSize) % dc.NRanks
					for h := range uint64(2) {
						gda.Put(th.ThreadGroup(), fabric.GdaTeamWorld, peer, r.V[peer], h*block, r.W[dc.Rank], h*block, block, fabric.GdaSignalInc(0))
					}
					gda.WaitSignal(th.ThreadGroup(), 0, 1, 64)
					gda.WaitSignal(th.ThreadGroup(), 0, 1, 64)
					if v := gda.ReadSignal(0, 64); v != 0 {
						th.Fail("check", errors.New("two waits of 1 consumed both signals: readSignal must be 0"))
					}
					buf := make([]byte, 2*block)
					dc.Load(th, r.V[dc.Rank], 0, buf)
					if !bytes.Equal(buf, pattern((dc.Rank+dc.LsaSize)%dc.NRanks, 2*block)) {
						th.Fail("check", errors.New("wrong data after the signals"))
					}
					gda.ResetSignal(0)
				})
			}
			require.NoError(t, r.s.Run())
		})
	}
}

// A third wait of 1 after two signals hangs: the shadow consumed them.
// The hang names MORI's call, the shadow and what is in flight.
func TestGdaWaitConsumesHang(t *testing.T) {
	r := newGinRig(t, ginOpts{seed: 1, reqs: gdaReqs(fabric.GdaConnectionRail, 0)})
	r.launch(t, 0, 64, func(th *kernel.Thread, dc fabric.DevComm) {
		if th.ThreadIdx() == 0 {
			gda := fabric.NewGda(th, dc, 0)
			gda.Signal(th.ThreadGroup(), fabric.GdaTeamGda, 1, fabric.GdaSignalAdd(3, 2))
		}
	})
	r.launch(t, 2, 64, func(th *kernel.Thread, dc fabric.DevComm) {
		if th.ThreadIdx() == 0 {
			gda := fabric.NewGda(th, dc, 0)
			gda.WaitSignal(th.ThreadGroup(), 3, 1, 64)
			gda.WaitSignal(th.ThreadGroup(), 3, 1, 64)
			gda.WaitSignal(th.ThreadGroup(), 3, 1, 64)
		}
	})
	err := r.s.Run()
	var he *sim.HangError
	require.True(t, errors.As(err, &he), "%v", err)
	assert.Contains(t, err.Error(), "ccoGda::waitSignal for its signal 3 to rise 1 past its shadow 2; it holds 2")
}

// ccoGda::flush waits for completions, which come back after the data has
// landed at the peer; ncclGin::flush returns once the source was read.
// After each, the kernel looks at the peer's memory.
func TestGdaFlushIsCompletion(t *testing.T) {
	const block = 64 << 10
	for _, api := range []string{"gda flush", "gda flushAsync+wait", "gda counter", "gin flush"} {
		t.Run(api, func(t *testing.T) {
			r := newGinRig(t, ginOpts{seed: 1, reqs: gdaReqs(fabric.GdaConnectionFull, 0)})
			require.NoError(t, r.sys.Write(0, r.W[0], 0, pattern(9, block)))
			landed := false
			r.launch(t, 0, 64, func(th *kernel.Thread, dc fabric.DevComm) {
				switch api {
				case "gin flush":
					gin := fabric.NewGin(th, dc, 0)
					if th.ThreadIdx() == 0 {
						gin.Put(th.ThreadGroup(), world(dc), 2, r.V[2], 0, r.W[0], 0, block, fabric.GinNone(), fabric.GinLocalNone())
					}
					gin.Flush(th.ThreadGroup())
				default:
					gda := fabric.NewGda(th, dc, 0)
					if th.ThreadIdx() == 0 {
						gda.Put(th.ThreadGroup(), fabric.GdaTeamWorld, 2, r.V[2], 0, r.W[0], 0, block, fabric.GdaNoSignal())
					}
					switch api {
					case "gda flush":
						gda.Flush(th.WarpGroup())
					case "gda counter":
						gda.Counter(th.WarpGroup(), &fabric.GdaCounterInc{Counter: 1})
						if th.ThreadIdx() == 0 && gda.ReadCounter(1, 56) != 1 {
							th.Fail("check", errors.New("counter did not rise"))
						}
					default:
						req := gda.FlushAsync(th.ThreadGroup(), fabric.GdaTeamWorld, 2)
						if th.ThreadIdx() == 0 {
							gda.Wait(th.WarpGroup(), req)
						}
					}
				}
				if th.ThreadIdx() == 0 {
					got, err := r.sys.Read(2, r.V[2], 0, block)
					landed = err == nil && bytes.Equal(got, pattern(9, block))
				}
			})
			require.NoError(t, r.s.Run())
			assert.Equal(t, api != "gin flush", landed, "the peer's data after %s", api)
		})
	}
}

// ccoGda::get lands its data here by the time flush returns.
func TestGdaGet(t *testing.T) {
	const block = 8 << 10
	r := newGinRig(t, ginOpts{seed: 4, race: true, reqs: gdaReqs(fabric.GdaConnectionRail, 0)})
	require.NoError(t, r.sys.Write(3, r.W[3], block, pattern(3, block)))
	r.launch(t, 1, 64, func(th *kernel.Thread, dc fabric.DevComm) {
		gda := fabric.NewGda(th, dc, 1)
		if th.ThreadIdx() == 0 {
			gda.Get(th.ThreadGroup(), fabric.GdaTeamGda, 1, r.W[3], block, r.V[1], 0, block)
		}
		gda.Flush(th.WarpGroup())
		if th.ThreadIdx() == 0 {
			buf := make([]byte, block)
			dc.Load(th, r.V[1], 0, buf)
			if !bytes.Equal(buf, pattern(3, block)) {
				th.Fail("check", errors.New("get's data not here after flush"))
			}
		}
	})
	require.NoError(t, r.s.Run())
}

// The GDA barrier over the rail team orders every rank's earlier puts (in
// order, RC) before the reads after it, round after round (the shadows
// consume each round's arrivals).
func TestGdaBarrierRail(t *testing.T) {
	const block = 4 << 10
	r := newGinRig(t, ginOpts{nodes: 3, gpus: 2, seed: 5, race: true, reqs: gdaReqs(fabric.GdaConnectionRail, 2)})
	for rank := range r.n {
		r.launch(t, rank, 64, func(th *kernel.Thread, dc fabric.DevComm) {
			gda := fabric.NewGda(th, dc, 0)
			buf := make([]byte, block)
			for round := range 3 {
				if th.ThreadIdx() == 0 {
					src := pattern(100*round+dc.Rank, block)
					dc.Store(th, r.W[dc.Rank], 0, src)
					for p := range gda.NRanks {
						if p != gda.Rank {
							gda.Put(th.ThreadGroup(), fabric.GdaTeamGda, p, r.V[fabric.GdaPeerToWorld(dc, p)], uint64(gda.Rank)*block, r.W[dc.Rank], 0, block, fabric.GdaNoSignal())
						}
					}
				}
				fabric.GdaBarrier(th.BlockGroup(), gda, dc.RailGdaBarrier, uint32(round%2))
				if th.ThreadIdx() == 0 {
					for p := range gda.NRanks {
						if p == gda.Rank {
							continue
						}
						dc.Load(th, r.V[dc.Rank], uint64(p)*block, buf)
						if !bytes.Equal(buf, pattern(100*round+fabric.GdaPeerToWorld(dc, p), block)) {
							th.Fail("check", errors.New("a peer's put is not visible after the barrier"))
						}
					}
				}
				// Nobody may overwrite V or W before everyone has read.
				fabric.GdaBarrier(th.BlockGroup(), gda, dc.RailGdaBarrier, uint32(round%2))
			}
		})
	}
	require.NoError(t, r.s.Run())
}

// MORI's barrier uses the GDA team; outside the rail team it may overrun
// the pool MORI sizes (refused) or, under CROSSNODE with several GPUs per
// node, land several ranks' arrivals on one slot and hang.
func TestGdaBarrierOutsideRail(t *testing.T) {
	run := func(conn fabric.GdaConnection, index uint32) error {
		r := newGinRig(t, ginOpts{seed: 1, reqs: gdaReqs(conn, 2)})
		for rank := range r.n {
			r.launch(t, rank, 64, func(th *kernel.Thread, dc fabric.DevComm) {
				fabric.GdaBarrier(th.BlockGroup(), fabric.NewGda(th, dc, 0), dc.RailGdaBarrier, index)
			})
		}
		return r.s.Run()
	}
	require.ErrorContains(t, run(fabric.GdaConnectionFull, 1), "barrier 1 over a GDA team of 4 ranks (CCO_GDA_CONNECTION_FULL) uses slots up to signal0+8, but MORI sizes the pool for the rail team: 2 barriers × 2 nodes = 4 slots")
	require.NoError(t, run(fabric.GdaConnectionFull, 0), "index 0 of FULL fits the pool on 2 nodes × 2 GPUs")
	require.ErrorContains(t, run(fabric.GdaConnectionCrossNode, 1), "uses slots up to signal0+6")
	err := run(fabric.GdaConnectionCrossNode, 0)
	var he *sim.HangError
	require.True(t, errors.As(err, &he), "%v", err)
	assert.Contains(t, err.Error(), "ccoGdaBarrierSession::sync (barrier 0, from GDA rank 1 = world rank 2) for its signal 9 to rise 1 past its shadow 0; it holds 0")
	assert.Contains(t, err.Error(), "all of a node's ranks arrive on one slot")
	require.NoError(t, run(fabric.GdaConnectionRail, 1))
}

// MORI's put-with-signal is a data WQE then an atomic WQE on one QP: on
// an in-order transport a later signal covers an earlier put; on an
// out-of-order one it does not, and the detector says so.
func TestGdaSignalOrdering(t *testing.T) {
	const block = 32 << 10
	ooo := nic.DefaultModel()
	ooo.Ordering, ooo.Jitter = nic.OutOfOrder, 4*sim.Microsecond
	for _, tc := range []struct {
		name string
		m    nic.Model
		ok   bool
	}{{"in order", nic.DefaultModel(), true}, {"out of order", ooo, false}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newGinRig(t, ginOpts{seed: 1, race: true, nic: &tc.m, nodes: 2, gpus: 1, reqs: gdaReqs(fabric.GdaConnectionCrossNode, 0)})
			r.launch(t, 0, 64, func(th *kernel.Thread, dc fabric.DevComm) {
				if th.ThreadIdx() == 0 {
					gda := fabric.NewGda(th, dc, 0)
					gda.Put(th.ThreadGroup(), fabric.GdaTeamWorld, 1, r.V[1], 0, r.W[0], 0, block, fabric.GdaNoSignal())
					gda.Put(th.ThreadGroup(), fabric.GdaTeamWorld, 1, r.V[1], block, r.W[0], block, block, fabric.GdaSignalInc(0))
				}
			})
			r.launch(t, 1, 64, func(th *kernel.Thread, dc fabric.DevComm) {
				if th.ThreadIdx() == 0 {
					gda := fabric.NewGda(th, dc, 0)
					gda.WaitSignal(th.ThreadGroup(), 0, 1, 64)
					dc.Load(th, r.V[1], 0, make([]byte, block))
				}
			})
			err := r.s.Run()
			if tc.ok {
				require.NoError(t, err)
				return
			}
			var re *race.Error
			require.True(t, errors.As(err, &re), "%v", err)
			assert.Contains(t, re.Error(), "ccoGda::put write")
			assert.Contains(t, re.Error(), "on an out-of-order transport a signal implies only its own put")
		})
	}
}

// Bad calls fail with an error naming what is wrong.
func TestGdaErrors(t *testing.T) {
	cases := []struct {
		name string
		conn fabric.GdaConnection
		fn   func(th *kernel.Thread, dc fabric.DevComm, r *ginRig)
		want string
	}{
		{"none", fabric.GdaConnectionNone, func(th *kernel.Thread, dc fabric.DevComm, r *ginRig) {
			fabric.NewGda(th, dc, 0).Signal(th.ThreadGroup(), fabric.GdaTeamWorld, 2, fabric.GdaSignalInc(0))
		}, "gdaConnType CCO_GDA_CONNECTION_NONE: no GDA QPs"},
		{"same node under crossnode", fabric.GdaConnectionCrossNode, func(th *kernel.Thread, dc fabric.DevComm, r *ginRig) {
			fabric.NewGda(th, dc, 0).Put(th.ThreadGroup(), fabric.GdaTeamWorld, 1, r.V[1], 0, r.W[0], 0, 8, fabric.GdaNoSignal())
		}, "rank 1 (node 0, LSA rank 1) is not connected to rank 0 (node 0, LSA rank 0) under CCO_GDA_CONNECTION_CROSSNODE"},
		{"off rail", fabric.GdaConnectionRail, func(th *kernel.Thread, dc fabric.DevComm, r *ginRig) {
			fabric.NewGda(th, dc, 0).Put(th.ThreadGroup(), fabric.GdaTeamWorld, 3, r.V[3], 0, r.W[0], 0, 8, fabric.GdaNoSignal())
		}, "not connected to rank 0"},
		{"no-signal signal", fabric.GdaConnectionFull, func(th *kernel.Thread, dc fabric.DevComm, r *ginRig) {
			fabric.NewGda(th, dc, 0).Signal(th.ThreadGroup(), fabric.GdaTeamWorld, 2, fabric.GdaNoSignal())
		}, "posts a fetch-add of 1 on the peer's signal 0"},
		{"thread flush", fabric.GdaConnectionFull, func(th *kernel.Thread, dc fabric.DevComm, r *ginRig) {
			fabric.NewGda(th, dc, 0).Flush(th.ThreadGroup())
		}, "requires at least a warp coop"},
		{"lsa team mode", fabric.GdaConnectionFull, func(th *kernel.Thread, dc fabric.DevComm, r *ginRig) {
			fabric.NewGda(th, dc, 0).Signal(th.ThreadGroup(), fabric.GdaTeamLsa, 1, fabric.GdaSignalInc(0))
		}, "CCO_TEAM_LSA"},
		{"signal id", fabric.GdaConnectionFull, func(th *kernel.Thread, dc fabric.DevComm, r *ginRig) {
			fabric.NewGda(th, dc, 0).Signal(th.ThreadGroup(), fabric.GdaTeamWorld, 2, fabric.GdaSignalInc(8))
		}, "signal 8 is not below the dev comm's gdaSignalCount 8"},
		{"single-node barrier", fabric.GdaConnectionFull, nil, "railGdaBarrier.nBarriers 0 (MORI enables the rail barriers only with GDA QPs and more than one node)"},
		{"putValue size", fabric.GdaConnectionFull, func(th *kernel.Thread, dc fabric.DevComm, r *ginRig) {
			fabric.NewGda(th, dc, 0).PutValue(th.ThreadGroup(), fabric.GdaTeamWorld, 2, r.V[2], 0, 1, 3, fabric.GdaNoSignal())
		}, "a value of 3 bytes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := ginOpts{reqs: gdaReqs(tc.conn, 1)}
			if tc.fn == nil {
				o.nodes, o.gpus = 1, 2
			}
			r := newGinRig(t, o)
			r.launch(t, 0, 64, func(th *kernel.Thread, dc fabric.DevComm) {
				if tc.fn == nil {
					fabric.NewGdaBarrierSession(th.BlockGroup(), fabric.NewGda(th, dc, 0), dc.RailGdaBarrier, 0)
					return
				}
				tc.fn(th, dc, r)
			})
			require.ErrorContains(t, r.s.Run(), tc.want)
		})
	}
}
