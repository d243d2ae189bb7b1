package scenario

import (
	"encoding/binary"
	"math"
	"sync"

	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/hostmem"
)

// Pattern fills b with the block src sends to dst under key: 64-bit
// little-endian words of a splitmix64 hash of (key, src, dst, word index),
// so any misplaced, shifted or stale block differs from what belongs
// there. It is the one data pattern of every scenario: the SDMA
// collectives use key 0 with (source rank, destination rank), the corpus
// programs (rank, tag), the CFT collectives the run's seed.
func Pattern(b []byte, key uint64, src, dst int) {
	k := mix64(key ^ mix64(uint64(src)<<32|uint64(uint32(dst))))
	if key == 0 {
		k = mix64(uint64(src)<<32 | uint64(uint32(dst)))
	}
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], mix64(k+uint64(i/8)))
	}
	if i < len(b) {
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], mix64(k+uint64(i/8)))
		copy(b[i:], w[:])
	}
}

// patternCache keeps blocks of Pattern with key 0 (the SDMA scenarios'
// send blocks and expected receive blocks, the same for every seed), so
// that explore's runs after the first copy them instead of computing
// them twice a run. It holds at most patternCacheMax bytes; blocks past
// that are computed in place (fillPattern, patternEqual) as before. The
// cached blocks live outside the Go heap (package hostmem): they last the
// process, and neither raise the collector's heap goal nor, under the race
// detector, carry shadow memory.
var patternCache struct {
	sync.Mutex
	m     map[patternKey][]byte
	bytes uint64
	slab  []byte // the rest of the mapping blocks are carved from
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

// cachedPattern is Pattern(n bytes, key 0, src, dst) from the cache,
// computed and kept on first use while the cache has room; nil when it
// has none. Shared: do not write to it.
func cachedPattern(n uint64, src, dst int) []byte {
	k := patternKey{n, src, dst}
	patternCache.Lock()
	defer patternCache.Unlock()
	if b := patternCache.m[k]; b != nil {
		return b
	}
	if n == 0 || patternCache.bytes+n > patternCacheMax {
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
	if patternCache.m == nil {
		patternCache.m = map[patternKey][]byte{}
	}
	patternCache.m[k] = b
	patternCache.bytes += n
	return b
}

// fillPattern writes Pattern(len(dst) bytes, key 0, src, dst) into dst.
func fillPattern(b []byte, src, dst int) {
	if c := cachedPattern(uint64(len(b)), src, dst); c != nil {
		copy(b, c)
		return
	}
	Pattern(b, 0, src, dst)
}

// patternEqual reports whether got holds Pattern(len(got) bytes, key 0,
// src, dst), comparing against the cached block or, past the cache,
// against the pattern computed a word at a time (no buffer).
func patternEqual(got []byte, src, dst int) bool {
	if c := cachedPattern(uint64(len(got)), src, dst); c != nil {
		return string(got) == string(c)
	}
	return patternEqualComputed(got, src, dst)
}

// patternEqualComputed is patternEqual without the cache.
func patternEqualComputed(got []byte, src, dst int) bool {
	k := mix64(uint64(src)<<32 | uint64(uint32(dst)))
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
