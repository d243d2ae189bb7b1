package ring

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newRing(t testing.TB, o Options) *Ring {
	t.Helper()
	r, err := New(o)
	require.NoError(t, err)
	return r
}

func TestNew(t *testing.T) {
	r := newRing(t, Options{})
	assert.Equal(t, uint64(DefaultSize), r.Size())
	assert.Equal(t, uint64(DefaultSize-Unit), r.Capacity())
	assert.Equal(t, GFX94x, r.Dialect())
	assert.Len(t, r.Bytes(), DefaultSize)

	r = newRing(t, Options{Size: 4096, Start: 0x1000_0000_0020, Capacity: CapacityMORI, Dialect: GFX9Legacy})
	assert.Equal(t, uint64(4096), r.Capacity())
	assert.Equal(t, GFX9Legacy, r.Dialect())
	for _, v := range []uint64{r.Rptr(), r.Wptr(), r.Doorbell(), r.CachedWptr(), r.CommittedWptr(), r.CachedReadIndex()} {
		assert.Equal(t, uint64(0x1000_0000_0020), v)
	}

	bad := []struct {
		o   Options
		msg string
	}{
		{Options{Size: 32}, "smaller than two units"},
		{Options{Size: -1}, "smaller than two units"},
		{Options{Size: 96}, "not a power of two"},
		{Options{Size: 2 << 30}, "exceeds"},
		{Options{Start: 4}, "not a multiple"},
		{Options{Capacity: 2}, "capacity rule"},
		{Options{Dialect: numDialects}, "dialect"},
	}
	for _, b := range bad {
		_, err := New(b.o)
		assert.ErrorContains(t, err, b.msg)
	}
	_, err := New(Options{Size: 64})
	assert.NoError(t, err)
}

func TestReserve(t *testing.T) {
	r := newRing(t, Options{Size: 1024, Start: 0x100})
	base, err := r.Reserve(32)
	require.NoError(t, err)
	assert.Equal(t, uint64(0x100), base)
	base, err = r.Reserve(96)
	require.NoError(t, err)
	assert.Equal(t, uint64(0x120), base)
	assert.Equal(t, uint64(0x180), r.CachedWptr())
	assert.Equal(t, uint64(128), r.Unrung())

	for _, n := range []uint64{0, 1, 31, 33, 1024, 1024 - 16} {
		_, err := r.Reserve(n)
		assert.Error(t, err, "%d", n)
		assert.Equal(t, uint64(0x180), r.CachedWptr(), "unchanged after %d", n)
	}
	// Exactly capacity is allowed, and Reserve never waits: space is Fits' job.
	base, err = r.Reserve(r.Capacity())
	require.NoError(t, err)
	assert.Equal(t, uint64(0x180), base)
	assert.False(t, r.Fits(base, r.Capacity()))
}

func TestFitsCapacity(t *testing.T) {
	const start = 0x4000_0000_0000
	for _, tt := range []struct {
		rule CapacityRule
		fit  int
	}{{CapacitySeed, 8191}, {CapacityMORI, 8192}} {
		r := newRing(t, Options{Start: start, Capacity: tt.rule})
		for i := 0; i < tt.fit; i++ {
			base, err := r.Reserve(Unit)
			require.NoError(t, err)
			require.True(t, r.Fits(base, Unit), "reservation %d", i)
		}
		base, err := r.Reserve(Unit)
		require.NoError(t, err)
		assert.False(t, r.Fits(base, Unit), "rule %d: reservation %d must wait", tt.rule, tt.fit)

		// The engine consuming one unit makes room; Fits re-reads rptr.
		r.Commit()
		assert.False(t, r.FitsCached(base, Unit))
		require.NoError(t, r.SetRptr(start+Unit))
		assert.False(t, r.FitsCached(base, Unit), "cached index not refreshed yet")
		assert.True(t, r.Fits(base, Unit))
		assert.Equal(t, uint64(start+Unit), r.CachedReadIndex())
		assert.True(t, r.FitsCached(base, Unit))
	}
}

func TestRefreshReadIndexMonotonic(t *testing.T) {
	r := newRing(t, Options{Size: 1024})
	_, _ = r.Reserve(256)
	r.Commit()
	require.NoError(t, r.SetRptr(128))
	assert.Equal(t, uint64(128), r.RefreshReadIndex())
	assert.Equal(t, uint64(128), r.RefreshReadIndex())
	// A base already below the read index trivially fits.
	assert.True(t, r.Fits(0, 32))
}

