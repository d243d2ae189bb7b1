package slab

import "unsafe"

// Arena hands out zeroed objects and runs of objects (Take) from chunks
// it keeps, and after Reset hands the same memory out again: an explore
// worker's seeds build the same node and kernels one after another, so
// an Arena kept across them (in the worker's scratch) makes its chunks
// once instead of once a seed. The zero Arena is ready to use.
//
// What Take returns is zeroed as it is taken, so a run sees the memory a
// fresh make gives whatever the run before it left there. The owner calls
// Reset only once nothing handed out before is used any more: Reset does
// not make old objects unreachable, it makes them someone else's.
type Arena[T any] struct {
	// Grow, if more than Chunk, makes each new chunk twice the last one,
	// up to Grow objects: for objects that come in bursts of unknown
	// size (a run's tracked words). 0 makes chunks of Chunk.
	Grow int

	chunks [][]T // made so far, in order
	cur    int   // the chunk Take carves next
	used   int   // objects taken from chunks[cur]
	kept   int   // objects in chunks
}

// ArenaBytes bounds the bytes of chunks an Arena keeps across Reset: a
// run that needed more (a 64-rank node, a grid of thousands of lanes)
// leaves the rest to the collector, so memory kept is bounded whatever
// the runs were.
const ArenaBytes = 4 << 20

// New returns a pointer to a zeroed T.
func (a *Arena[T]) New() *T { return &a.Take(1)[0] }

// Take returns n (≥ 0) contiguous zeroed objects: a slice of length and
// capacity n, whose appends do not reach other objects.
func (a *Arena[T]) Take(n int) []T {
	if n <= 0 {
		return nil
	}
	for a.cur < len(a.chunks) && a.used+n > len(a.chunks[a.cur]) {
		a.cur++
		a.used = 0
	}
	if a.cur == len(a.chunks) {
		size := Chunk
		if l := len(a.chunks); a.Grow > Chunk && l > 0 {
			size = min(max(2*len(a.chunks[l-1]), Chunk), a.Grow)
		}
		c := make([]T, max(n, size))
		a.chunks = append(a.chunks, c)
		a.kept += len(c)
		s := c[:n:n]
		a.used = n
		return s // fresh from make: already zero
	}
	s := a.chunks[a.cur][a.used : a.used+n : a.used+n]
	clear(s)
	a.used += n
	return s
}

// Reset makes everything taken so far free to be taken again. It keeps
// the chunks in the order they were made, up to ArenaBytes.
func (a *Arena[T]) Reset() {
	a.cur, a.used = 0, 0
	var zero T
	size := max(int(unsafe.Sizeof(zero)), 1)
	if a.kept*size <= ArenaBytes {
		return
	}
	total := 0
	for i, c := range a.chunks {
		if (total+len(c))*size > ArenaBytes {
			clear(a.chunks[i:]) // for the collector
			a.chunks = a.chunks[:i]
			break
		}
		total += len(c)
	}
	a.kept = total
}

// Kept is the objects the Arena holds for reuse.
func (a *Arena[T]) Kept() int { return a.kept }
