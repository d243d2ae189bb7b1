package scenario

import (
	"encoding/binary"
	"maps"
	"math"
	"sync"
	"sync/atomic"

	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/hostmem"
	"github.com/emud-dev/emud/internal/blocksum"
)

// Pattern fills b with the block src sends to dst under key: 64-bit
// little-endian words of a splitmix64 hash of (key, src, dst, word index),
// so any misplaced, shifted or stale block differs from what belongs
// there. It is the one data pattern of every scenario: the SDMA
// collectives use key 0 with (source rank, destination rank), the corpus
// programs (rank, tag), the CFT collectives the run's seed.
func Pattern(b []byte, key uint64, src, dst int) {
	patternFrom(b, patternWordKey(key, src, dst), 0)
}

// patternWordKey is the per-block key of Pattern's words.
func patternWordKey(key uint64, src, dst int) uint64 {
	if key == 0 {
		return mix64(uint64(src)<<32 | uint64(uint32(dst)))
	}
	return mix64(key ^ mix64(uint64(src)<<32|uint64(uint32(dst))))
}

// patternFrom writes Pattern's words from word w0 on into b: word w0+j
// at b[8j:], the last one cut short if b is.
func patternFrom(b []byte, k, w0 uint64) {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], mix64(k+w0+uint64(i/8)))
	}
	if i < len(b) {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], mix64(k+w0+uint64(i/8)))
		copy(b[i:], w[:])
	}
}

// patternCache keeps blocks of Pattern with key 0 (the SDMA scenarios'
// send blocks and expected receive blocks, the same for every seed), so
// that explore's runs after the first copy them instead of computing
// them twice a run, and the sums (blockSum) of the blocks the receive
// check hashes. It holds at most patternCacheMax bytes of blocks; blocks
// past that are computed in place (fillPattern, patternEqualComputed) as
// before. The cached blocks live outside the Go heap (package hostmem):
// they last the process, and neither raise the collector's heap goal nor,
// under the race detector, carry shadow memory.
//
// Readers share no lock: the blocks and sums are an immutable snapshot
// (patternSnap) that a reader loads once per window it fills or checks;
// a miss takes the mutex, adds to a copy of the snapshot and publishes
// it. Explore's workers thus write nothing shared once the first seeds
// have filled the cache (before, every block of every seed took the
// mutex twice).
var patternCache struct {
	sync.Mutex
	snap  atomic.Pointer[patternSnap]
	bytes uint64
	slab  []byte // the rest of the mapping blocks are carved from
}

// patternSnap is one published state of patternCache: never written once
// published.
type patternSnap struct {
	blocks map[patternKey][]byte
	at     map[*byte]patternKey // each block's first byte: which block a slice is (patternSourceSum)
	sums   map[patternKey]uint64
	full   uint64 // a block of this many bytes or more no longer fits (0: any may)
}

// patternSlab is the size of the mappings the cache carves its blocks
// from: whole huge pages (package hostmem), so that computing a block
// into fresh memory takes a fault per 2 MiB, not per 4 KiB page.
const patternSlab = 16 << 20

type patternKey struct {
	n        uint64
	src, dst int
}

const patternCacheMax = 128 << 20

// patterns is the current snapshot (never nil).
func patterns() *patternSnap {
	if s := patternCache.snap.Load(); s != nil {
		return s
	}
	return &patternSnap{}
}

// block is Pattern(n bytes, key 0, src, dst) from the cache, computed and
// kept on first use while the cache has room; nil when it has none.
// Shared: do not write to it.
func (s *patternSnap) block(n uint64, src, dst int) []byte {
	if b := s.blocks[patternKey{n, src, dst}]; b != nil {
		return b
	}
	if n == 0 || s.full != 0 && n >= s.full {
		return nil // nothing to keep, or past the cache: no lock taken for it
	}
	return cachePattern(n, src, dst)
}

// sum is blockSum of Pattern(n bytes, key 0, src, dst), computed and kept
// on first use.
func (s *patternSnap) sum(n uint64, src, dst int) uint64 {
	if v, ok := s.sums[patternKey{n, src, dst}]; ok {
		return v
	}
	return cacheSum(n, src, dst)
}

// patternSourceSum is blockSum(b) when b is a whole block of the cache
// (lsa.Space.SetSourceSums): a receive block landed whole by reference
// from it (Env.setPristine) is checked by the block's cached sum.
func patternSourceSum(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	s := patterns()
	k, ok := s.at[&b[0]]
	if !ok || k.n != uint64(len(b)) {
		return 0, false
	}
	return s.sum(k.n, k.src, k.dst), true
}

