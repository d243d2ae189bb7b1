package fabric_test

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/race"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var anvil = map[string]string{"NCCL_GIN_TYPE": "7"}

// sdmaRig is one node of gpus ranks with GIN over SDMA.
func sdmaRig(t testing.TB, gpus int, seed uint64, raceOn bool, m model.Model) *ginRig {
	return newGinRig(t, ginOpts{seed: seed, race: raceOn, nodes: 1, gpus: gpus, env: anvil, sdma: m})
}

// The all-to-all of gin_test.go over SDMA: every byte lands, no NIC
// carries any of it, and one seed gives one run.
func TestGinSdmaAllToAll(t *testing.T) {
	const block = 16 << 10
	var digests []string
	for range 2 {
		r := sdmaRig(t, 4, 3, true, nil)
		ginAllToAll(t, r, block, fabric.GinStrongSignalInc)
		require.NoError(t, r.s.Run())
		for rank := range r.n {
			for q := range r.n {
				if q == rank {
					continue
				}
				got, err := r.sys.Read(rank, r.V[rank], uint64(q)*block, block)
				require.NoError(t, err)
				require.True(t, bytes.Equal(pattern(q*r.n+rank, block), got), "rank %d block from %d", rank, q)
			}
		}
		require.Equal(t, fabric.GinTypeAnvilSdma, r.sys.GinType())
		require.Len(t, r.sys.SdmaNodes(), 1)
		for rank := range r.n {
			assert.Zero(t, r.sys.Network().NIC(rank).Sent(), "intra-node GIN over SDMA sends nothing over rank %d's NIC", rank)
		}
		digests = append(digests, fmt.Sprintf("%x@%v", r.s.Digest(), r.s.Now()))
	}
	require.Equal(t, digests[0], digests[1], "one seed, one run")
}

// twoPuts: rank 0 puts A (W[0:block], on GIN context aCtx) then B (on
// context 0) to rank 1's V with the actions given; rank 1 waits on signal 0
// and loads A. With check the load must see all of A.
func twoPuts(t testing.TB, r *ginRig, block uint64, aAction, bAction fabric.RemoteAction, bSignalOnly, counterWait, check bool, aCtx int) {
	require.NoError(t, r.sys.Write(0, r.W[0], 0, pattern(7, int(2*block))))
	r.launch(t, 0, 64, func(th *kernel.Thread, dc fabric.DevComm) {
		if th.ThreadIdx() != 0 {
			return
		}
		gin := fabric.NewGin(th, dc, 0)
		la := fabric.GinLocalNone()
		if counterWait {
			la = fabric.GinCounterInc(0)
		}
		fabric.NewGin(th, dc, aCtx).Put(th.ThreadGroup(), world(dc), 1, r.V[1], 0, r.W[0], 0, block, aAction, la)
		if counterWait {
			fabric.NewGin(th, dc, aCtx).WaitCounter(th.ThreadGroup(), 0, 1, 56)
		}
		if bSignalOnly {
			gin.Signal(th.ThreadGroup(), world(dc), 1, bAction)
		} else {
			gin.Put(th.ThreadGroup(), world(dc), 1, r.V[1], block, r.W[0], block, block, bAction, fabric.GinLocalNone())
		}
	})
	r.launch(t, 1, 64, func(th *kernel.Thread, dc fabric.DevComm) {
		if th.ThreadIdx() != 0 {
			return
		}
		gin := fabric.NewGin(th, dc, 0)
		gin.WaitSignal(th.ThreadGroup(), 0, 1, 64)
		buf := make([]byte, block)
		dc.Load(th, r.V[1], 0, buf)
		if check && !bytes.Equal(buf, pattern(7, int(2*block))[:block]) {
			th.Fail("check", errors.New("put A's data not all there after the signal"))
		}
	})
}

