// Package slab makes many small objects of one type a chunk at a time: a
// run that builds a node makes its queues, engines, links and diagnosis
// records one after another and keeps them all until the node is
// dropped, so one allocation for several of them costs nothing in
// lifetime and saves the allocator and the collector an object each
// (issue 43: what a seed of explore allocates).
//
// A Slab lets its chunks go with its objects. An Arena keeps them and,
// after Reset, hands the same memory out again, zeroed: an explore
// worker keeps Arenas across its seeds (the kernels' lanes and waves,
// the lanes' ccoSdma handles), so a seed takes what the seed before it
// took instead of making it. An Arena keeps at most ArenaBytes.
//
// Neither is safe for concurrent use; the owner (a node, a kernel
// launch, a worker's scratch) makes its objects from one goroutine at a
// time.
package slab
