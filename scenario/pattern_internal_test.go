package scenario

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The in-place fill and compare agree with Pattern on both paths (cached
// and computed), and the compare finds one wrong byte anywhere, the tail
// past the last whole word included.
func TestPatternEqualAndFill(t *testing.T) {
	for _, n := range []int{1, 7, 8, 13, 4096, 100_003} {
		want := PatternOf(uint64(n), 0, 3, 5)
		got := make([]byte, n)
		fillPattern(got, 3, 5)
		assert.Equal(t, want, got, "fill, %d B", n)
		assert.True(t, patternEqual(got, 3, 5), "cached compare, %d B", n)
		assert.True(t, patternEqualComputed(got, 3, 5), "computed compare, %d B", n)
		assert.False(t, patternEqualComputed(got, 5, 3), "another block, %d B", n)
		for _, at := range []int{0, n / 2, n - 1} {
			got[at] ^= 0x40
			assert.False(t, patternEqual(got, 3, 5), "cached compare, %d B, byte %d flipped", n, at)
			assert.False(t, patternEqualComputed(got, 3, 5), "computed compare, %d B, byte %d flipped", n, at)
			got[at] ^= 0x40
		}
	}
}