// Each documented ordering on the SDMA backend: a program relying on it
// is clean, one relying on more is reported by the detector, whose edges
// are GIN's rules carried by the engine's accesses. The queue is in
// order, so the over-reliant programs still read right data in release
// runs (as on an in-order NIC): only the detector tells. A strong signal
// covers only its own context: another context is another queue, whose
// put may land before or after the load (release data is not checked).
func TestGinSdmaOrderingRules(t *testing.T) {
	const block = 8 << 10
	cases := []struct {
		name    string
		a, b    fabric.RemoteAction
		sigOnly bool
		counter bool
		relies  bool
		aCtx    int
	}{
		{"strong signal covers the earlier put", fabric.GinNone(), fabric.GinStrongSignalInc(0), false, false, true, 0},
		{"weak signal covers only its own put", fabric.GinNone(), fabric.GinWeakSignalInc(0), false, false, false, 0},
		{"weak signal on the put itself", fabric.GinWeakSignalInc(0), fabric.GinNone(), false, false, true, 0},
		{"strong signal-only op after the put", fabric.GinNone(), fabric.GinStrongSignalInc(0), true, false, true, 0},
		{"weak signal-only op after the put", fabric.GinNone(), fabric.GinWeakSignalInc(0), true, false, false, 0},
		{"counter is local completion only", fabric.GinNone(), fabric.GinWeakSignalInc(0), true, true, false, 0},
		{"strong signal covers only its own context", fabric.GinNone(), fabric.GinStrongSignalInc(0), false, false, false, 1},
	}
	for _, m := range []model.Model{nil, model.GFX950Preset()} {
		arch := "mi355x (COPY + ATOMIC)"
		if m != nil {
			arch = "gfx950 (fused)"
		}
		for _, tc := range cases {
			t.Run(arch+"/"+tc.name, func(t *testing.T) {
				r := sdmaRig(t, 2, 1, true, m)
				twoPuts(t, r, block, tc.a, tc.b, tc.sigOnly, tc.counter, false, tc.aCtx)
				err := r.s.Run()
				if tc.relies {
					require.NoError(t, err)
				} else {
					var re *race.Error
					require.True(t, errors.As(err, &re), "the detector reports the missing ordering: %v", err)
					assert.Contains(t, re.Error(), "ncclGin::put write (COPY")
					assert.Contains(t, re.Error(), fmt.Sprintf("sdma gpu0→gpu1 q%d", tc.aCtx))
					if tc.aCtx == 0 { // another context's put may land before or after the load
						assert.Contains(t, re.Error(), "A weak signal implies only its own put")
					}
				}
				for seed := uint64(1); seed <= 3 && tc.aCtx == 0; seed++ { // one queue: in order
					r := sdmaRig(t, 2, seed, false, m)
					twoPuts(t, r, block, tc.a, tc.b, tc.sigOnly, tc.counter, true, 0)
					require.NoError(t, r.s.Run(), "seed %d: the in-order queue lands A first", seed)
				}
			})
		}
	}
}

// flush is the queue's drain of the put's source reads: overwriting the
// source after flush is ordered, before it races with the COPY's reads.
func TestGinSdmaFlushSourceReuse(t *testing.T) {
	const block = 32 << 10
	for _, mode := range []string{"flush", "counter", "none"} {
		flush := mode != "none"
		r := sdmaRig(t, 2, 1, true, nil)
		require.NoError(t, r.sys.Write(0, r.W[0], 0, pattern(3, block)))
		r.launch(t, 0, 64, func(th *kernel.Thread, dc fabric.DevComm) {
			if th.ThreadIdx() != 0 {
				return
			}
			gin := fabric.NewGin(th, dc, 0)
			la := fabric.GinLocalNone()
			if mode == "counter" {
				la = fabric.GinCounterInc(1)
			}
			gin.Put(th.ThreadGroup(), world(dc), 1, r.V[1], 0, r.W[0], 0, block, fabric.GinStrongSignalInc(0), la)
			switch mode {
			case "flush":
				gin.Flush(th.ThreadGroup())
			case "counter": // local completion: the source may be reused
				gin.WaitCounter(th.ThreadGroup(), 1, 1, 56)
			}
			dc.Store(th, r.W[0], 0, make([]byte, block))
		})
		err := r.s.Run()
		if flush {
			require.NoError(t, err)
			got, err := r.sys.Read(1, r.V[1], 0, block)
			require.NoError(t, err)
			assert.Equal(t, pattern(3, block), got)
			continue
		}
		var re *race.Error
		require.True(t, errors.As(err, &re), "%v", err)
		assert.Contains(t, re.Error(), "ncclGin::put source read (COPY source read")
		assert.Contains(t, re.Error(), "ncclGin::flush (or waitCounter")
	}
}

