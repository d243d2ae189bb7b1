package scenario

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/blocksum"
)

// The in-place fill and compare agree with Pattern on every path (cached
// bytes, the hashed check from sumMin bytes, computed), and the compare
// finds one wrong byte anywhere, the tail past the last whole word
// included.
func TestPatternEqualAndFill(t *testing.T) {
	for _, n := range []int{1, 7, 8, 13, 4096, 100_003, sumMin, sumMin + 5} {
		want := PatternOf(uint64(n), 0, 3, 5)
		got := make([]byte, n)
		fillPattern(patterns(), got, 3, 5)
		assert.Equal(t, want, got, "fill, %d B", n)
		assert.True(t, patternEqual(patterns(), got, 3, 5), "cached compare, %d B", n)
		assert.True(t, patternEqualComputed(got, 3, 5), "computed compare, %d B", n)
		assert.False(t, patternEqual(patterns(), got, 5, 3), "another block, %d B", n)
		assert.False(t, patternEqualComputed(got, 5, 3), "another block, %d B", n)
		for _, at := range []int{0, n / 2, n - 1} {
			got[at] ^= 0x40
			assert.False(t, patternEqual(patterns(), got, 3, 5), "cached compare, %d B, byte %d flipped", n, at)
			assert.False(t, patternEqualComputed(got, 3, 5), "computed compare, %d B, byte %d flipped", n, at)
			got[at] ^= 0x40
		}
	}
}

// blockSum changes with any one wrong byte, at every position of blocks
// around the lanes' 64-byte stride and its tails, whatever the wrong
// value.
func TestBlockSumCatchesOneByte(t *testing.T) {
	for _, n := range []int{1, 7, 8, 9, 63, 64, 65, 127, 128, 200, 4096 + 13} {
		b := PatternOf(uint64(n), 0, 1, 2)
		want := blockSum(b)
		for at := range n {
			for _, flip := range []byte{0x01, 0x80, 0xff} {
				b[at] ^= flip
				assert.NotEqual(t, want, blockSum(b), "%d B, byte %d ^ %#02x", n, at, flip)
				b[at] ^= flip
			}
		}
		assert.Equal(t, want, blockSum(b), "%d B restored", n)
	}
}

// The hashed check (blocks from sumMin bytes) misses no one-byte
// corruption at any position and leaves the report to the byte compare:
// Checker.Block names the same first wrong byte as for any block.
func TestHashedCheckReportsFirstWrongByte(t *testing.T) {
	n := sumMin + 13
	got := PatternOf(uint64(n), 0, 4, 6)
	pats := patterns()
	require.True(t, patternEqual(pats, got, 4, 6))
	for at := 0; at < n; at += 997 { // a prime stride: every lane and word offset
		for _, pos := range []int{at, n - 1 - at%13} {
			got[pos] ^= 0x5a
			require.False(t, patternEqual(pats, got, 4, 6), "byte %d wrong", pos)
			var c Checker
			c.Block("blk", got, PatternOf(uint64(n), 0, 4, 6))
			assert.Equal(t, 1, c.Failed())
			want := fmt.Sprintf("blk: 1 of %d bytes wrong, first at block offset %d (got %#02x, want %#02x)", n, pos, got[pos], got[pos]^0x5a)
			assert.Equal(t, want, c.first)
			got[pos] ^= 0x5a
		}
	}
	assert.True(t, patternEqual(pats, got, 4, 6), "restored")
}

// blockSum written a piece at a time (multiples of 64 bytes, then the
// rest) is blockSum of the whole, and the expected block's sum computed a
// chunk at a time without the block is the block's.
func TestBlockSumPieces(t *testing.T) {
	for _, n := range []int{0, 1, 64, 4096, 4096 + 64, 3*4096 + 17, 1 << 20} {
		b := PatternOf(uint64(n), 0, 2, 7)
		want := blockSum(b)
		for _, piece := range []int{64, 4096} {
			var h blocksum.Summer
			rest := b
			for len(rest) > piece {
				h.Write(rest[:piece])
				rest = rest[piece:]
			}
			h.Write(rest)
			assert.Equal(t, want, h.Sum(), "%d B in %d B pieces", n, piece)
		}
		assert.Equal(t, want, patternSumComputed(uint64(n), 2, 7), "%d B computed", n)
	}
	assert.NotEqual(t, blockSum(make([]byte, 8)), blockSum(make([]byte, 9)), "the length counts: zero padding is not data")
}

// A block past the cache's room is refused once under the mutex, and the
// published snapshot then refuses it (and larger ones) without the lock:
// explore's seeds of a shape past the cache take no lock per block.
func TestPatternCacheFull(t *testing.T) {
	const n = patternCacheMax + 1
	assert.Nil(t, patterns().block(n, 1, 2), "past the cache")
	s := patterns()
	assert.NotZero(t, s.full)
	assert.LessOrEqual(t, s.full, uint64(n), "the published snapshot knows it does not fit")
	patternCache.Lock() // a lookup that took the lock would wait here
	done := make(chan []byte)
	go func() { done <- s.block(n+8, 1, 2) }()
	select {
	case got := <-done:
		patternCache.Unlock()
		assert.Nil(t, got)
	case <-time.After(10 * time.Second):
		patternCache.Unlock() // let it finish: later tests use the cache
		<-done
		t.Fatal("the lookup of a block past the cache took the mutex")
	}
	assert.Nil(t, s.block(0, 1, 2), "an empty block")
}
