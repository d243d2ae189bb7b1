package lsa

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSpace(t *testing.T) {
	s := NewSpace(2, 1<<32, 1<<32, nil)
	back := func(_, n uint64) ([]byte, error) { return make([]byte, n), nil }
	a, err := s.Alloc(1, 10, "a", back)
	require.NoError(t, err)
	assert.Equal(t, s.SliceBase(1), a)
	b, err := s.Alloc(1, 5000, "b", back)
	require.NoError(t, err)
	assert.Equal(t, a+4096, b, "page bump")
	assert.Equal(t, 1, s.GPUOf(b))
	assert.Equal(t, -1, s.GPUOf(3<<32))

	_, err = s.Alloc(0, 4096, "fails", func(_, _ uint64) ([]byte, error) { return nil, errors.New("no memory") })
	assert.ErrorContains(t, err, `alloc "fails": 4096 B at 0x100000000 on GPU 0: no memory`)
	c, err := s.Alloc(0, 1, "c", back)
	require.NoError(t, err)
	assert.Equal(t, s.SliceBase(0), c, "a failed backing reserves nothing")
	_, err = s.Alloc(0, 1, "short", func(_, _ uint64) ([]byte, error) { return make([]byte, 8), nil })
	assert.ErrorContains(t, err, "backed 8 B, asked 4096 B")

	buf, err := s.Bytes("read", b+4000, 100)
	require.NoError(t, err)
	assert.Len(t, buf, 100)
	_, err = s.Bytes("read", b+8000, 200)
	var ae *AddrError
	require.ErrorAs(t, err, &ae)
	assert.Contains(t, ae.Reason, `runs 8 B past the end of region "b"`)
	_, err = s.Bytes("write", s.SliceBase(1)+1<<20, 4)
	assert.ErrorContains(t, err, "VM hole in GPU 1's slice at offset 0x100000")
	p, err := s.Alloc(0, 4096, "phantom", func(_, _ uint64) ([]byte, error) { return nil, nil })
	require.NoError(t, err)
	buf, err = s.Bytes("read", p, 16)
	assert.NoError(t, err)
	assert.Nil(t, buf, "a phantom region has no bytes")
}

// The slice after the last GPU's is host memory: allocated as lsa.Host,
// resolved by HomeOf (GPUOf names GPUs only), its holes named as host
// memory's.
func TestHostSlice(t *testing.T) {
	s := NewSpace(2, 1<<32, 1<<32, nil)
	back := func(_, n uint64) ([]byte, error) { return make([]byte, n), nil }
	h, err := s.Alloc(Host, 10, "pinned", back)
	require.NoError(t, err)
	assert.Equal(t, uint64(3<<32), h, "after GPU 1's slice")
	assert.Equal(t, s.SliceBase(Host), h)
	assert.Equal(t, -1, s.GPUOf(h), "not a GPU's")
	assert.Equal(t, Host, s.HomeOf(h))
	assert.Equal(t, 1, s.HomeOf(s.SliceBase(1)))
	assert.Equal(t, -1, s.HomeOf(4<<32), "past the host slice")
	assert.Equal(t, -1, s.HomeOf(1), "below the base")
	g, err := s.Alloc(0, 10, "gpu0", back)
	require.NoError(t, err)
	assert.Equal(t, uint64(1<<32), g, "the GPUs' bump pointers are their own")
	h2, err := s.Alloc(Host, 4096, "pinned2", back)
	require.NoError(t, err)
	assert.Equal(t, h+4096, h2)
	_, err = s.AllocAt(h+1<<20, 4096, "fixed", back)
	require.NoError(t, err, "AllocAt in the host slice")
	_, err = s.Bytes("read", h+2<<20, 4)
	assert.ErrorContains(t, err, "VM hole in host memory's slice at offset 0x200000")
	_, err = s.Alloc(Host, 1<<33, "huge", back)
	assert.ErrorContains(t, err, "does not fit in host memory's")
	_, err = s.Alloc(-1, 1, "bad", back)
	assert.ErrorContains(t, err, "GPU -1 outside [0, 2) (host memory is lsa.Host)")
	_, err = s.Alloc(Host, 4096, "fails", func(_, _ uint64) ([]byte, error) { return nil, errors.New("no memory") })
	assert.ErrorContains(t, err, "in host memory: no memory")
}

