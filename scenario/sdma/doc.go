// Package sdma registers the SDMA collectives of the scenario registry:
// alltoall, alltoall-mq, alltoall-split, allgather-ring, relay and
// broadcast-tree, each written against the public cco API the way a
// user's kernel would be, on one deterministic emulated MI355X node
// (scenario.Env), checking every byte it moved and every signal slot it
// touched. Three planted variants sit next to the scenario they break,
// which is their fixed twin: alltoall-early-reuse (alltoall),
// allgather-wrong-queue (allgather-ring) and alltoall-shared-expected
// (alltoall-split).
package sdma
