package main

import (
	"fmt"

	"github.com/emud-dev/emud/fabric"
	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/kernel"
)

// The cft-allreduce scenario is fabric.RunAllReduce: NCCL's CFT device API
// on an NVLink-class fabric, one multicast team of all ranks. Each rank
// owns one chunk: it pullReds the chunk's sum over all members' inputs
// (multicast LE), then redMultimems it into every member's output, between
// two multimem barriers. Every byte of every rank's output is checked, on
// the host and through a kernel load under the fence checker when --debug.
//
// It runs on the fabric's own timing model (NVLink 5 defaults, see package
// fabric), not an SDMA model, and has no SDMA queues to trace.

func init() {
	register(&scenario{
		name:    "cft-allreduce",
		summary: "u32 sum all-reduce over the CFT fabric: pullRed + redMultimem + multimem barriers (NCCL device API)",
		bytes:   "per rank (a multiple of 16)",
		noSDMA:  true,
		check:   checkCftAllReduce,
		run:     runCftAllReduce,
	})
}

func checkCftAllReduce(o options) error {
	switch {
	case o.Bytes%16 != 0:
		return fmt.Errorf("invalid --bytes %s: cft-allreduce chunks must be a multiple of 16 bytes", formatBytes(o.Bytes))
	case o.Bytes+16 > kernel.MaxSharedBytes:
		return fmt.Errorf("invalid --bytes %s: a cft-allreduce chunk is staged in shared memory, at most %s", formatBytes(o.Bytes), formatBytes(kernel.MaxSharedBytes-16))
	case o.Model != "":
		return fmt.Errorf("invalid --model %q: cft-allreduce runs on the fabric's own timing model, not an SDMA model", o.Model)
	}
	return nil
}

func runCftAllReduce(o options) (*outcome, error) {
	res, err := fabric.RunAllReduce(fabric.AllReduceConfig{Seed: o.Seed, Topology: fabric.Topology{NRanks: o.Ranks},
		Chunk: int(o.Bytes), Type: redop.U32, Debug: o.Debug})
	if err != nil {
		if res != nil { // the run finished and a byte was wrong
			return nil, &mismatchError{Scenario: "cft-allreduce", Seed: o.Seed, Detail: err.Error()}
		}
		return nil, err
	}
	if len(res.Reports) > 0 {
		return nil, fmt.Errorf("cft-allreduce: flush reported errors: %v", res.Reports)
	}
	out := &outcome{Model: "fabric (NVLink 5 defaults)", End: res.Elapsed, Seed: o.Seed, Digest: res.Digest}
	size := uint64(len(res.Want))
	for r := 0; r < o.Ranks; r++ {
		// Each rank multicasts its reduced chunk to every member and
		// receives the whole output.
		out.Ranks = append(out.Ranks, rankResult{Rank: r, Finish: res.Elapsed, BytesSent: o.Bytes * uint64(o.Ranks), BytesReceived: size})
	}
	return out, nil
}
