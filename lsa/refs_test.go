package lsa

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/blocksum"
)

// refPair is two spaces built alike, a region each of refPages pages on a
// dirty backing marked stale and one tracked block in it: ref lands
// pattern bytes by reference (LandRef), plain copies them (Land).
type refPair struct {
	ref, plain *Space
	base       uint64
	src        uint64 // a region holding pattern, marked pristine in both
	pattern    []byte // immutable source of the landings
	sourceSums int    // calls of ref's SetSourceSums function
}

const (
	refPages = 6
	refSize  = refPages * PageSize
	refBlkLo = PageSize + 512 // the tracked block, on 64-byte rows
	refBlkN  = 2*PageSize + 1024
	// a second tracked block off the granules: its first landing is not
	// whole 64-byte rows
	refOddLo = 5*PageSize + 32
	refOddN  = 1000
)

func newRefPair(t *testing.T) *refPair {
	t.Helper()
	p := &refPair{pattern: make([]byte, refSize)}
	for i := range p.pattern {
		p.pattern[i] = byte(i*167 + i>>8 + 1)
	}
	dirty := func(_, n uint64) ([]byte, error) { return bytes.Repeat([]byte{0xee}, int(n)), nil }
	for _, s := range []**Space{&p.ref, &p.plain} {
		*s = NewSpace(1, 1<<32, 1<<32, nil)
		base, err := (*s).Alloc(0, refSize, "dst", dirty)
		require.NoError(t, err)
		require.NoError(t, (*s).MarkStale(base, nil))
		require.NoError(t, (*s).TrackSum(base+refBlkLo, refBlkN))
		require.NoError(t, (*s).TrackSum(base+refOddLo, refOddN))
		src, err := (*s).Alloc(0, refSize, "src", dirty)
		require.NoError(t, err)
		b, err := (*s).BytesOverwrite("fill", src, refSize)
		require.NoError(t, err)
		copy(b, p.pattern)
		require.NoError(t, (*s).SetPristine(src, refSize, [][]byte{p.pattern}))
		p.base, p.src = base, src
	}
	// The ref space's known sources are the pattern's: what a pattern
	// cache's sums would give.
	p.ref.SetSourceSums(func(b []byte) (uint64, bool) {
		p.sourceSums++
		return blocksum.Of(b), true
	})
	return p
}

// land lands pattern[from, from+n) at base+at in both spaces.
func (p *refPair) land(t *testing.T, at, from, n uint64) {
	t.Helper()
	src := p.pattern[from : from+n]
	took, err := p.ref.LandRef(p.base+at, src)
	require.NoError(t, err)
	if !took { // the region's runs are all live (maxRefRuns): copied
		db, err := p.ref.BytesOverwrite("copy", p.base+at, n)
		require.NoError(t, err)
		p.ref.Land(p.base+at, db, src)
	}
	db, err := p.plain.BytesOverwrite("copy", p.base+at, n)
	require.NoError(t, err)
	p.plain.Land(p.base+at, db, src)
}

// copySrc is a COPY of n bytes from src+from to base+at as the engine
// would make it with reference landing: by reference in ref while the
// source is pristine, else copied; always copied in plain.
func (p *refPair) copySrc(t *testing.T, at, from, n uint64) {
	t.Helper()
	took := false
	if c := p.ref.Pristine(p.src+from, n); c != nil {
		var err error
		took, err = p.ref.LandRef(p.base+at, c)
		require.NoError(t, err)
	}
	if !took {
		sb, err := p.ref.Bytes("copy", p.src+from, n)
		require.NoError(t, err)
		db, err := p.ref.BytesOverwrite("copy", p.base+at, n)
		require.NoError(t, err)
		p.ref.Land(p.base+at, db, sb)
	}
	sb, err := p.plain.Bytes("copy", p.src+from, n)
	require.NoError(t, err)
	db, err := p.plain.BytesOverwrite("copy", p.base+at, n)
	require.NoError(t, err)
	p.plain.Land(p.base+at, db, sb)
}

