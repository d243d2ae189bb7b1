// Package cft registers the CFT fabric collectives of the scenario
// registry: cft-allreduce (a u32 sum, pullRed + redMultimem between
// multimem barriers) and cft-alltoall (put to every flat-team peer + a
// unicast barrier), both on NCCL's CFT device API (package fabric) and the
// fabric's own timing model, with --ranks up to 4096 and the topology
// flags.
package cft
