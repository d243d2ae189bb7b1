package cco_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// postWaitPutPtrRun runs one postWaitMemPutPtr of bytes from rank 0 to rank
// 1 whose flag already holds, with a remote signal, and returns the ring's
// packet kinds, the time until quiet returned and the received bytes.
func postWaitPutPtrRun(t *testing.T, m model.Model, bytes uint64) (kinds []ring.Kind, took sim.Time, r *rig) {
	t.Helper()
	r = newRig(t, 1, rigOpts{ranks: 2, model: m})
	r.fillF32(r.send[0], 0, int(bytes/4), func(i int) float32 { return float32(i) + 0.5 })
	flag := r.recv[0].LocalPtr(bytes) // 8-byte aligned, past the data
	require.NoError(t, r.mem.Store32(flag, 1))
	var start, end sim.Time
	r.launch(0, 1, 1, func(th *kernel.Thread, s *cco.Sdma) {
		start = th.Now()
		s.PostWaitMemPutPtr(1, 0, r.recv[0], bytes, 1, cco.SdmaCmpEq, 0xFFFFFFFF,
			r.recv[1].LsaPtr(1, 0), r.send[0].LocalPtr(0), bytes, cco.RemoteSignal)
		s.Quiet(1)
		end = th.Now()
	})
	require.NoError(t, r.s.Run())
	return ringKinds(t, esideRing(t, r, 0, 1, 0)), end - start, r
}

// On gfx950 postWaitMemPutPtr is one COPY_LINEAR_WAIT_SIGNAL (the wait, the
// copy and the remote signal); on the mi355x preset (MORI's cco.hpp issuer)
// it stays POLL + COPY + ATOMIC. Both land every byte and signal once; the
// fused form is faster by the gaps of the two packets it replaces.
func TestPostWaitPutPtrLowering(t *testing.T) {
	const bytes = 4096
	two, tTwo, r2 := postWaitPutPtrRun(t, model.MI355X(), bytes)
	assert.Equal(t, []ring.Kind{ring.KindPoll, ring.KindCopy, ring.KindAtomic}, two)
	one, tOne, r1 := postWaitPutPtrRun(t, model.GFX950Preset(), bytes)
	assert.Equal(t, []ring.Kind{ring.KindCopyWaitSignal}, one)
	for _, r := range []*rig{r1, r2} {
		assert.Equal(t, uint64(1), r.signal(1, 0, 0), "one signal per call")
		got := make([]byte, bytes)
		require.NoError(t, r.mem.Read(r.recv[1].LocalPtr(0), got))
		want := make([]byte, bytes)
		require.NoError(t, r.mem.Read(r.send[0].LocalPtr(0), want))
		assert.Equal(t, want, got)
	}
	m := model.MI355X()
	saved := m.Cost(model.PacketGap(ring.KindPoll)) + m.Cost(model.PacketGap(ring.KindAtomic))
	assert.Equal(t, saved, tTwo-tOne, "two-packet %v, fused %v: the POLL's and the ATOMIC's gaps are saved", tTwo, tOne)
	t.Logf("postWaitMemPutPtr 4 KiB, flag set: two-packet %v, fused %v", tTwo, tOne)
}

// broadcastRun: rank 0 sends bytes to ranks 1 and 2, by one putBroadcast
// (two is false) or two puts, each with a remote signal; it returns the
// time until quiet returned and the ring's packet kinds.
func broadcastRun(t *testing.T, m model.Model, bytes uint64, two bool) (sim.Time, []ring.Kind) {
	t.Helper()
	r := newRig(t, 1, rigOpts{ranks: 3, model: m, winBytes: bytes})
	r.fillF32(r.send[0], 0, int(bytes/4), func(i int) float32 { return float32(i) })
	var start, end sim.Time
	r.launch(0, 1, 1, func(th *kernel.Thread, s *cco.Sdma) {
		start = th.Now()
		if two {
			s.Put(1, r.recv[0], 0, r.send[0], 0, bytes, 0, cco.RemoteSignal)
			s.Put(2, r.recv[0], 0, r.send[0], 0, bytes, 0, cco.RemoteSignal)
			s.Quiet(1)
			s.Quiet(2)
		} else {
			s.PutBroadcast(1, r.recv[0], 0, 2, r.recv[0], 0, r.send[0], 0, bytes, 0, cco.RemoteSignal)
			s.Quiet(1)
		}
		end = th.Now()
	})
	require.NoError(t, r.s.Run())
	want := make([]byte, bytes)
	require.NoError(t, r.mem.Read(r.send[0].LocalPtr(0), want))
	for _, peer := range []int{1, 2} {
		got := make([]byte, bytes)
		require.NoError(t, r.mem.Read(r.recv[peer].LocalPtr(0), got))
		assert.Equal(t, want, got, "rank %d", peer)
		assert.Equal(t, uint64(1), r.signal(peer, 0, 0), "rank %d: one signal", peer)
	}
	return end - start, ringKinds(t, esideRing(t, r, 0, 1, 0))
}

// On gfx1250 putBroadcast is one COPY_LINEAR_MULTICAST that carries the
// first remote signal; on mi355x a broadcast COPY and two ATOMICs. The data
// moves the same way (one read, the two writes one after the other at the
// broadcast stream rate), so the multicast saves one ATOMIC's gap; two
// separate puts use the full link rate per stream but pay two packets more.
func TestPutBroadcastLowering(t *testing.T) {
	for _, bytes := range []uint64{4096, 1 << 20} {
		tB, kB := broadcastRun(t, model.MI355X(), bytes, false)
		assert.Equal(t, []ring.Kind{ring.KindBroadcastCopy, ring.KindAtomic, ring.KindAtomic}, kB)
		tM, kM := broadcastRun(t, model.GFX1250Preset(), bytes, false)
		assert.Equal(t, []ring.Kind{ring.KindMulticast, ring.KindAtomic}, kM)
		tP, _ := broadcastRun(t, model.GFX1250Preset(), bytes, true)
		assert.Equal(t, model.MI355X().Cost(model.PacketGap(ring.KindAtomic)), tB-tM, "%d B: the signal folded into the multicast saves one ATOMIC gap", bytes)
		t.Logf("%d B to 2 peers: broadcast COPY + 2 ATOMIC %v, multicast + 1 ATOMIC %v, two puts %v", bytes, tB, tM, tP)
	}
}
