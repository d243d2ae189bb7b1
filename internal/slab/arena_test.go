package slab

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/racebuild"
)

// TestArenaTakeZeroedAfterReset: what Take hands out is zeroed and
// disjoint, in the first round and after Reset, whatever the round before
// wrote, for runs of one object, of a chunk and of more than a chunk.
func TestArenaTakeZeroedAfterReset(t *testing.T) {
	tests := []struct {
		name  string
		sizes []int
	}{
		{"single objects", []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1}},
		{"a chunk", []int{Chunk}},
		{"runs past a chunk", []int{3, Chunk + 2, 1, 5 * Chunk, 7}},
		{"empty runs", []int{0, 2, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var a Arena[rec]
			for round := range 3 {
				seen := map[*rec]bool{}
				for i, n := range tc.sizes {
					s := a.Take(n)
					require.Len(t, s, n)
					assert.Equal(t, n, cap(s), "an append must not reach the next run")
					for j := range s {
						assert.Equal(t, rec{}, s[j], "round %d run %d object %d is not zeroed", round, i, j)
						assert.False(t, seen[&s[j]], "round %d: object handed out twice", round)
						seen[&s[j]] = true
						s[j] = rec{a: round + 1, b: -(round + 1)}
					}
				}
				a.Reset()
			}
		})
	}
}

// TestArenaReusesAfterReset: a round that takes what the round before
// took allocates nothing.
func TestArenaReusesAfterReset(t *testing.T) {
	if racebuild.Enabled {
		t.Skip("the race detector's instrumentation allocates on its own")
	}
	var a Arena[rec]
	round := func() {
		a.Reset()
		for _, n := range []int{1, 64, 3, 1, 200} {
			a.Take(n)
		}
	}
	round()
	assert.Zero(t, testing.AllocsPerRun(10, round))
}

// TestArenaBound: Reset keeps at most ArenaBytes of chunks, so a run that
// took more leaves the rest to the collector.
func TestArenaBound(t *testing.T) {
	type big [4096]byte
	var a Arena[big]
	per := ArenaBytes / int(unsafe.Sizeof(big{}))
	a.Take(per / 2)
	a.Take(per)
	a.Take(3)
	a.Reset()
	assert.Equal(t, per/2, a.Kept(), "the chunks past the bound are dropped")
	assert.Len(t, a.Take(per/2), per/2)
	a.Reset()
	assert.Equal(t, per/2, a.Kept())
}

// TestArenaGrow: with Grow, each new chunk doubles the last, up to Grow.
func TestArenaGrow(t *testing.T) {
	a := Arena[rec]{Grow: 4 * Chunk}
	for range 11 * Chunk {
		a.New()
	}
	var sizes []int
	for _, c := range a.chunks {
		sizes = append(sizes, len(c))
	}
	assert.Equal(t, []int{Chunk, 2 * Chunk, 4 * Chunk, 4 * Chunk}, sizes)
}
