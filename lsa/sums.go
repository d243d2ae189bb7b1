package lsa

import (
	"fmt"
	"slices"
	"sort"

	"github.com/emud-dev/emud/internal/blocksum"
)

// Landing sums: a receive check that hashes a large block after a run
// reads every byte of it back from memory (an 8-rank 1 MiB all-to-all's
// 64 MiB a seed, a quarter of the seed's memory traffic). A range the
// check names beforehand (TrackSum) is summed instead as copies land in
// it (Land), a piece at a time while the piece is still in cache, and the
// check takes the sum (LandedSum) without reading the bytes.
//
// The sum is exact or absent: it is given only when copies landed every
// byte of the range once, in address order from its start, and nothing
// else wrote any of it (every write notifies: Notify breaks the sums it
// reaches), so it equals blocksum.Of of the bytes there now. Anything
// else (a byte landed twice or out of order, a lane's store, a host
// write, a piece that would break the hash's 64-byte rows, a range never
// wholly landed, another layer writing the bytes (SetOnNotify)) leaves no
// sum, and the check reads the bytes as before.

// sumTrack is a range TrackSum sums as copies land in it.
type sumTrack struct {
	lo, hi uint64
	front  uint64 // the bytes [lo, front) landed in order and are summed
	h      blocksum.Summer
	broken bool // a write other than the next landing in order reached it
	// deferred, when not nil, is the source that LandRef landed [lo,
	// front) from, one contiguous slice, not yet hashed into h: a whole
	// range landed so takes its sum from SetSourceSums's function.
	deferred []byte
}

// landPiece is how many bytes Land copies before summing them: well
// within a core's first-level cache, so the sum reads what the copy just
// wrote from there, not from memory.
const landPiece = 16 << 10

// SumRanges is a space's tracked ranges (TrackSum), sorted by address;
// its storage can be kept across spaces by a caller that builds them one
// after another (an explore worker's nodes: engine.Scratch), so that a
// seed's 64 ranges are not made again each seed. Its zero value is
// ready; one space uses it at a time.
type SumRanges struct{ t []sumTrack }

// UseSums makes the space keep its tracked ranges in r (its old ranges
// dropped) until Release.
func (s *Space) UseSums(r *SumRanges) {
	r.t = r.t[:0]
	s.sums = r
}

// UsesSums reports whether the space keeps its tracked ranges in r
// (UseSums, until Release).
func (s *Space) UsesSums(r *SumRanges) bool { return s.sums == r }

// ranges is the space's tracked ranges (nil: none).
func (s *Space) ranges() []sumTrack {
	if s.sums == nil {
		return nil
	}
	return s.sums.t
}

// firstSums is the first capacity of a space's tracked ranges: an
// 8-rank all-to-all's receive blocks, in one allocation.
const firstSums = 64

// TrackSum starts summing [addr, addr+n) as copies land in it (Land), for
// LandedSum. The range lies in one region with bytes (not phantom) and
// meets no other tracked range.
func (s *Space) TrackSum(addr, n uint64) error {
	if n == 0 {
		return fmt.Errorf("track sum at %#x: an empty range", addr)
	}
	r, err := s.Region("track sum", addr, n)
	if err != nil {
		return err
	}
	if r.data == nil {
		return fmt.Errorf("track sum [%#x, +%d): region %q is phantom (it holds no bytes)", addr, n, r.Name)
	}
	i, ts := s.sumAt(addr), s.ranges()
	if i < len(ts) && ts[i].lo < addr+n {
		return fmt.Errorf("track sum [%#x, +%d): meets the tracked range [%#x, %#x)", addr, n, ts[i].lo, ts[i].hi)
	}
	if s.sums == nil {
		s.sums = &SumRanges{t: make([]sumTrack, 0, firstSums)}
	}
	s.sums.t = slices.Insert(s.sums.t, i, sumTrack{lo: addr, hi: addr + n, front: addr})
	return nil
}

// LandedSum returns blocksum.Of of [addr, addr+n), a range TrackSum
// tracks, if copies landed all of it in order and nothing else wrote it
// (see above); ok is false otherwise, and the caller reads the bytes.
func (s *Space) LandedSum(addr, n uint64) (sum uint64, ok bool) {
	if s.foreign {
		return 0, false
	}
	i, ts := s.sumAt(addr), s.ranges()
	if i == len(ts) {
		return 0, false
	}
	t := &ts[i]
	if t.lo != addr || t.hi != addr+n || t.broken || t.front != t.hi {
		return 0, false
	}
	if t.deferred != nil && s.sourceSum != nil {
		if v, ok := s.sourceSum(t.deferred); ok {
			return v, true
		}
	}
	t.flush()
	return t.h.Sum(), true
}