// The ring bytes the backend writes decode as the packets GIN lowers to:
// the fused COPY_LINEAR_WAIT_SIGNAL with its signal block on gfx950,
// COPY_LINEAR then ATOMIC ADD64 on the mi355x preset (which, like MORI's
// cco.hpp, posts only the two-packet form); WRITE_LINEAR for putValue and
// a lone ATOMIC for signal.
func TestGinSdmaRingPackets(t *testing.T) {
	for _, tc := range []struct {
		name  string
		m     model.Model
		kinds []ring.Kind
	}{
		{"mi355x", nil, []ring.Kind{ring.KindCopy, ring.KindAtomic, ring.KindWrite, ring.KindAtomic, ring.KindAtomic}},
		{"gfx950", model.GFX950Preset(), []ring.Kind{ring.KindCopyWaitSignal, ring.KindWrite, ring.KindAtomic, ring.KindAtomic}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := sdmaRig(t, 2, 1, false, tc.m)
			r.launch(t, 0, 64, func(th *kernel.Thread, dc fabric.DevComm) {
				if th.ThreadIdx() != 0 {
					return
				}
				gin := fabric.NewGin(th, dc, 0)
				gin.Put(th.ThreadGroup(), world(dc), 1, r.V[1], 64, r.W[0], 128, 4096, fabric.GinStrongSignalAdd(2, 5), fabric.GinLocalNone())
				gin.PutValue(th.ThreadGroup(), world(dc), 1, r.V[1], 8, 0x1122334455667788, 8, fabric.GinWeakSignalInc(3), fabric.GinLocalNone())
				gin.Signal(th.ThreadGroup(), world(dc), 1, fabric.GinStrongSignalInc(4))
			})
			require.NoError(t, r.s.Run())
			n := r.sys.SdmaNodes()[0]
			q := n.LookupQueue(0, 1, 0)
			require.NotNil(t, q)
			sp := n.Memory().Space
			w, v := sp.SliceBase(0), sp.SliceBase(1)
			var got []ring.Packet
			end := q.Ring().Doorbell()
			for pos := uint64(0); pos < end; {
				var p ring.Packet
				k, err := q.Ring().DecodeAt(&p, pos, end-pos)
				require.NoError(t, err)
				if p.Kind != ring.KindNop {
					got = append(got, p)
				}
				pos += uint64(k)
			}
			var kinds []ring.Kind
			for _, p := range got {
				kinds = append(kinds, p.Kind)
			}
			require.Equal(t, tc.kinds, kinds)
			// The copy's addresses are the ranks' window offsets in the
			// node's flat space; the signal is the peer's slot.
			dstV, srcW := v+r.V[1].McOffset4K<<12+64, w+r.W[0].McOffset4K<<12+128
			assert.Equal(t, dstV, got[0].Dst)
			assert.Equal(t, srcW, got[0].Src)
			assert.Equal(t, uint64(4096), got[0].CopyBytes())
			if tc.name == "gfx950" {
				require.True(t, got[0].HasSignal)
				assert.Equal(t, ring.AtomicOpAdd64, got[0].Signal.Op)
				assert.Equal(t, uint64(5), got[0].Signal.Data)
				assert.False(t, got[0].HasWait)
			} else {
				assert.Equal(t, ring.AtomicOpAdd64, got[1].AtomicOp)
				assert.Equal(t, uint64(5), got[1].Data)
			}
			wr := got[len(got)-3]
			assert.Equal(t, v+r.V[1].McOffset4K<<12+8, wr.Dst)
			assert.Equal(t, []uint32{0x55667788, 0x11223344}, wr.Payload)
			// The data and signals landed where the packets said.
			b, err := r.sys.Read(1, r.V[1], 8, 8)
			require.NoError(t, err)
			assert.Equal(t, []byte{0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}, b)
		})
	}
}

