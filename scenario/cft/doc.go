// Package cft registers the CFT fabric collectives of the scenario
// registry: cft-allreduce (a u32 sum, pullRed + redMultimem between
// multimem barriers) and cft-alltoall (put to every flat-team peer + a
// unicast barrier), both on NCCL's CFT device API (package fabric) and the
// fabric's own timing model, with --ranks up to 4096 and the topology
// flags; and cft-counted-allgather (NCCL 2.32 counted writes: every peer's
// putCounted adds its bytes to one counter per receiver, which waits for
// their sum) with its planted twin cft-counted-short, whose receivers wait
// for one producer's bytes fewer than all of them deliver.
package cft