// SetSourceSums gives the space fn, which returns blocksum.Of(src) for a
// LandRef source it knows (a pattern block's cached sum) or false: a
// tracked range that LandRef landed whole, in order, from one contiguous
// source then takes its sum (LandedSum) from fn instead of hashing the
// source. Nil removes it.
func (s *Space) SetSourceSums(fn func(src []byte) (uint64, bool)) { s.sourceSum = fn }

// flush hashes the deferred source into h.
func (t *sumTrack) flush() {
	if t.deferred != nil {
		t.h.Write(t.deferred)
		t.deferred = nil
	}
}

// follows reports whether b is the memory right after a's end, within
// a's capacity (so a can be extended over it).
func follows(a, b []byte) bool {
	if len(b) == 0 || cap(a)-len(a) < len(b) {
		return false
	}
	return &a[:len(a)+1][len(a)] == &b[0]
}

// sumAt is the index of the first tracked range that ends after addr.
func (s *Space) sumAt(addr uint64) int {
	ts := s.ranges()
	return sort.Search(len(ts), func(i int) bool { return ts[i].hi > addr })
}

// breakSums marks the tracked ranges that a write to [addr, addr+n)
// reaches: their bytes are no longer only what landed.
func (s *Space) breakSums(addr, n uint64) {
	ts := s.ranges()
	for i := s.sumAt(addr); i < len(ts) && ts[i].lo < addr+n; i++ {
		ts[i].broken = true
	}
}

// Land copies src into dst, the backing of [addr, addr+len(dst)) that
// Bytes or BytesOverwrite returned (a COPY's landing), and notifies the
// write. A tracked range (TrackSum) whose landed front is where a piece
// lands sums the piece right after it is copied; any other the write
// reaches is broken. src and dst are as long, and neither is phantom
// (nil): a copy with a phantom side moves no bytes, and its caller
// notifies the range itself (Notify, which breaks the sums it reaches);
// src shorter than dst is copied as copy does and breaks them too.
func (s *Space) Land(addr uint64, dst, src []byte) {
	if len(s.ranges()) == 0 || len(src) != len(dst) {
		copy(dst, src)
		s.Notify(addr, uint64(len(dst)))
		return
	}
	s.landPieces(addr, dst, src)
}

// landSums is Land's bookkeeping for b, the bytes now at addr (LandRef:
// they read as b though nothing was copied): the tracked ranges it meets
// sum b or break, and the write is notified.
func (s *Space) landSums(addr uint64, b []byte) {
	if len(s.ranges()) == 0 {
		s.Notify(addr, uint64(len(b)))
		return
	}
	s.landPieces(addr, nil, b)
}

// landPieces copies src to dst (nil dst: nothing to copy) a piece at a
// time, summing each piece into the tracked ranges it meets right after,
// and notifies the write.
func (s *Space) landPieces(addr uint64, dst, src []byte) {
	n, ts := uint64(len(src)), s.ranges()
	if i := s.sumAt(addr); i == len(ts) || ts[i].lo >= addr+n {
		copy(dst, src)
		s.notify(addr, n)
		return
	}
	for off := uint64(0); off < n; {
		k := min(landPiece, n-off)
		b := src[off : off+k]
		if dst == nil {
			s.sumPiece(addr+off, b, true)
		} else {
			copy(dst[off:off+k], b)
			s.sumPiece(addr+off, dst[off:off+k], false)
		}
		off += k
	}
	s.notify(addr, n)
}

// sumPiece takes the bytes b just landed at addr into the tracked ranges
// they meet: summed where they continue a range's front (in whole 64-byte
// rows, or ending the range), else the range is broken. With ref, b is
// LandRef's source, read as landed: a range it starts, or continues from
// the same source's next bytes, defers the hash (SetSourceSums), under
// the same rule, deferred bytes counting as written, so that a range has
// a sum after the same landings either way.
func (s *Space) sumPiece(addr uint64, b []byte, ref bool) {
	end := addr + uint64(len(b))
	ts := s.ranges()
	for i := s.sumAt(addr); i < len(ts) && ts[i].lo < end; i++ {
		t := &ts[i]
		if t.broken {
			continue
		}
		lo, hi := max(addr, t.lo), min(end, t.hi)
		whole := t.h.Whole() && len(t.deferred)%64 == 0
		if lo != t.front || !whole || (hi-lo)%64 != 0 && hi != t.hi {
			t.broken = true
			continue
		}
		piece := b[lo-addr : hi-addr]
		switch {
		case ref && lo == t.lo:
			t.deferred = piece
		case ref && t.deferred != nil && follows(t.deferred, piece):
			t.deferred = t.deferred[:len(t.deferred)+len(piece)]
		default:
			t.flush()
			t.h.Write(piece)
		}
		t.front = hi
	}
}
