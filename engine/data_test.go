package engine

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/model"
	"github.com/emud-dev/emud/ring"
	"github.com/emud-dev/emud/sim"
)

// landings runs a 4-chunk COPY alone and returns the virtual time at which
// a waiter on the whole destination was woken: each chunk's end (the bursts
// within a chunk land unseen until something reads them).
func landings(t *testing.T) (chunk uint64, at []sim.Time) {
	t.Helper()
	r := newRig(t, 1, Config{GPUs: 3})
	chunk = uint64(model.LinkChunkBytes)
	n := 4 * chunk
	src, dst := r.alloc(0, n), r.alloc(1, n)
	require.NoError(t, r.n.Memory().Fill(src, n, 0xab))
	q := r.queue(0, 1, 0)
	last := make([]byte, n)
	var times []sim.Time
	seen := 0
	r.s.Spawn("k", func(a *sim.Actor) {
		require.NoError(t, post(a, q, ring.Copy(dst, src, n)))
		for seen < 4 {
			r.n.Memory().Await(a, dst, n, func() bool {
				_ = r.n.Memory().Read(dst, last)
				return bytes.Count(last, []byte{0xab}) > seen*int(chunk)
			}, func() string { return "landing" })
			seen = bytes.Count(last, []byte{0xab}) / int(chunk)
			times = append(times, a.Now())
		}
	})
	require.NoError(t, r.s.Run())
	return chunk, times
}

func TestCopyLandsChunkByChunk(t *testing.T) {
	chunk, at := landings(t)
	require.Len(t, at, 4, "one landing per %d B chunk", chunk)
	for i := 1; i < 4; i++ {
		assert.Greater(t, at[i], at[i-1], "chunk %d lands after chunk %d", i, i-1)
	}
}

// A load made mid-copy sees the chunks landed so far and the old bytes
// after them (torn data); a store to a source chunk not yet read is what
// lands.
func TestCopyTornAndLateSourceStore(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 2})
	m := r.n.Memory()
	chunk := uint64(model.LinkChunkBytes)
	n := 4 * chunk
	src, dst := r.alloc(0, n), r.alloc(1, n)
	require.NoError(t, m.Fill(src, n, 0x11))
	require.NoError(t, m.Fill(dst, n, 0xee))
	q := r.queue(0, 1, 0)
	mid := make([]byte, n)
	r.s.Spawn("k", func(a *sim.Actor) {
		require.NoError(t, post(a, q, ring.Copy(dst, src, n)))
		// Wait for the first chunk, then look and overwrite the last
		// source chunk, which the engine has not read yet.
		m.Await(a, dst, 1, func() bool { v, _ := m.Load32(dst); return v == 0x11111111 }, func() string { return "first chunk" })
		require.NoError(t, m.Read(dst, mid))
		require.NoError(t, m.Fill(src+3*chunk, chunk, 0x22))
		q.AwaitDrained(a, q.QuietTarget())
	})
	require.NoError(t, r.s.Run())
	landed := bytes.Count(mid, []byte{0x11})
	assert.Equal(t, 0, landed%Burst, "whole bursts land")
	assert.GreaterOrEqual(t, landed, int(chunk))
	assert.Less(t, landed, int(n), "the load mid-copy is torn")
	assert.Equal(t, bytes.Repeat([]byte{0xee}, int(n)-landed), mid[landed:], "old bytes after the landed bursts")
	got := make([]byte, n)
	require.NoError(t, m.Read(dst, got))
	assert.Equal(t, bytes.Repeat([]byte{0x11}, int(3*chunk)), got[:3*chunk])
	assert.Equal(t, bytes.Repeat([]byte{0x22}, int(chunk)), got[3*chunk:], "the late store to an unread source chunk is what was sent")
}

