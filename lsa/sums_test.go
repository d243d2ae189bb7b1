package lsa

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/blocksum"
)

// sumRig is a space with a source region holding distinct bytes and a
// destination region of 3 blocks, the middle one tracked (TrackSum).
type sumRig struct {
	s        *Space
	src, dst uint64
	blk      uint64
}

func newSumRig(t *testing.T, blk uint64) *sumRig {
	t.Helper()
	s := NewSpace(1, 1<<32, 1<<32, nil)
	back := func(_, n uint64) ([]byte, error) { return make([]byte, n), nil }
	src, err := s.Alloc(0, 3*blk, "src", back)
	require.NoError(t, err)
	dst, err := s.Alloc(0, 3*blk, "dst", back)
	require.NoError(t, err)
	b, err := s.Bytes("write", src, 3*blk)
	require.NoError(t, err)
	for i := range b {
		b[i] = byte(i*131 + i>>8)
	}
	require.NoError(t, s.TrackSum(dst+blk, blk))
	return &sumRig{s: s, src: src, dst: dst, blk: blk}
}

// land is a COPY's landing of n bytes from src+from to dst+to, as the
// engine's Memory.Move makes it.
func (r *sumRig) land(t *testing.T, to, from, n uint64) {
	t.Helper()
	sb, err := r.s.Bytes("copy source read", r.src+from, n)
	require.NoError(t, err)
	db, err := r.s.BytesOverwrite("copy destination write", r.dst+to, n)
	require.NoError(t, err)
	r.s.Land(r.dst+to, db, sb)
}

// The tracked block's sum is given exactly when copies landed every byte
// of it once, in order, and nothing else wrote it; then it is blocksum.Of
// of the bytes there. Every other history leaves no sum (the check reads
// the bytes), and the bytes are the copy's either way.
func TestLandedSum(t *testing.T) {
	const blk = 80 << 10 // five Land pieces, the last one short
	tests := []struct {
		name string
		run  func(t *testing.T, r *sumRig)
		ok   bool
	}{
		{"one landing of the block", func(t *testing.T, r *sumRig) { r.land(t, blk, blk, blk) }, true},
		{"bursts in order", func(t *testing.T, r *sumRig) {
			for off := uint64(0); off < blk; off += 256 {
				r.land(t, blk+off, blk+off, 256)
			}
		}, true},
		{"one landing over all three blocks", func(t *testing.T, r *sumRig) { r.land(t, 0, 0, 3*blk) }, true},
		{"uneven pieces in order", func(t *testing.T, r *sumRig) {
			r.land(t, blk, blk, 64)
			r.land(t, blk+64, blk+64, blk-128)
			r.land(t, 2*blk-64, 2*blk-64, 64)
		}, true},
		{"never landed", func(*testing.T, *sumRig) {}, false},
		{"half landed", func(t *testing.T, r *sumRig) { r.land(t, blk, blk, blk/2) }, false},
		{"out of order", func(t *testing.T, r *sumRig) {
			r.land(t, blk+blk/2, blk+blk/2, blk/2)
			r.land(t, blk, blk, blk/2)
		}, false},
		{"a piece off the hash's rows", func(t *testing.T, r *sumRig) {
			r.land(t, blk, blk, 100)
			r.land(t, blk+100, blk+100, blk-100)
		}, false},
		{"landed twice", func(t *testing.T, r *sumRig) {
			r.land(t, blk, blk, blk)
			r.land(t, blk, 0, 256)
		}, false},
		{"a store after the landing", func(t *testing.T, r *sumRig) {
			r.land(t, blk, blk, blk)
			require.NoError(t, r.s.Store32(r.dst+blk+blk/2, 7))
		}, false},
		{"a host write after the landing", func(t *testing.T, r *sumRig) {
			r.land(t, blk, blk, blk)
			b, err := r.s.Bytes("write", r.dst+2*blk-1, 1)
			require.NoError(t, err)
			b[0] ^= 1
			r.s.Notify(r.dst+2*blk-1, 1)
		}, false},
		{"a write before the landing", func(t *testing.T, r *sumRig) {
			require.NoError(t, r.s.Write(r.dst+blk, []byte{1, 2, 3}))
			r.land(t, blk, blk, blk)
		}, false},
		{"a landing from a phantom source", func(t *testing.T, r *sumRig) {
			db, err := r.s.Bytes("copy destination write", r.dst+blk, blk)
			require.NoError(t, err)
			r.s.Land(r.dst+blk, db, nil)
		}, false},
		{"another layer shares the bytes", func(t *testing.T, r *sumRig) {
			r.s.SetOnNotify(func(_, _ uint64) {})
			r.s.SetOnNotify(nil)
			r.land(t, blk, blk, blk)
		}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := newSumRig(t, blk)
			tc.run(t, r)
			got, err := r.s.Bytes("read", r.dst+blk, blk)
			require.NoError(t, err)
			v, ok := r.s.LandedSum(r.dst+blk, blk)
			require.Equal(t, tc.ok, ok)
			if ok {
				assert.Equal(t, blocksum.Of(got), v)
				src, err := r.s.Bytes("read", r.src+blk, blk)
				require.NoError(t, err)
				assert.Equal(t, src, got, "the landed bytes are the source's")
			}
			_, ok = r.s.LandedSum(r.dst+blk, blk-1)
			assert.False(t, ok, "only the tracked range has a sum")
		})
	}
}

