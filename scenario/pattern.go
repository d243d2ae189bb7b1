package scenario

import (
	"encoding/binary"
	"math"
	"sync"

	"github.com/emud-dev/emud/fabric/redop"
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
// that are computed as before.
var patternCache struct {
	sync.Mutex
	m     map[patternKey][]byte
	bytes uint64
}

type patternKey struct {
	n        uint64
	src, dst int
}

const patternCacheMax = 256 << 20

// patternBlock is Pattern(n bytes, key 0, src, dst), shared: do not write
// to it.
func patternBlock(n uint64, src, dst int) []byte {
	k := patternKey{n, src, dst}
	patternCache.Lock()
	b := patternCache.m[k]
	patternCache.Unlock()
	if b != nil {
		return b
	}
	b = PatternOf(n, 0, src, dst)
	patternCache.Lock()
	defer patternCache.Unlock()
	if old := patternCache.m[k]; old != nil {
		return old
	}
	if patternCache.bytes+n <= patternCacheMax {
		if patternCache.m == nil {
			patternCache.m = map[patternKey][]byte{}
		}
		patternCache.m[k] = b
		patternCache.bytes += n
	}
	return b
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