// A broadcast reads each source chunk once: a store to the source between
// the two streams' landings does not reach the second destination.
func TestBroadcastReadsOnce(t *testing.T) {
	r := newRig(t, 1, Config{GPUs: 3})
	m := r.n.Memory()
	chunk := uint64(model.LinkChunkBytes)
	src, d1, d2 := r.alloc(0, chunk), r.alloc(1, chunk), r.alloc(2, chunk)
	require.NoError(t, m.Fill(src, chunk, 0x33))
	q := r.queue(0, 1, 0)
	r.s.Spawn("k", func(a *sim.Actor) {
		p := ring.Broadcast(d1, d2, src, chunk)
		base, err := q.Reserve(a, 3*ring.Unit)
		require.NoError(t, err)
		_, err = q.WriteBroadcast(base, &p)
		require.NoError(t, err)
		require.NoError(t, q.Submit(a, base, base+3*ring.Unit))
		m.Await(a, d1, 4, func() bool { v, _ := m.Load32(d1); return v == 0x33333333 }, func() string { return "first stream" })
		v, _ := m.Load32(d2)
		assert.Zero(t, v, "the second stream lands after the first")
		require.NoError(t, m.Fill(src, chunk, 0x44))
		q.AwaitDrained(a, q.QuietTarget())
	})
	require.NoError(t, r.s.Run())
	got := make([]byte, chunk)
	require.NoError(t, m.Read(d2, got))
	assert.Equal(t, bytes.Repeat([]byte{0x33}, int(chunk)), got)
}

// copyTimes runs one chunk's COPY alone and returns when it was rung and
// when its last byte landed.
func copyTimes(t *testing.T) (rung, end sim.Time) {
	r := newRig(t, 1, Config{GPUs: 2})
	m := r.n.Memory()
	n := uint64(model.LinkChunkBytes)
	src, dst := r.alloc(0, n), r.alloc(1, n)
	require.NoError(t, m.Fill(src, n, 0x11))
	q := r.queue(0, 1, 0)
	r.s.Spawn("k", func(a *sim.Actor) {
		require.NoError(t, post(a, q, ring.Copy(dst, src, n)))
		rung = a.Now()
		m.Await(a, dst+n-4, 4, func() bool { v, _ := m.Load32(dst + n - 4); return v == 0x11111111 }, func() string { return "last byte" })
		end = a.Now()
	})
	require.NoError(t, r.s.Run())
	return rung, end
}

// Within one chunk the bytes land burst by burst at their own times: a
// load at three quarters of the copy sees whole bursts landed and the rest
// old, and a store to a source burst not yet read is what is sent from
// that burst on, while the bursts read before it keep the old bytes.
func TestCopyLandsBurstByBurst(t *testing.T) {
	rung, end := copyTimes(t)
	r := newRig(t, 1, Config{GPUs: 2})
	m := r.n.Memory()
	n := uint64(model.LinkChunkBytes)
	require.Greater(t, n, uint64(16*Burst))
	src, dst := r.alloc(0, n), r.alloc(1, n)
	require.NoError(t, m.Fill(src, n, 0x11))
	require.NoError(t, m.Fill(dst, n, 0xee))
	q := r.queue(0, 1, 0)
	mid := make([]byte, n)
	r.s.Spawn("k", func(a *sim.Actor) {
		require.NoError(t, post(a, q, ring.Copy(dst, src, n)))
		a.Sleep(rung + (end-rung)*3/4 - a.Now())
		require.NoError(t, m.Read(dst, mid))
		require.NoError(t, m.Fill(src, n, 0x22))
		q.AwaitDrained(a, q.QuietTarget())
	})
	require.NoError(t, r.s.Run())
	landed := bytes.Count(mid, []byte{0x11})
	assert.Zero(t, landed%Burst, "whole bursts land")
	assert.Greater(t, landed, int(n/4), "most of the chunk has landed by three quarters of its time")
	assert.Less(t, landed, int(n), "not all of it")
	assert.Equal(t, bytes.Repeat([]byte{0xee}, int(n)-landed), mid[landed:], "old bytes after the landed bursts")
	got := make([]byte, n)
	require.NoError(t, m.Read(dst, got))
	assert.Equal(t, bytes.Repeat([]byte{0x11}, landed), got[:landed], "bursts read before the store keep the old source")
	assert.Equal(t, bytes.Repeat([]byte{0x22}, int(n)-landed), got[landed:], "bursts read after it send the new source")
}
