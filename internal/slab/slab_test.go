package slab

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/emud-dev/emud/internal/racebuild"
)

type rec struct {
	a, b int
}

func TestNewDistinctZeroed(t *testing.T) {
	tests := []struct {
		name string
		n    int
	}{
		{"one", 1},
		{"a chunk", Chunk},
		{"past the first chunk", Chunk + 1},
		{"many chunks", 9*Chunk + 7},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var s Slab[rec]
			seen := map[*rec]bool{}
			for i := 0; i < tc.n; i++ {
				r := s.New()
				require.NotNil(t, r)
				assert.Equal(t, rec{}, *r, "object %d is not zeroed", i)
				assert.False(t, seen[r], "object %d handed out twice", i)
				seen[r] = true
				r.a, r.b = i, -i // writing one must not touch another
			}
			for r := range seen {
				assert.Equal(t, -r.a, r.b)
			}
		})
	}
}

func TestNewAllocatesPerChunk(t *testing.T) {
	if racebuild.Enabled {
		t.Skip("the race detector's instrumentation allocates on its own")
	}
	var s Slab[rec]
	allocs := testing.AllocsPerRun(1, func() {
		s = Slab[rec]{}
		for i := 0; i < 16; i++ {
			s.New()
		}
	})
	// Two chunks cover 16 objects: 2 allocations, not 16.
	assert.LessOrEqual(t, allocs, 2.0)
}