func TestTrackSumErrors(t *testing.T) {
	r := newSumRig(t, 4096)
	assert.ErrorContains(t, r.s.TrackSum(r.dst, 0), "an empty range")
	assert.ErrorContains(t, r.s.TrackSum(r.dst+4096+100, 10), "meets the tracked range")
	assert.ErrorContains(t, r.s.TrackSum(r.dst+4000, 200), "meets the tracked range")
	assert.ErrorContains(t, r.s.TrackSum(r.dst+3*4096-10, 20), "past the end")
	p, err := r.s.Alloc(0, 4096, "phantom", func(_, _ uint64) ([]byte, error) { return nil, nil })
	require.NoError(t, err)
	assert.ErrorContains(t, r.s.TrackSum(p, 8), `region "phantom" is phantom`)
	require.NoError(t, r.s.TrackSum(r.dst, 4096), "a neighbour's range is fine")
}

// A range whose length is not a whole number of the hash's 64-byte rows
// ends in a short piece: summed, as the last.
func TestLandedSumShortTail(t *testing.T) {
	r := newSumRig(t, 4096)
	const n = 1000
	require.NoError(t, r.s.TrackSum(r.dst, n))
	r.land(t, 0, 0, 512)
	r.land(t, 512, 512, n-512)
	v, ok := r.s.LandedSum(r.dst, n)
	require.True(t, ok)
	got, err := r.s.Bytes("read", r.dst, n)
	require.NoError(t, err)
	assert.Equal(t, blocksum.Of(got), v)
}

// FuzzLandedSum: whatever mix of landings (anywhere, any length, from
// anywhere in the source), stores and host writes reaches a tracked
// range, a sum it gives is the sum of the bytes there.
func FuzzLandedSum(f *testing.F) {
	f.Add([]byte{0, 0, 0, 64, 0, 64, 0, 64})
	f.Add([]byte{0, 0, 0, 255, 2, 10, 1, 3, 0, 8, 0, 200})
	f.Add([]byte{0, 0, 255, 32, 0, 128, 128, 0})              // all three blocks, in order: a sum
	f.Add([]byte{0, 0, 255, 32, 0, 128, 128, 0, 2, 80, 0, 0}) // then a store into the tracked block
	f.Add([]byte{0, 0, 255, 32, 0, 128, 128, 0, 3, 70, 1, 0}) // then a host write
	f.Fuzz(func(t *testing.T, ops []byte) {
		const blk = 4096
		r := newSumRig(t, blk)
		for len(ops) >= 4 {
			kind, at, n := ops[0]%4, uint64(ops[1])*64%(3*blk), uint64(ops[2])*32+uint64(ops[3])
			ops = ops[4:]
			n = min(max(n, 1), 3*blk-at)
			switch kind {
			case 0, 1: // a landing, from the same offset or another
				from := at
				if kind == 1 {
					from = (at + n) % (3*blk - n + 1)
				}
				r.land(t, at, from, n)
			case 2:
				require.NoError(t, r.s.Store32(r.dst+at/4*4%(3*blk-3), uint32(n)))
			case 3:
				require.NoError(t, r.s.Write(r.dst+at, make([]byte, n)))
			}
		}
		got, err := r.s.Bytes("read", r.dst+blk, blk)
		require.NoError(t, err)
		if v, ok := r.s.LandedSum(r.dst+blk, blk); ok {
			require.Equal(t, blocksum.Of(got), v)
		}
	})
}