// both runs fn on each space.
func (p *refPair) both(t *testing.T, fn func(s *Space) error) {
	t.Helper()
	require.NoError(t, fn(p.ref))
	require.NoError(t, fn(p.plain))
}

// same requires both spaces to read alike over [at, at+n) and to give the
// same landed sum.
func (p *refPair) same(t *testing.T, at, n uint64) {
	t.Helper()
	var got [2][]byte
	for i, s := range []*Space{p.ref, p.plain} {
		b, err := s.Bytes("read", p.base+at, n)
		require.NoError(t, err)
		got[i] = bytes.Clone(b)
	}
	require.Equal(t, got[1], got[0], "bytes [%d, +%d)", at, n)
	p.sameSum(t)
}

func (p *refPair) sameSum(t *testing.T) {
	t.Helper()
	for _, blk := range [][2]uint64{{refBlkLo, refBlkN}, {refOddLo, refOddN}} {
		v0, ok0 := p.ref.LandedSum(p.base+blk[0], blk[1])
		v1, ok1 := p.plain.LandedSum(p.base+blk[0], blk[1])
		require.Equal(t, ok1, ok0, "landed sum of [%d, +%d) given", blk[0], blk[1])
		require.Equal(t, v1, v0, "landed sum of [%d, +%d)", blk[0], blk[1])
	}
}

// Each path that reaches a referenced granule gives it the source's bytes
// first (or, for an overwrite of all of it, leaves it to the caller), so
// that every access sees what a plain copy would have left.
func TestLandRefMaterialises(t *testing.T) {
	const G = StaleGranule
	tests := []struct {
		name  string
		do    func(t *testing.T, p *refPair)
		stale int // granules of ref still stale afterwards
	}{
		{"a landing alone", func(*testing.T, *refPair) {}, refSize / G},
		{"read inside a granule", func(t *testing.T, p *refPair) { p.same(t, 2*G+10, 20) }, refSize/G - 1},
		{"read across granules", func(t *testing.T, p *refPair) { p.same(t, G-1, 2*G+2) }, refSize/G - 4},
		{"overwrite a granule's middle", func(t *testing.T, p *refPair) {
			p.both(t, func(s *Space) error {
				b, err := s.BytesOverwrite("poke", p.base+3*G+7, 9)
				copy(b, "123456789")
				s.Notify(p.base+3*G+7, 9)
				return err
			})
		}, refSize/G - 1},
		{"overwrite whole granules", func(t *testing.T, p *refPair) {
			p.both(t, func(s *Space) error { return s.Write(p.base+4*G, bytes.Repeat([]byte{7}, 2*G)) })
		}, refSize/G - 2},
		{"store a word", func(t *testing.T, p *refPair) {
			p.both(t, func(s *Space) error { return s.Store32(p.base+5*G+4, 0xdeadbeef) })
		}, refSize/G - 1},
		{"load a word", func(t *testing.T, p *refPair) {
			v0, err := p.ref.Load64(p.base + 6*G + 8)
			require.NoError(t, err)
			v1, err := p.plain.Load64(p.base + 6*G + 8)
			require.NoError(t, err)
			require.Equal(t, v1, v0)
		}, refSize/G - 1},
		{"marked stale again reads zero", func(t *testing.T, p *refPair) {
			p.both(t, func(s *Space) error { return s.MarkStale(p.base, nil) })
			b, err := p.ref.Bytes("read", p.base, refSize)
			require.NoError(t, err)
			require.Equal(t, make([]byte, refSize), b)
		}, 0},
		{"landed again from elsewhere", func(t *testing.T, p *refPair) { p.land(t, 0, refSize-2*G, 2*G) }, refSize / G},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newRefPair(t)
			p.land(t, 0, 0, refSize)
			tc.do(t, p)
			assert.Equal(t, tc.stale, p.ref.Stale(p.base))
			p.same(t, 0, refSize)
			assert.Zero(t, p.ref.Stale(p.base), "a read of everything materialises everything")
		})
	}
}