// A watched region is marked Written by the first notified write that
// reaches it (Write, a Store, Notify), and only by those: a write to
// another region or a read leaves it.
func TestWatchWrites(t *testing.T) {
	back := func(_, n uint64) ([]byte, error) { return make([]byte, n), nil }
	for _, tc := range []struct {
		name    string
		write   func(s *Space, a, b uint64) error
		written bool
	}{
		{"read", func(s *Space, a, _ uint64) error { return s.Read(a, make([]byte, 8)) }, false},
		{"write elsewhere", func(s *Space, _, b uint64) error { return s.Write(b, []byte{1}) }, false},
		{"empty notify", func(s *Space, a, _ uint64) error { s.Notify(a+8, 0); return nil }, false},
		{"write", func(s *Space, a, _ uint64) error { return s.Write(a+4095, []byte{1}) }, true},
		{"store", func(s *Space, a, _ uint64) error { return s.Store32(a, 1) }, true},
		{"notify across", func(s *Space, a, _ uint64) error { s.Notify(a-8, 16); return nil }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSpace(1, 1<<32, 1<<32, nil)
			_, err := s.Alloc(0, 4096, "before", back)
			require.NoError(t, err)
			a, err := s.Alloc(0, 4096, "watched", back)
			require.NoError(t, err)
			b, err := s.Alloc(0, 4096, "other", back)
			require.NoError(t, err)
			r, err := s.Region("", a, 1)
			require.NoError(t, err)
			s.WatchWrites(r)
			require.NoError(t, tc.write(s, a, b))
			assert.Equal(t, tc.written, r.Written())
		})
	}
}

// A stale region (MarkStale) reads as zero everywhere, whatever its
// backing held: Bytes zeroes the granules an access meets, BytesOverwrite
// leaves the granules it covers whole to its caller and zeroes only the
// bytes of partly covered granules outside its range, and Write, Load and
// Store see the same memory as on a zeroed backing.
func TestMarkStale(t *testing.T) {
	const pages = 70 // granules over more than one word of the bitmap
	const grains = pages * PageSize / StaleGranule
	dirty := func(_, n uint64) ([]byte, error) {
		b := make([]byte, n)
		for i := range b {
			b[i] = 0xee
		}
		return b, nil
	}
	for _, tc := range []struct {
		name  string
		do    func(s *Space, base uint64) error
		fresh int // granules no longer stale after do
		// want is the bytes the backing holds afterwards where an
		// overwrite left them to its caller (0xee), else 0 or what was
		// written.
		want func(off uint64) byte
	}{
		{"read one byte", func(s *Space, base uint64) error {
			_, err := s.Bytes("read", base+5000, 1)
			return err
		}, 1, func(uint64) byte { return 0 }},
		{"read across pages and a bitmap word", func(s *Space, base uint64) error {
			_, err := s.Bytes("read", base+63*PageSize+100, 2*PageSize)
			return err
		}, 33, func(uint64) byte { return 0 }},
		{"overwrite whole pages", func(s *Space, base uint64) error {
			_, err := s.BytesOverwrite("copy", base+PageSize, 64*PageSize)
			return err
		}, 64 * PageSize / StaleGranule, func(off uint64) byte {
			if off >= PageSize && off < 65*PageSize {
				return 0xee // the caller's to write
			}
			return 0
		}},
		{"overwrite inside one granule", func(s *Space, base uint64) error {
			_, err := s.BytesOverwrite("copy", base+2*PageSize+100, 50)
			return err
		}, 1, func(off uint64) byte {
			if off >= 2*PageSize+100 && off < 2*PageSize+150 {
				return 0xee
			}
			return 0
		}},
		{"overwrite across granules, both ends partial", func(s *Space, base uint64) error {
			_, err := s.BytesOverwrite("copy", base+StaleGranule+10, 3*StaleGranule)
			return err
		}, 4, func(off uint64) byte {
			if off >= StaleGranule+10 && off < 4*StaleGranule+10 {
				return 0xee
			}
			return 0
		}},
		{"write across a page edge", func(s *Space, base uint64) error {
			return s.Write(base+PageSize-2, []byte{1, 2, 3, 4})
		}, 2, func(off uint64) byte {
			if off >= PageSize-2 && off < PageSize+2 {
				return byte(off - (PageSize - 2) + 1)
			}
			return 0
		}},
		{"store", func(s *Space, base uint64) error {
			return s.Store32(base+8, 0x01020304)
		}, 1, func(off uint64) byte {
			if off >= 8 && off < 12 {
				return byte(4 - (off - 8))
			}
			return 0
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSpace(1, 1<<32, 1<<32, nil)
			base, err := s.Alloc(0, pages*PageSize, "win", dirty)
			require.NoError(t, err)
			require.NoError(t, s.MarkStale(base, nil))
			assert.Equal(t, grains, s.Stale(base))
			require.NoError(t, tc.do(s, base))
			assert.Equal(t, grains-tc.fresh, s.Stale(base), "granules still stale")
			// What the caller of an overwrite would see before writing,
			// then the whole region as any reader sees it.
			r, err := s.Region("test", base, 1)
			require.NoError(t, err)
			for g := range uint64(grains) {
				if r.stale != nil && r.stale.w[g/64]&(1<<(g%64)) != 0 {
					continue // still stale: checked through Bytes below
				}
				for off := g * StaleGranule; off < (g+1)*StaleGranule; off++ {
					if r.data[off] != tc.want(off) {
						t.Fatalf("byte %d: %#x, want %#x", off, r.data[off], tc.want(off))
					}
				}
			}
			all, err := s.Bytes("read", base, pages*PageSize)
			require.NoError(t, err)
			assert.Equal(t, 0, s.Stale(base), "a read of everything leaves nothing stale")
			for off, v := range all {
				if w := tc.want(uint64(off)); v != w {
					t.Fatalf("read byte %d: %#x, want %#x", off, v, w)
				}
			}
		})
	}
}

