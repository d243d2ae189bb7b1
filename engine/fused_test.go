package engine

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// rawStream is a producer that writes packets back to back, as ROCr does
// (no unit padding), then publishes the write pointer and rings once.
func rawStream(r *rig, q *Queue, at sim.Time, pkts ...ring.Packet) []byte {
	var raw []byte
	for i := range pkts {
		raw = pkts[i].AppendTo(raw)
	}
	r.s.Spawn("producer", func(a *sim.Actor) {
		a.Sleep(at)
		q.Ring().Write(0, raw)
		q.StoreWptr(uint64(len(raw)))
		q.RingDoorbell(uint64(len(raw)))
	})
	return raw
}

// A foreign gfx1250 stream mixing a compact fused copy (wait + signal), a
// multicast with a signal, a compact copy+signal and a plain copy runs
// byte-exact: every destination holds the source, the signal counts three,
// and the wait held the first packet until the flag was set.
func TestForeignFusedStreamGFX1250(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2, Model: model.GFX1250Preset()})
	require.Equal(t, ring.GFX1250, r.n.Config().Ring.Dialect)
	const n = 4096
	src := r.alloc(0, n)
	dsts := make([]uint64, 6)
	for i := range dsts {
		dsts[i] = r.alloc(i%2, n)
	}
	flag, sig := r.alloc(1, 64), r.alloc(0, 64)
	data := pattern(n, 0x5a)
	require.NoError(t, r.n.Memory().Write(src, data))
	q := r.queue(0, 1, 0)
	s := &ring.SignalBlock{Op: ring.AtomicOpAdd64NoRtn, Addr: sig, Data: 1}
	mc, err := ring.Multicast(dsts[1:4], src, n, nil, s)
	require.NoError(t, err)
	pkts := []ring.Packet{
		ring.CopyWaitSignal(ring.GFX1250, dsts[0], src, n, &ring.WaitBlock{Func: ring.CmpEQ, Addr: flag, Ref: 1, Mask: ^uint64(0)}, s),
		mc,
		ring.CopyWaitSignal(ring.GFX1250, dsts[4], src, n, nil, s),
		ring.Copy(dsts[5], src, n),
	}
	raw := rawStream(r, q, 0, pkts...)
	assert.Equal(t, 76+4*(5+6+5)+48+28, len(raw), "compact lengths")
	var setAt sim.Time
	r.s.Spawn("cu", func(a *sim.Actor) {
		a.Sleep(20 * sim.Microsecond)
		v, _ := r.n.Memory().Load64(dsts[0])
		assert.Zero(t, v, "the wait holds the copy until the flag is set")
		setAt = a.Now()
		require.NoError(t, r.n.Memory().Store64(flag, 1))
	})
	require.NoError(t, r.s.Run())
	for i, d := range dsts {
		got := make([]byte, n)
		require.NoError(t, r.n.Memory().Read(d, got))
		assert.Equal(t, data, got, "destination %d", i)
	}
	v, err := r.n.Memory().Load64(sig)
	require.NoError(t, err)
	assert.Equal(t, uint64(3), v, "one signal per signalling packet")
	assert.Equal(t, uint64(len(raw)), q.Ring().Rptr())
	assert.Greater(t, r.s.Now(), setAt)
}

// The same fused packet on gfx950 is 19 dwords; on gfx950 a multicast is an
// illegal packet whose fault names the architecture.
func TestFusedGFX950AndIllegalMulticast(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2})
	require.Equal(t, ring.GFX950, r.n.Config().Ring.Dialect, "mi355x is gfx950")
	src, dst, sig := r.alloc(0, 256), r.alloc(1, 256), r.alloc(0, 64)
	require.NoError(t, r.n.Memory().Write(src, pattern(256, 1)))
	q := r.queue(0, 1, 0)
	mc, err := ring.Multicast([]uint64{dst}, src, 256, nil, nil)
	require.NoError(t, err)
	raw := rawStream(r, q, 0,
		ring.CopyWaitSignal(ring.GFX950, dst, src, 256, nil, &ring.SignalBlock{Op: ring.AtomicOpAdd64, Addr: sig, Data: 7}),
		mc)
	require.Equal(t, 76+28, len(raw))
	err = r.s.Run()
	got := make([]byte, 256)
	require.NoError(t, r.n.Memory().Read(dst, got))
	assert.Equal(t, pattern(256, 1), got)
	v, _ := r.n.Memory().Load64(sig)
	assert.Equal(t, uint64(7), v)
	require.NotNil(t, q.Fault(), "run: %v", err)
	assert.Equal(t, FaultIllegal, q.Fault().Kind)
	assert.Contains(t, q.Fault().Detail, "COPY_LINEAR_MULTICAST: a gfx1250 packet, gfx950 does not have it")
	assert.Equal(t, uint64(76), q.Ring().Rptr(), "the fused packet retired, the multicast did not")
}