// A block landed whole by reference, in order, has the landed sum of its
// bytes, as a copied one has: from the known sources' sums
// (SetSourceSums) when it came from one contiguous source, else hashed.
func TestLandRefSum(t *testing.T) {
	const G = StaleGranule
	tests := []struct {
		name    string
		land    func(t *testing.T, p *refPair)
		sources int // calls of the source sums
	}{
		{"bursts from one source", func(t *testing.T, p *refPair) {
			for at := uint64(0); at < refSize; at += G {
				p.land(t, at, at, G)
			}
		}, 1},
		{"one landing", func(t *testing.T, p *refPair) { p.land(t, 0, 0, refSize) }, 1},
		{"bursts from two places", func(t *testing.T, p *refPair) {
			p.land(t, 0, 0, refBlkLo+G)
			p.land(t, refBlkLo+G, refBlkLo+2*G, refSize-refBlkLo-2*G)
			p.land(t, refSize-G, 0, G)
		}, 0},
		{"a copied burst among them", func(t *testing.T, p *refPair) {
			p.land(t, 0, 0, refBlkLo+G)
			db, err := p.ref.BytesOverwrite("copy", p.base+refBlkLo+G, G)
			require.NoError(t, err)
			p.ref.Land(p.base+refBlkLo+G, db, p.pattern[refBlkLo+G:refBlkLo+2*G])
			db, err = p.plain.BytesOverwrite("copy", p.base+refBlkLo+G, G)
			require.NoError(t, err)
			p.plain.Land(p.base+refBlkLo+G, db, p.pattern[refBlkLo+G:refBlkLo+2*G])
			p.land(t, refBlkLo+2*G, refBlkLo+2*G, refSize-refBlkLo-2*G)
		}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newRefPair(t)
			tc.land(t, p)
			p.sameSum(t) // both blocks: ok and sums as plain copies give
			p.sourceSums = 0
			v, ok := p.ref.LandedSum(p.base+refBlkLo, refBlkN)
			require.True(t, ok)
			assert.Equal(t, tc.sources, p.sourceSums)
			b, err := p.plain.Bytes("read", p.base+refBlkLo, refBlkN)
			require.NoError(t, err)
			assert.Equal(t, blocksum.Of(b), v)
			p.same(t, 0, refSize)
		})
	}
}

