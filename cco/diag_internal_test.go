package cco

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRankedCausesMerge(t *testing.T) {
	for _, tc := range []struct {
		ranks []int
		want  string
	}{
		{nil, "a rank waits"},
		{[]int{3}, "rank 3 waits"},
		{[]int{2, 0, 1, 3}, "ranks 0–3 each wait"},
		{[]int{0, 2, 4, 5, 6}, "ranks 0, 2, 4–6 each wait"},
	} {
		assert.Equal(t, tc.want, who(tc.ranks), "%v", tc.ranks)
	}
	text, r := splitRanked(ranked(12, "x "+whoMark+" y"))
	assert.Equal(t, 12, r)
	assert.Equal(t, "x "+whoMark+" y", text)
	plain, r := splitRanked("a plain cause")
	assert.Equal(t, -1, r)
	assert.Equal(t, "a plain cause", plain)
}
