package sim

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestEventQueueOrder: whatever mix of pushes and pops, the queue (its
// runs and its heap together) pops in (t, seq) order, the order a plain
// sort of the pending entries gives, with times that mostly grow (what
// fills the runs) and some that go back (what the heap takes).
func TestEventQueueOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var q eventQueue
		var pending []heapEntry
		var seq uint64
		var base Time
		steps := rapid.IntRange(1, 3000).Draw(rt, "steps")
		for i := range steps {
			if len(pending) > 0 && rapid.IntRange(0, 2).Draw(rt, "op") == 0 {
				slices.SortFunc(pending, func(a, b heapEntry) int {
					if c := cmp.Compare(a.t, b.t); c != 0 {
						return c
					}
					return cmp.Compare(a.seq, b.seq)
				})
				tm, ok := q.peekTime()
				require.True(rt, ok)
				require.Equal(rt, pending[0].t, tm)
				require.Equal(rt, pending[0].id, q.pop(), "pop %d", i)
				pending = pending[1:]
				continue
			}
			seq++
			tm := base + Time(rapid.IntRange(0, 40).Draw(rt, "dt"))
			if rapid.IntRange(0, 3).Draw(rt, "grow") == 0 {
				base = tm
			}
			e := &event{t: tm, seq: seq, id: uint32(seq)}
			q.push(e)
			pending = append(pending, heapEntry{tm, seq, e.id})
			require.Equal(rt, len(pending), q.len())
		}
		for len(pending) > 0 {
			slices.SortFunc(pending, func(a, b heapEntry) int {
				if c := cmp.Compare(a.t, b.t); c != 0 {
					return c
				}
				return cmp.Compare(a.seq, b.seq)
			})
			require.Equal(rt, pending[0].id, q.pop())
			pending = pending[1:]
		}
		_, ok := q.peekTime()
		require.False(rt, ok)
		require.Zero(rt, q.len())
	})
}

// TestEventQueueManyRuns: more monotone streams than runs, each longer
// than a block, popped while they are pushed: the pops come out sorted
// and every entry comes out once.
func TestEventQueueManyRuns(t *testing.T) {
	var q eventQueue
	var seq uint64
	var out []heapEntry
	popOne := func() {
		_, x, ok := q.first()
		require.True(t, ok)
		e := *x
		require.Equal(t, e.id, q.pop())
		out = append(out, e)
	}
	for i := range 20000 {
		for s := range queueRuns + 3 {
			seq++
			tm := Time(i*7 + s*1000 + int(seq%5))
			q.push(&event{t: tm, seq: seq, id: uint32(seq)})
		}
		if i%3 != 0 {
			popOne()
		}
	}
	for q.len() > 0 {
		popOne()
	}
	require.Len(t, out, int(seq))
	seen := map[uint32]bool{}
	for i, e := range out {
		require.False(t, seen[e.id])
		seen[e.id] = true
		if i > 0 {
			require.True(t, out[i-1].before(&e), "entry %d out of order", i)
		}
	}
}