func TestLandRefErrors(t *testing.T) {
	p := newRefPair(t)
	ph, err := p.ref.Alloc(0, PageSize, "phantom", func(_, _ uint64) ([]byte, error) { return nil, nil })
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		addr, n uint64
		want    string
	}{
		{"empty", p.base, 0, "an empty source"},
		{"unaligned address", p.base + 1, StaleGranule, "whole 256 B granules"},
		{"part of a granule", p.base, 100, "whole 256 B granules"},
		{"past the region", p.base + refSize - StaleGranule, 2 * StaleGranule, "past the end of region"},
		{"phantom", ph, StaleGranule, "phantom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.ref.LandRef(tc.addr, p.pattern[:tc.n])
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// A model test: any sequence of landings (by reference in one space, by
// copy in the other), plain copies, reads, writes, stores, partial
// overwrites and re-marking leaves both spaces reading alike at every
// read, with the same landed sums.
func FuzzLandRef(f *testing.F) {
	f.Add([]byte{0, 0, 0, 96})
	f.Add([]byte{0, 0, 0, 96, 2, 4, 1, 50, 6, 5, 3, 9})
	f.Add([]byte{0, 4, 4, 40, 0, 44, 0, 20, 7, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 96, 5, 0, 0, 0, 1, 3, 7, 77, 0, 1, 2, 3})
	f.Add([]byte{0x83, 0, 1, 5, 0, 0, 0, 96, 7, 0, 0, 0})    // the source written, then copied
	f.Add([]byte{0x86, 9, 40, 3, 0, 0, 0, 96, 2, 0, 0, 255}) // the source overwritten in part
	f.Add([]byte{0x84, 0, 1, 4, 0, 0, 0, 96})                // a store into the source, then copied
	f.Fuzz(func(t *testing.T, ops []byte) {
		const G = StaleGranule
		p := newRefPair(t)
		// Block-wise content, as a scenario's pattern blocks are: a
		// landing from the unknown middle block or across blocks copies.
		const pb = 2 * PageSize
		require.NoError(t, p.ref.SetPristine(p.src, pb, [][]byte{p.pattern[:pb:pb], nil, p.pattern[2*pb : 3*pb : 3*pb]}))
		for len(ops) >= 4 {
			kind, a, b, c := ops[0]%8, uint64(ops[1]), uint64(ops[2]), uint64(ops[3])
			// the top bit of the kind aims a write at the source region
			region := p.base
			if ops[0]&0x80 != 0 {
				region = p.src
			}
			ops = ops[4:]
			switch kind {
			case 0: // a landing of whole granules
				at := a % (refSize / G) * G
				n := min(max(c%(refSize/G), 1)*G, refSize-at)
				from := b % (refSize/G - n/G + 1) * G
				p.copySrc(t, at, from, n)
			case 1: // a plain copy of any bytes, in both
				at := (a*61 + c) % refSize
				n := min(max(b*37, 1), refSize-at)
				for _, s := range []*Space{p.ref, p.plain} {
					db, err := s.BytesOverwrite("copy", p.base+at, n)
					require.NoError(t, err)
					s.Land(p.base+at, db, p.pattern[:n])
				}
			case 2: // a read
				at := (a*61 + c) % refSize
				p.same(t, at, min(max(b*19, 1), refSize-at))
			case 3: // a host write
				at := (a*61 + c) % refSize
				data := bytes.Repeat([]byte{byte(c)}, int(min(max(b*23, 1), refSize-at)))
				p.both(t, func(s *Space) error { return s.Write(region+at, data) })
			case 4: // a lane's store
				at := (a*61 + c) % (refSize - 4)
				p.both(t, func(s *Space) error { return s.Store32(region+at, uint32(b<<8|c)) })
			case 5: // marked stale again
				p.both(t, func(s *Space) error { return s.MarkStale(p.base, nil) })
			case 6: // an overwrite of a part, notified
				at := (a*61 + c) % refSize
				n := min(max(b, 1), refSize-at)
				p.both(t, func(s *Space) error {
					w, err := s.BytesOverwrite("poke", region+at, n)
					for i := range w {
						w[i] = byte(c + uint64(i))
					}
					s.Notify(region+at, n)
					return err
				})
			case 7:
				p.sameSum(t)
			}
		}
		p.same(t, 0, refSize)
	})
}

// A region stays pristine (SetPristine) through reads and ends at the
// first write of any kind that reaches any of it.
func TestPristine(t *testing.T) {
	tests := []struct {
		name     string
		do       func(s *Space, src uint64) error
		pristine bool
	}{
		{"nothing", func(*Space, uint64) error { return nil }, true},
		{"a read", func(s *Space, src uint64) error { _, err := s.Bytes("read", src+100, 3000); return err }, true},
		{"a load", func(s *Space, src uint64) error { _, err := s.Load64(src + 64); return err }, true},
		{"a write of its last byte", func(s *Space, src uint64) error { return s.Write(src+refSize-1, []byte{1}) }, false},
		{"a store", func(s *Space, src uint64) error { return s.Store32(src+8, 1) }, false},
		{"a notify", func(s *Space, src uint64) error { s.Notify(src+5000, 1); return nil }, false},
		{"an overwrite, not yet notified", func(s *Space, src uint64) error {
			_, err := s.BytesOverwrite("copy", src+300, 10)
			return err
		}, false},
		{"a landing", func(s *Space, src uint64) error {
			b, err := s.BytesOverwrite("copy", src, 256)
			s.Land(src, b, make([]byte, 256))
			return err
		}, false},
		{"a reference landing", func(s *Space, src uint64) error { _, err := s.LandRef(src, make([]byte, 256)); return err }, false},
		{"marked stale", func(s *Space, src uint64) error { return s.MarkStale(src, nil) }, false},
		{"a write next to it", func(s *Space, src uint64) error { return s.Write(src-1, []byte{1}) }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newRefPair(t)
			require.Equal(t, p.pattern[10:20], p.ref.Pristine(p.src+10, 10))
			require.NoError(t, tc.do(p.ref, p.src))
			got := p.ref.Pristine(p.src, refSize)
			if tc.pristine {
				assert.Equal(t, p.pattern, got)
			} else {
				assert.Nil(t, got)
			}
		})
	}
}

func TestSetPristineErrors(t *testing.T) {
	p := newRefPair(t)
	ph, err := p.ref.Alloc(0, PageSize, "phantom", func(_, _ uint64) ([]byte, error) { return nil, nil })
	require.NoError(t, err)
	whole := [][]byte{p.pattern}
	for _, tc := range []struct {
		name   string
		addr   uint64
		block  uint64
		blocks [][]byte
		want   string
	}{
		{"not a base", p.src + 8, refSize, whole, "not the base"},
		{"a short block", p.src, PageSize, [][]byte{p.pattern[:PageSize-1]}, "block 0 holds 4095 B, not 4096"},
		{"past the region", p.src, PageSize, make([][]byte, refPages+1), "7 blocks of 4096 B for region"},
		{"no blocks", p.src, PageSize, nil, "no content"},
		{"empty blocks", p.src, 0, whole, "no content"},
		{"overflowing", p.src, 1 << 63, make([][]byte, 4), "for region"},
		{"phantom", ph, PageSize, whole, "phantom"},
		{"a hole", 1 << 20, refSize, whole, "unmapped"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorContains(t, p.ref.SetPristine(tc.addr, tc.block, tc.blocks), tc.want)
		})
	}
	assert.Nil(t, p.ref.Pristine(p.src+refSize-8, 16), "past the region")
}