// A waiter whose signal sits behind a dead SDMA queue: the hang report
// names the queue and its engine as what the waiter waits for.
func TestGinSdmaHangReport(t *testing.T) {
	r := newGinRig(t, ginOpts{seed: 1, nodes: 1, gpus: 2, env: anvil, inject: &engine.InjectPlan{DeadQueues: []engine.QueueID{{GPU: 0, Peer: 1, Q: 0}}}})
	r.launch(t, 0, 64, func(th *kernel.Thread, dc fabric.DevComm) {
		if th.ThreadIdx() == 0 {
			fabric.NewGin(th, dc, 0).Put(th.ThreadGroup(), world(dc), 1, r.V[1], 0, r.W[0], 0, 4096, fabric.GinStrongSignalInc(0), fabric.GinLocalNone())
		}
	})
	r.launch(t, 1, 64, func(th *kernel.Thread, dc fabric.DevComm) {
		if th.ThreadIdx() == 0 {
			fabric.NewGin(th, dc, 0).WaitSignal(th.ThreadGroup(), 0, 1, 64)
		}
	})
	err := r.s.Run()
	var he *sim.HangError
	require.True(t, errors.As(err, &he), "%v", err)
	txt := he.Text()
	assert.Contains(t, txt, "ncclGin::waitSignal: rank 1's signal 0 to reach 1 (64 bits); it holds 0")
	assert.Contains(t, txt, "ncclGin::put of 4096 B to rank 1")
	assert.Contains(t, txt, "on sdma gpu0→gpu1 q0 (engine")
	require.NotEmpty(t, he.Causes)
	assert.Equal(t, fabric.CauseGinSignalWaits, he.Causes[0].Kind)
}

// NCCL_GIN_TYPE is read as RCCL numbers it; other values are refused.
func TestGinTypeSelection(t *testing.T) {
	for _, tc := range []struct {
		v    string
		want int
		err  string
	}{{"", 0, ""}, {"2", 2, ""}, {"7", 7, ""}, {"x", 0, "NCCL_GIN_TYPE"}, {"9", 0, "want an integer in [1, 7]"}} {
		sys, err := fabric.NewSystem(sim.New(sim.Config{}), fabric.Config{Topology: fabric.Topology{NRanks: 2, LsaSize: 2}, Env: map[string]string{"NCCL_GIN_TYPE": tc.v}})
		if tc.err != "" {
			require.ErrorContains(t, err, tc.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, tc.want, sys.GinType())
	}
	// Under 7, a peer on another node still goes over the NIC.
	r := newGinRig(t, ginOpts{seed: 1, nodes: 2, gpus: 1, env: anvil})
	r.launch(t, 0, 64, func(th *kernel.Thread, dc fabric.DevComm) {
		if th.ThreadIdx() == 0 {
			fabric.NewGin(th, dc, 0).Put(th.ThreadGroup(), world(dc), 1, r.V[1], 0, r.W[0], 0, 4096, fabric.GinStrongSignalInc(0), fabric.GinLocalNone())
		}
	})
	require.NoError(t, r.s.Run())
	assert.Equal(t, uint64(4096), r.sys.Network().NIC(0).Sent())
	assert.Nil(t, r.sys.SdmaNodes()[0], "no intra-node operation: no SDMA node was made")
}

// A get over SDMA is a COPY from the peer: flush means its data is here
// (the load after it is ordered), a load without flush races the COPY.
func TestGinSdmaGetFlush(t *testing.T) {
	const block = 8 << 10
	for _, flush := range []bool{true, false} {
		r := sdmaRig(t, 2, 1, true, nil)
		require.NoError(t, r.sys.Write(1, r.W[1], 0, pattern(5, block)))
		var got []byte
		r.launch(t, 0, 64, func(th *kernel.Thread, dc fabric.DevComm) {
			if th.ThreadIdx() != 0 {
				return
			}
			gin := fabric.NewGin(th, dc, 0)
			gin.Get(th.ThreadGroup(), world(dc), 1, r.W[1], 0, r.V[0], 0, block)
			if flush {
				gin.Flush(th.ThreadGroup())
			}
			got = make([]byte, block)
			dc.Load(th, r.V[0], 0, got)
		})
		err := r.s.Run()
		if flush {
			require.NoError(t, err)
			assert.Equal(t, pattern(5, block), got)
			continue
		}
		var re *race.Error
		require.True(t, errors.As(err, &re), "%v", err)
		assert.Contains(t, re.Error(), "ncclGin::get write (COPY destination write on sdma gpu0→gpu1 q0)")
	}
}