// cachePattern is the miss path of patternSnap.block.
func cachePattern(n uint64, src, dst int) []byte {
	k := patternKey{n, src, dst}
	patternCache.Lock()
	defer patternCache.Unlock()
	old := patterns()
	if b := old.blocks[k]; b != nil {
		return b // another worker added it meanwhile
	}
	if n == 0 {
		return nil
	}
	if patternCache.bytes+n > patternCacheMax {
		if old.full == 0 || n < old.full {
			next := *old
			next.full = n
			patternCache.snap.Store(&next)
		}
		return nil
	}
	var b []byte
	if hostmem.OffHeap && n >= 64<<10 {
		if uint64(len(patternCache.slab)) < n {
			m, err := hostmem.Map(max(n, patternSlab))
			if err != nil {
				return nil // no room outside the heap: compute in place
			}
			patternCache.slab = m
		}
		b = patternCache.slab[:n:n]
		patternCache.slab = patternCache.slab[n:]
	} else {
		b = make([]byte, n)
	}
	Pattern(b, 0, src, dst)
	next := &patternSnap{blocks: make(map[patternKey][]byte, len(old.blocks)+1), at: make(map[*byte]patternKey, len(old.at)+1), sums: old.sums, full: old.full}
	maps.Copy(next.blocks, old.blocks)
	maps.Copy(next.at, old.at)
	next.blocks[k] = b
	next.at[&b[0]] = k
	patternCache.snap.Store(next)
	patternCache.bytes += n
	return b
}

// cacheSum is the miss path of patternSnap.sum: the block's sum from the
// cached block, or from the pattern computed a chunk at a time.
func cacheSum(n uint64, src, dst int) uint64 {
	k := patternKey{n, src, dst}
	var v uint64
	if b := patterns().block(n, src, dst); b != nil {
		v = blockSum(b)
	} else {
		v = patternSumComputed(n, src, dst)
	}
	patternCache.Lock()
	defer patternCache.Unlock()
	old := patterns()
	next := &patternSnap{blocks: old.blocks, at: old.at, sums: make(map[patternKey]uint64, len(old.sums)+1), full: old.full}
	maps.Copy(next.sums, old.sums)
	next.sums[k] = v
	patternCache.snap.Store(next)
	return v
}

// patternSumComputed is blockSum of Pattern(n bytes, key 0, src, dst)
// without a buffer of n bytes: the pattern is computed into a small one,
// a chunk at a time.
func patternSumComputed(n uint64, src, dst int) uint64 {
	var chunk [4096]byte
	var h blocksum.Summer
	k := patternWordKey(0, src, dst)
	for off := uint64(0); off < n; off += uint64(len(chunk)) {
		c := chunk[:min(uint64(len(chunk)), n-off)]
		patternFrom(c, k, off/8)
		h.Write(c)
	}
	return h.Sum()
}

// fillPattern writes Pattern(len(dst) bytes, key 0, src, dst) into dst.
func fillPattern(s *patternSnap, b []byte, src, dst int) {
	if c := s.block(uint64(len(b)), src, dst); c != nil {
		copy(b, c)
		return
	}
	Pattern(b, 0, src, dst)
}

// sumMin is the block size from which the receive check hashes a block
// (one stream over it, blockSum) instead of comparing it with the cached
// block (two streams): a block that large comes from memory, not cache,
// and on a host whose cores share memory bandwidth (explore at --jobs 16)
// the bytes read are the cost. Smaller blocks sit in cache, where the
// compare is faster than the hash.
const sumMin = 64 << 10

// patternEqual reports whether got holds Pattern(len(got) bytes, key 0,
// src, dst): from sumMin bytes by its blockSum against the pattern's
// (equal bytes have equal sums; unequal bytes whose sums agree would need
// differences in two lanes of blockSum that cancel, about 2^-64 for
// wrong data that is not built to), below it against the cached block or,
// past the cache, against the pattern computed a word at a time (no
// buffer). A false here is confirmed and described byte by byte by the
// caller (Checker.Block), so the report is the compare's.
func patternEqual(s *patternSnap, got []byte, src, dst int) bool {
	n := uint64(len(got))
	if n >= sumMin {
		return blockSum(got) == s.sum(n, src, dst)
	}
	if c := s.block(n, src, dst); c != nil {
		return string(got) == string(c)
	}
	return patternEqualComputed(got, src, dst)
}

// patternEqualComputed is patternEqual without the cache.
func patternEqualComputed(got []byte, src, dst int) bool {
	k := patternWordKey(0, src, dst)
	i := 0
	for ; i+8 <= len(got); i += 8 {
		if binary.LittleEndian.Uint64(got[i:]) != mix64(k+uint64(i/8)) {
			return false
		}
	}
	if i < len(got) {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], mix64(k+uint64(i/8)))
		return string(got[i:]) == string(w[:len(got)-i])
	}
	return true
}

// PatternOf is Pattern into a new buffer of n bytes.
func PatternOf(n uint64, key uint64, src, dst int) []byte {
	b := make([]byte, n)
	Pattern(b, key, src, dst)
	return b
}

// Elements is Pattern viewed as elements of t: the raw bits for integer
// types, and for F32 small integers (−64..64) so that every order of
// summation is exact.
func Elements(b []byte, t redop.Type, key uint64, src, dst int) {
	Pattern(b, key, src, dst)
	if t != redop.F32 {
		return
	}
	for i := 0; i+4 <= len(b); i += 4 {
		v := binary.LittleEndian.Uint32(b[i:])
		binary.LittleEndian.PutUint32(b[i:], math.Float32bits(float32(int(v%129)-64)))
	}
}

// mix64 is the splitmix64 finaliser.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