func TestSubmitOrder(t *testing.T) {
	r := newRing(t, Options{Size: 1024, Start: 64})
	a, _ := r.Reserve(32)
	b, _ := r.Reserve(64)
	assert.True(t, r.CanSubmit(a))
	assert.False(t, r.CanSubmit(b))

	err := r.Submit(b, b+64)
	require.ErrorIs(t, err, ErrOutOfOrder)
	assert.ErrorContains(t, err, "base 0x60, committed 0x40")
	assert.Equal(t, uint64(64), r.Wptr())
	assert.Equal(t, uint64(64), r.Doorbell())
	assert.Equal(t, uint64(64), r.CommittedWptr())

	require.NoError(t, r.Submit(a, a+32))
	assert.Equal(t, uint64(96), r.Wptr())
	assert.Equal(t, uint64(96), r.Doorbell())
	assert.Equal(t, uint64(96), r.CommittedWptr())
	assert.Equal(t, uint64(96), r.QuietTarget())
	assert.True(t, r.CanSubmit(b))

	// Ringing beyond the reservation frontier or backwards is refused.
	assert.Error(t, r.Submit(b, b+96))
	assert.Error(t, r.Submit(b, b-32))
	assert.Equal(t, uint64(96), r.CommittedWptr())
	require.NoError(t, r.Submit(b, b+64))
	assert.Equal(t, uint64(160), r.Doorbell())
	assert.Zero(t, r.Unrung())
}

func TestCommit(t *testing.T) {
	r := newRing(t, Options{Size: 1024})
	_, _, rang := r.Commit()
	assert.False(t, rang, "nothing reserved")

	a, _ := r.Reserve(32)
	b, _ := r.Reserve(32)
	_, _ = r.Reserve(96)
	require.NoError(t, r.Submit(a, a+32))
	base, end, rang := r.Commit()
	assert.True(t, rang)
	assert.Equal(t, uint64(32), base)
	assert.Equal(t, uint64(160), end)
	assert.Equal(t, uint64(160), r.Doorbell())
	assert.Equal(t, uint64(160), r.Wptr())
	assert.Zero(t, r.Unrung())
	// The issuer of b was overtaken by the commit and can never submit.
	assert.False(t, r.CanSubmit(b))
	assert.ErrorIs(t, r.Submit(b, b+32), ErrOutOfOrder)

	_, _, rang = r.Commit()
	assert.False(t, rang)
}

func TestQuietLeavesUnrung(t *testing.T) {
	r := newRing(t, Options{Size: 1024})
	a, _ := r.Reserve(32)
	require.NoError(t, r.Submit(a, a+32))
	_, _ = r.Reserve(64)
	assert.Equal(t, uint64(32), r.QuietTarget())
	assert.Equal(t, uint64(64), r.Unrung())
}

func TestSetRptr(t *testing.T) {
	r := newRing(t, Options{Size: 1024, Start: 32})
	assert.ErrorContains(t, r.SetRptr(64), "beyond the doorbell")
	_, _ = r.Reserve(64)
	r.Commit()
	require.NoError(t, r.SetRptr(60))
	assert.ErrorContains(t, r.SetRptr(56), "back")
	assert.ErrorContains(t, r.SetRptr(62), "dword")
	require.NoError(t, r.SetRptr(60))
	require.NoError(t, r.SetRptr(96))
	assert.Error(t, r.SetRptr(128))
	assert.Equal(t, uint64(96), r.Rptr())
}

func TestWriteReadWrap(t *testing.T) {
	r := newRing(t, Options{Size: 64})
	src := []byte("0123456789abcdefghij")
	ptr := uint64(1<<40 + 56) // offset 56: 8 bytes before the end
	r.Write(ptr, src)
	assert.Equal(t, src[:8], r.Bytes()[56:])
	assert.Equal(t, src[8:], r.Bytes()[:12])
	got := make([]byte, len(src))
	r.Read(ptr, got)
	assert.Equal(t, src, got)

	assert.Nil(t, r.Contiguous(ptr, 9))
	assert.Equal(t, src[:8], r.Contiguous(ptr, 8))
	assert.Equal(t, src[8:12], r.Contiguous(ptr+8, 4))
	assert.Nil(t, r.Contiguous(0, 65))
	assert.Nil(t, r.Contiguous(0, -1))
	c := r.Contiguous(0, 4)
	assert.Equal(t, 4, cap(c), "callers cannot append into the ring")
	assert.Len(t, r.Contiguous(0, 64), 64)
}