// A swap exchanges its ranges; an indirect copy reads its addresses
// through pointers (gfx1250).
func TestSwapAndIndirect(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 1, Model: model.GFX1250Preset()})
	mem := r.n.Memory()
	a, b, c := r.alloc(0, 128), r.alloc(0, 128), r.alloc(0, 128)
	ptrs := r.alloc(0, 64)
	require.NoError(t, mem.Write(a, pattern(128, 1)))
	require.NoError(t, mem.Write(b, pattern(128, 2)))
	require.NoError(t, mem.Store64(ptrs, a))
	require.NoError(t, mem.Store64(ptrs+8, c))
	ind := ring.Packet{Kind: ring.KindCopyWaitSignal, Compact: true, IndirectSrc: true, IndirectDst: true, Count: 127, Src: ptrs, Dst: ptrs + 8}
	q := r.queue(0, 0, 0)
	pkts := []ring.Packet{ring.Swap(ring.GFX1250, a, b, 128, nil, nil)}
	var hdr ring.Packet
	_, err := ring.Decode(&hdr, func() []byte { p := ind; return p.AppendTo(nil) }(), ring.GFX1250)
	require.NoError(t, err)
	pkts = append(pkts, hdr)
	rawStream(r, q, 0, pkts...)
	require.NoError(t, r.s.Run())
	got := make([]byte, 128)
	require.NoError(t, mem.Read(a, got))
	assert.Equal(t, pattern(128, 2), got, "A holds B's bytes")
	require.NoError(t, mem.Read(b, got))
	assert.Equal(t, pattern(128, 1), got, "B holds A's bytes")
	require.NoError(t, mem.Read(c, got))
	assert.Equal(t, pattern(128, 2), got, "the indirect copy read A (after the swap) through the pointer and wrote C")
}

// A raw COPY whose byte count overflows the 30-bit count is encoded as
// hardware truncates it: 4 GiB asks for 2^32 bytes and moves 2^30.
func TestRawCopyTruncates(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2})
	mem := r.n.Memory()
	src, err := mem.AllocPhantom(0, 4<<30, "src")
	require.NoError(t, err)
	dst, err := mem.AllocPhantom(1, 4<<30, "dst")
	require.NoError(t, err)
	p := ring.Copy(dst, src, 4<<30)
	assert.Equal(t, uint64(1<<30), p.CopyBytes())
	assert.ErrorContains(t, ring.CheckCopyBytes(4<<30), "4294967296 B COPY: the 30-bit count field holds at most 1073741824 B; the engine moves 1073741824 B")
	assert.NoError(t, ring.CheckCopyBytes(1<<30))
	q := r.queue(0, 1, 0)
	r.s.Spawn("producer", func(a *sim.Actor) { require.NoError(t, post(a, q, p)) })
	require.NoError(t, r.s.Run())
	assert.Equal(t, float64(1<<30), q.c.bytes.value(), "hardware moves what the truncated count says")
}

// KFD's per-engine cap: gfx950's loopback channels all use engine 0, so a
// GPU's ninth loopback queue (a second comm's) is refused naming the
// engine and the cap; a destroyed queue frees its slot. gfx1250 holds 6:
// its loopback channels spread over the engines, so the cap is shown on a
// peer link, whose even channels share engine 2.
func TestQueueCapAndDestroy(t *testing.T) {
	for _, tc := range []struct {
		m               model.Model
		cap, peer, step int
		engine          int
	}{{model.MI355X(), 8, 0, 1, 0}, {model.GFX1250Preset(), 6, 1, 2, 2}} {
		t.Run(tc.m.Name(), func(t *testing.T) {
			r := newRig(t, 1, Config{GPUs: 2, Model: tc.m})
			ch := func(i int) (int, int) { c := i * tc.step; return c % 8, c / 8 }
			var qs []*Queue
			for i := 0; i < tc.cap; i++ {
				q, gen := ch(i)
				qu, err := r.n.CommQueue(0, tc.peer, q, gen)
				require.NoError(t, err)
				require.Equal(t, tc.engine, qu.Engine().ID())
				qs = append(qs, qu)
			}
			q, gen := ch(tc.cap)
			_, err := r.n.CommQueue(0, tc.peer, q, gen)
			require.Error(t, err)
			assert.Contains(t, err.Error(), "sdma gpu0 engine "+itoa(tc.engine)+" already holds "+itoa(tc.cap)+" queues, the most one engine holds")
			require.NoError(t, r.n.DestroyQueue(qs[0]))
			assert.Len(t, r.n.Queues(), tc.cap-1)
			qu, err := r.n.CommQueue(0, tc.peer, q, gen)
			require.NoError(t, err, "the destroyed queue's slot is free")
			assert.Equal(t, tc.engine, qu.Engine().ID())
			assert.ErrorContains(t, r.n.DestroyQueue(qs[0]), "no such queue")
		})
	}
}

// A queue with work in flight is not destroyed.
func TestDestroyBusyQueue(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 1})
	flag := r.alloc(0, 64)
	q := r.queue(0, 0, 0)
	r.s.Spawn("p", func(a *sim.Actor) {
		require.NoError(t, post(a, q, ring.Poll(flag, 1, ^uint32(0), ring.CmpEQ, 4, ring.RetryForever)))
		a.Sleep(sim.Microsecond * 10)
		assert.ErrorContains(t, r.n.DestroyQueue(q), "work in flight")
		require.NoError(t, r.n.Memory().Store32(flag, 1))
	})
	require.NoError(t, r.s.Run())
	require.NoError(t, r.n.DestroyQueue(q))
	assert.Empty(t, r.n.Queues())
}

func itoa(v int) string { return fmt.Sprint(v) }
