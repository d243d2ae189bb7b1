package slab

// Slab hands out zeroed *T from chunks of Chunk objects it makes as
// needed: the zero Slab is ready to use. An object stays valid as long as
// its owner keeps it; its chunk is freed when none of the chunk's objects
// is reachable.
type Slab[T any] struct {
	buf []T
}

// Chunk is a chunk's length: a fixed one wastes at most Chunk-1 objects
// (doubling chunks left a 16-queue node with 12 unused queues, more bytes
// than the allocations saved), and a node's queues come in multiples of
// its GPUs, 4 or 8.
const Chunk = 8

// New returns a pointer to a zeroed T.
func (s *Slab[T]) New() *T {
	if len(s.buf) == cap(s.buf) {
		s.buf = make([]T, 0, Chunk)
	}
	var zero T
	s.buf = append(s.buf, zero)
	return &s.buf[len(s.buf)-1]
}