func TestMarkStaleErrors(t *testing.T) {
	s := NewSpace(1, 1<<32, 1<<32, nil)
	base, err := s.Alloc(0, 2*PageSize, "win", func(_, n uint64) ([]byte, error) { return make([]byte, n), nil })
	require.NoError(t, err)
	assert.ErrorContains(t, s.MarkStale(base+PageSize, nil), `not the base of region "win"`)
	assert.ErrorContains(t, s.MarkStale(base+1<<20, nil), "VM hole")
	p, err := s.Alloc(0, PageSize, "phantom", func(_, _ uint64) ([]byte, error) { return nil, nil })
	require.NoError(t, err)
	assert.NoError(t, s.MarkStale(p, nil), "a phantom region has nothing to be stale")
	assert.Equal(t, 0, s.Stale(p))
}

// TestSpaceRegionsInChunks: a space makes its regions a chunk at a time
// (16, then doubling) and keeps them in address order and apart: the
// first 16 placements cost the chunk and the list, not one allocation
// each; a region's fields stay its own when later ones are placed.
func TestSpaceRegionsInChunks(t *testing.T) {
	none := func(_, _ uint64) ([]byte, error) { return nil, nil } // phantom: no bytes to allocate
	var s *Space
	addrs := make([]uint64, 0, firstRegions)
	allocs := testing.AllocsPerRun(1, func() {
		s = NewSpace(2, 1<<32, 1<<32, nil)
		addrs = addrs[:0]
		for g := range 2 {
			for range firstRegions / 2 {
				a, err := s.Alloc(1-g, 4096, "r", none)
				require.NoError(t, err)
				addrs = append(addrs, a)
			}
		}
	})
	assert.LessOrEqual(t, allocs, 5.0, "the space (2), the chunk and the list, not one a region")
	for i := range 3 * firstRegions {
		_, err := s.Alloc(i%2, 4096, "more", none)
		require.NoError(t, err)
	}
	rs := s.Regions()
	require.Len(t, rs, 4*firstRegions)
	for i := 1; i < len(rs); i++ {
		assert.Less(t, rs[i-1].End(), rs[i].Base+1, "sorted and apart")
		assert.NotSame(t, rs[i-1], rs[i])
	}
	for _, a := range addrs {
		r := s.overlap(a, 1)
		require.NotNil(t, r)
		assert.Equal(t, a, r.Base)
		assert.Equal(t, "r", r.Name)
	}
}
