// Package slab makes many small objects of one type a chunk at a time: a
// run that builds a node makes its queues, engines, links and diagnosis
// records one after another and keeps them all until the node is
// dropped, so one allocation for several of them costs nothing in
// lifetime and saves the allocator and the collector an object each
// (issue 43: what a seed of explore allocates).
//
// A Slab is not safe for concurrent use; its owner (a node, a kernel
// launch) makes its objects from one goroutine at a time.
package slab