func TestWriteUnit(t *testing.T) {
	r := newRing(t, Options{Size: 128})
	for i := range r.Bytes() {
		r.Bytes()[i] = 0xee // stale data must be overwritten by the padding
	}
	c := Copy(0x2000, 0x1000, 64)
	require.NoError(t, r.WriteUnit(128+32, &c))
	assert.Equal(t, []uint32{1, 63, 0, 0x1000, 0, 0x2000, 0, 0}, dwords(r.Bytes()[32:64]))
	f := Fence(0x10, 1)
	require.NoError(t, r.WriteUnit(64, &f))
	assert.Equal(t, []uint32{5, 0x10, 0, 1, 0, 0, 0, 0}, dwords(r.Bytes()[64:96]))
	a := AtomicAdd64(0x8, 1)
	require.NoError(t, r.WriteUnit(96, &a))
	assert.Equal(t, []uint32{0x5E00000A, 8, 0, 1, 0, 0, 0, 0}, dwords(r.Bytes()[96:128]))

	assert.ErrorContains(t, r.WriteUnit(4, &c), "aligned")
	b := Broadcast(1, 2, 3, 4)
	assert.ErrorContains(t, r.WriteUnit(0, &b), "COPY_BROADCAST packet of 36 bytes")
	bad := Packet{Kind: 99}
	assert.Error(t, r.WriteUnit(0, &bad))
	assert.Equal(t, uint32(0xeeeeeeee), dwords(r.Bytes()[:4])[0], "failed writes leave the ring alone")

	allocs := testing.AllocsPerRun(1000, func() {
		if err := r.WriteUnit(0, &c); err != nil {
			t.Fatal(err)
		}
	})
	assert.Zero(t, allocs)
}

func TestWriteBroadcast(t *testing.T) {
	p := Broadcast(0x3000, 0x4000, 0x1000, 64)
	want := []uint32{0x08000001, 63, 0, 0x1000, 0, 0x3000, 0, 0x4000, 0}

	t.Run("normal", func(t *testing.T) {
		r := newRing(t, Options{Size: 256})
		for i := range r.Bytes() {
			r.Bytes()[i] = 0xee
		}
		at, err := r.WriteBroadcast(256+64, &p)
		require.NoError(t, err)
		assert.Equal(t, uint64(256+64), at)
		u := dwords(r.Bytes()[64:160])
		assert.Equal(t, want, u[:9])
		assert.Equal(t, make([]uint32, 15), u[9:], "rest of unit 2 and unit 3 are NOP fill")
	})
	t.Run("second to last unit", func(t *testing.T) {
		// Unit 3 wraps to the ring start and becomes fill there.
		r := newRing(t, Options{Size: 256})
		for i := range r.Bytes() {
			r.Bytes()[i] = 0xee
		}
		at, err := r.WriteBroadcast(192, &p)
		require.NoError(t, err)
		assert.Equal(t, uint64(192), at)
		assert.Equal(t, want, dwords(r.Bytes()[192:228]))
		assert.Equal(t, make([]uint32, 8), dwords(r.Bytes()[0:32]))
	})
	t.Run("last unit", func(t *testing.T) {
		r := newRing(t, Options{Size: 256})
		for i := range r.Bytes() {
			r.Bytes()[i] = 0xee
		}
		at, err := r.WriteBroadcast(512+224, &p)
		require.NoError(t, err)
		assert.Equal(t, uint64(512+256), at)
		assert.Equal(t, make([]uint32, 8), dwords(r.Bytes()[224:256]), "last unit is NOP fill")
		u := dwords(r.Bytes()[0:64])
		assert.Equal(t, want, u[:9])
		assert.Equal(t, make([]uint32, 7), u[9:])
		assert.Equal(t, uint32(0xeeeeeeee), dwords(r.Bytes()[64:68])[0])

		// The engine walks fill then packet.
		var q Packet
		ptr := uint64(512 + 224)
		for ptr < at {
			n, err := r.DecodeAt(&q, ptr, 96)
			require.NoError(t, err)
			require.Equal(t, KindNop, q.Kind)
			ptr += uint64(n)
		}
		n, err := r.DecodeAt(&q, ptr, 64)
		require.NoError(t, err)
		assert.Equal(t, 36, n)
		assert.Equal(t, p, q)
	})
	t.Run("errors", func(t *testing.T) {
		r := newRing(t, Options{Size: 256})
		_, err := r.WriteBroadcast(8, &p)
		assert.Error(t, err)
		big := WriteLinear(0, make([]uint32, 20))
		_, err = r.WriteBroadcast(0, &big)
		assert.Error(t, err)
	})
}