// Block-wise content: a range inside one known block is handed out, with
// room to its block's end; one across blocks, in an unknown block or past
// the blocks is not.
func TestPristineBlocks(t *testing.T) {
	p := newRefPair(t)
	blocks := [][]byte{p.pattern[:PageSize:PageSize], nil, p.pattern[2*PageSize : 3*PageSize : 3*PageSize]}
	require.NoError(t, p.ref.SetPristine(p.src, PageSize, blocks))
	got := p.ref.Pristine(p.src+100, 200)
	require.Equal(t, p.pattern[100:300], got)
	assert.Equal(t, PageSize-100, cap(got), "room to the block's end")
	assert.Equal(t, p.pattern[2*PageSize+8:3*PageSize], p.ref.Pristine(p.src+2*PageSize+8, PageSize-8))
	assert.Nil(t, p.ref.Pristine(p.src+PageSize-8, 16), "across two blocks")
	assert.Nil(t, p.ref.Pristine(p.src+PageSize+8, 16), "an unknown block")
	assert.Nil(t, p.ref.Pristine(p.src+3*PageSize, 16), "past the blocks")
}

// A region landed in more pieces than maxRefRuns keeps landing by
// reference while old runs have no stale granule left, and is refused
// (the caller copies) only when all are live; what it reads is right
// throughout.
func TestLandRefRunsBounded(t *testing.T) {
	const G = StaleGranule
	p := newRefPair(t)
	// Land granule 2i from pattern granule 2i+1, a run each (neither
	// follows the last), beyond the bound: the runs past it are refused
	// while every run is live.
	took := 0
	for i := 0; i < maxRefRuns+4; i++ {
		ok, err := p.ref.LandRef(p.base+uint64(i)*G, p.pattern[uint64(2*i+1)%95*G:][:G])
		require.NoError(t, err)
		if ok {
			took++
		}
	}
	assert.Equal(t, maxRefRuns, took)
	b, err := p.ref.Bytes("read", p.base, 2*G)
	require.NoError(t, err)
	require.Equal(t, append(bytes.Clone(p.pattern[G:2*G]), p.pattern[3*G:4*G]...), b, "referenced granules read as their sources")
	// The two read granules' runs are dead now: two more landings fit.
	for i := 0; i < 3; i++ {
		ok, err := p.ref.LandRef(p.base+uint64(80+2*i)*G, p.pattern[:G])
		require.NoError(t, err)
		assert.Equal(t, i < 2, ok, "landing %d after the reads", i)
	}
	b, err = p.ref.Bytes("read", p.base+80*G, G)
	require.NoError(t, err)
	require.Equal(t, p.pattern[:G], b)
	// A granule landed again by reference reads as the newer source.
	ok, err := p.ref.LandRef(p.base+82*G, p.pattern[9*G:10*G]) // the read freed granule 80's run
	require.NoError(t, err)
	require.True(t, ok)
	b, err = p.ref.Bytes("read", p.base+82*G, G)
	require.NoError(t, err)
	require.Equal(t, p.pattern[9*G:10*G], b, "a granule landed again reads as the newer source")
}