func TestDecodeAt(t *testing.T) {
	r := newRing(t, Options{Size: 128})
	c := Copy(0x2000, 0x1000, 64)
	enc := c.AppendTo(nil)

	t.Run("across the end", func(t *testing.T) {
		ptr := uint64(1<<32 + 112) // 16 bytes before the end
		r.Write(ptr, enc)
		assert.Nil(t, r.Contiguous(ptr, 28))
		var p Packet
		n, err := r.DecodeAt(&p, ptr, 28)
		require.NoError(t, err)
		assert.Equal(t, 28, n)
		assert.Equal(t, c, p)

		n, err = r.DecodeAt(&p, ptr, 20)
		assert.Zero(t, n)
		require.ErrorIs(t, err, ErrTruncated)
		assert.EqualError(t, err, "ring offset 0x100000070: COPY (op 1): truncated: packet needs 28 bytes, 20 available")
		var de *DecodeError
		require.ErrorAs(t, err, &de)
		assert.Equal(t, uint64(1<<32+112), de.Offset)
		assert.Equal(t, 28, de.Need)
		assert.Equal(t, 20, de.Have)
	})
	t.Run("in place", func(t *testing.T) {
		r.Write(32, enc)
		var p Packet
		n, err := r.DecodeAt(&p, 32, 1000)
		require.NoError(t, err)
		assert.Equal(t, 28, n)
		assert.Equal(t, c, p)
		n, err = r.DecodeAt(&p, 32, 12)
		assert.Zero(t, n)
		assert.EqualError(t, err, "ring offset 0x20: COPY (op 1): truncated: packet needs 28 bytes, 12 available")
		_, err = r.DecodeAt(&p, 32, 0)
		assert.EqualError(t, err, "ring offset 0x20: truncated: header needs 4 bytes, 0 available")
	})
	t.Run("write across the end", func(t *testing.T) {
		w := WriteLinear(0x40, []uint32{1, 2, 3, 4, 5, 6})
		r.Write(100, w.AppendTo(nil))
		var p Packet
		n, err := r.DecodeAt(&p, 100, 40)
		require.NoError(t, err)
		assert.Equal(t, 40, n) // 5 + count dwords, count = 5
		assert.Equal(t, w, p)
		_, err = r.DecodeAt(&p, 100, 36)
		assert.ErrorIs(t, err, ErrTruncated)
		_, err = r.DecodeAt(&p, 100, 14)
		var de *DecodeError
		require.ErrorAs(t, err, &de)
		assert.Equal(t, 20, de.Need)
	})
	t.Run("illegal names offset", func(t *testing.T) {
		r.Write(124, fromDwords(0xF0000008))
		var p Packet
		_, err := r.DecodeAt(&p, 124, 24)
		assert.ErrorIs(t, err, ErrIllegal)
		assert.EqualError(t, err, "ring offset 0x7c: POLL_REGMEM (op 8) sub_op 0: reserved compare function 7")
	})
	t.Run("avail capped at size", func(t *testing.T) {
		// A NOP claiming more dwords than the ring holds is truncated by the
		// ring size, not by avail.
		r.Write(0, fromDwords(0x3fff0000))
		var p Packet
		_, err := r.DecodeAt(&p, 0, 1<<40)
		var de *DecodeError
		require.ErrorAs(t, err, &de)
		assert.Equal(t, 128, de.Have)
		assert.Equal(t, 4*0x4000, de.Need)
	})
	t.Run("no allocation", func(t *testing.T) {
		ptr := uint64(112)
		r.Write(ptr, enc)
		var p Packet
		allocs := testing.AllocsPerRun(100, func() {
			if _, err := r.DecodeAt(&p, ptr, 28); err != nil {
				t.Fatal(err)
			}
			if _, err := r.DecodeAt(&p, 32, 28); err != nil {
				t.Fatal(err)
			}
		})
		assert.Zero(t, allocs)
	})
}