// BenchmarkLandBlock lands a tracked 1 MiB block (an 8-rank 1 MiB
// all-to-all's receive block) from a pattern in 256 B bursts, by copy and
// by reference (its sum hashed from the source, or a known source's sum
// as a pattern cache gives it), and takes its landed sum.
func BenchmarkLandBlock(b *testing.B) {
	const blk = 1 << 20
	pattern := make([]byte, blk)
	for i := range pattern {
		pattern[i] = byte(i*167 + i>>8)
	}
	known := blocksum.Of(pattern)
	for _, tc := range []struct {
		name       string
		ref, known bool
	}{{"copy", false, false}, {"ref", true, false}, {"ref+known_sum", true, true}} {
		ref := tc.ref
		b.Run(tc.name, func(b *testing.B) {
			mem := make([]byte, blk) // one backing for every run: no clear a run
			back := func(_, n uint64) ([]byte, error) { return mem[:n], nil }
			b.SetBytes(blk)
			for b.Loop() {
				s := NewSpace(1, 1<<32, 1<<32, nil)
				base, err := s.Alloc(0, blk, "dst", back)
				require.NoError(b, err)
				require.NoError(b, s.TrackSum(base, blk))
				if tc.known {
					s.SetSourceSums(func(src []byte) (uint64, bool) {
						return known, len(src) == blk && &src[0] == &pattern[0]
					})
				}
				for off := uint64(0); off < blk; off += StaleGranule {
					src := pattern[off : off+StaleGranule]
					// (no require in the loop: its Helper call costs more
					// than a burst)
					if ref {
						if _, err := s.LandRef(base+off, src); err != nil {
							b.Fatal(err)
						}
						continue
					}
					db, err := s.BytesOverwrite("copy", base+off, StaleGranule)
					if err != nil {
						b.Fatal(err)
					}
					s.Land(base+off, db, src)
				}
				_, ok := s.LandedSum(base, blk)
				require.True(b, ok)
			}
		})
	}
}

// Two copies landing in turns into one region, each in granule-sized
// pieces (bursts landed as accesses come), keep one run each: far more
// pieces than maxRefRuns all land by reference. A piece that continues
// a run but lands over a newer run's granules starts a run of its own,
// so the newest landing is what reads.
func TestLandRefInterleavedRuns(t *testing.T) {
	const G = StaleGranule
	p := newRefPair(t)
	half := uint64(refSize / 2)
	// The real landings: pattern[i*G] to granule i, pattern[half+i*G] to granule half/G+i.
	for i := uint64(0); i < half/G; i++ {
		for _, at := range []uint64{i * G, half + i*G} {
			ok, err := p.ref.LandRef(p.base+at, p.pattern[at:at+G])
			require.NoError(t, err)
			require.True(t, ok, "piece at %d", at)
		}
	}
	// The first half again from the pattern's second half, granule by
	// granule: each continues the run before it but meets the older
	// run's granules, which it must override.
	for i := uint64(0); i < 4; i++ {
		ok, err := p.ref.LandRef(p.base+i*G, p.pattern[half+i*G:half+(i+1)*G])
		require.NoError(t, err)
		require.True(t, ok)
	}
	got, err := p.ref.Bytes("read", p.base, refSize)
	require.NoError(t, err)
	want := bytes.Clone(p.pattern)
	copy(want[:4*G], p.pattern[half:half+4*G])
	require.Equal(t, want, got)
}
