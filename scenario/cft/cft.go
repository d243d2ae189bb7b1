package cft

import (
	"fmt"

	"github.com/emud-dev/emud/job"
	"github.com/emud-dev/emud/scenario"

	"github.com/emud-dev/emud/fabric/redop"
	"github.com/emud-dev/emud/kernel"
)

// The cft-allreduce scenario is RunAllReduce: NCCL's CFT device API
// on an NVLink-class fabric, one multicast team per --mc-size ranks (all
// ranks by default). Each rank's --bytes buffer is split into one chunk per
// team rank; each rank pullReds its chunk's sum over all members' inputs
// (multicast LE), then redMultimems it into every member's output, a
// shared-memory piece at a time, between two multimem barriers. Every byte
// of every rank's output is checked, on the host and through a kernel load
// (under the fence checker with --debug); --phantom skips that.
//
// The cft-alltoall scenario is RunAllToAll: each rank puts a block
// to every member of its flat CFT team (--cft-size) and meets them at a
// barrier.
//
// Both run on the fabric's own timing model (NVLink 5 defaults, see package
// fabric), not an SDMA model, and have no SDMA queues to trace.

func init() {
	scenario.Register(&scenario.Scenario{
		Name:    "cft-allreduce",
		Perf:    &scenario.PerfShape{Type: "uint32", Elem: 4, Redop: "sum", Per: scenario.One, Gran: 16, Bus: func(n float64) float64 { return 2 * (n - 1) / n }},
		Summary: "u32 sum all-reduce over the CFT fabric: pullRed + redMultimem + multimem barriers (NCCL device API)",
		Bytes:   "per rank (a multiple of 16)",
		Fabric:  true,
		Check:   checkCftAllReduce,
		Run:     runCftAllReduce,
		Usage:   cftAllReduceUsage,
	})
	scenario.Register(&scenario.Scenario{
		Name:         "cft-alltoall",
		Perf:         &scenario.PerfShape{Type: "uint8", Elem: 1, Redop: "none", Per: scenario.ByRanks, Gran: 16, Bus: scenario.RingBus},
		Summary:      "all-to-all over the CFT fabric: put to every flat-team peer + a unicast barrier (NCCL device API)",
		Bytes:        "per pair (a multiple of 16)",
		DefaultBytes: 1 << 10,
		Fabric:       true,
		Check:        checkCftAllToAll,
		Run:          runCftAllToAll,
		Usage:        cftAllToAllUsage,
	})
}

// fabricSharedBytes is a block's shared memory, where fabric kernels stage
// what they put.
const fabricSharedBytes = uint64(kernel.MaxSharedBytes)

// maxCftBytes bounds --bytes of the CFT scenarios: the fabric's per-rank
// memory is sized from it.
const maxCftBytes = 4 << 30

// checkCft is what both CFT scenarios require.
func checkCft(o scenario.Options) error {
	switch {
	case o.Bytes%16 != 0:
		return fmt.Errorf("invalid --bytes %s: need a multiple of 16 (the CFT scenarios move whole 16-byte units)", scenario.FormatBytes(o.Bytes))
	case o.Bytes > maxCftBytes:
		return fmt.Errorf("invalid --bytes %s: at most %s per rank", scenario.FormatBytes(o.Bytes), scenario.FormatBytes(maxCftBytes))
	case o.Model != "":
		return fmt.Errorf("invalid --model %q: the CFT scenarios run on the fabric's own timing model, not an SDMA model", o.Model)
	case !o.Faults.Empty():
		return fmt.Errorf("invalid --faults %s: the faults are SDMA faults and the CFT scenarios have no SDMA queues", o.Faults)
	}
	return nil
}

func checkCftAllReduce(o scenario.Options) error { return checkCft(o) }

func checkCftAllToAll(o scenario.Options) error {
	if err := checkCft(o); err != nil {
		return err
	}
	topo, err := o.Topology().Normalize()
	if err != nil {
		return err
	}
	// Every outgoing block is staged in shared memory at once.
	if stage := uint64(topo.CftSize) * o.Bytes; 16+stage > fabricSharedBytes {
		return fmt.Errorf("invalid --bytes %s with a flat CFT team of %d ranks: cft-alltoall stages every outgoing block in shared memory, at most %s per pair",
			scenario.FormatBytes(o.Bytes), topo.CftSize, scenario.FormatBytes((fabricSharedBytes-16)/uint64(topo.CftSize)&^15))
	}
	return nil
}

// cftAllReduceUsage: input and output windows per rank, the expected sum
// per multicast group on the host, one wave of 32 lanes per rank staging a
// piece in shared memory, and per rank one operation reaching every member
// of its group in flight.
func cftAllReduceUsage(o scenario.Options) scenario.Usage {
	t, err := o.Topology().Normalize()
	if err != nil {
		return scenario.Usage{}
	}
	r, mc := uint64(o.Ranks), uint64(t.CftMcSize)
	stage := min(((o.Bytes+mc-1)/mc+15)&^15, DefaultStage)
	// A pullRed in flight holds a copy of its piece from every member,
	// plus the expected sum per group and a stage per rank.
	return scenario.Usage{Backed: 2 * r * o.Bytes, Shared: r * (16 + stage), Lanes: 32 * o.Ranks, Ops: o.Ranks, Deliv: o.Ranks * t.CftMcSize, Host: r*mc*stage + r/mc*o.Bytes + r*stage}
}

// cftAllToAllUsage: a receive window of a block per flat-team peer, every
// outgoing block staged in shared memory, and every put in flight at once.
func cftAllToAllUsage(o scenario.Options) scenario.Usage {
	t, err := o.Topology().Normalize()
	if err != nil {
		return scenario.Usage{}
	}
	r, c := uint64(o.Ranks), uint64(t.CftSize)
	return scenario.Usage{Backed: r * c * o.Bytes, Shared: r * (16 + c*o.Bytes), Lanes: 32 * o.Ranks, Ops: o.Ranks * t.CftSize, Host: 2 * r * c * o.Bytes} // the host's read-back and the kernels' loads
}

func runCftAllReduce(o scenario.Options) (*scenario.Outcome, error) {
	res, err := RunAllReduce(AllReduceConfig{Seed: o.Seed, Topology: o.Topology(),
		Bytes: int(o.Bytes), Type: redop.U32, Debug: o.Debug, Race: o.Race, Phantom: o.Phantom, NoOut: true, Sched: job.Sched{Perturb: o.Perturb, Strategy: o.Strategy, PCT: o.PCT, Stop: o.Stop}})
	if err := cftErr("cft-allreduce", o, res, err); err != nil {
		return nil, err
	}
	topo, _ := o.Topology().Normalize()
	out := cftOutcome(o, res)
	mc := uint64(topo.CftMcSize)
	per := ((o.Bytes+mc-1)/mc + 15) &^ 15 // AllReduceConfig.Bytes's chunks
	for r := range o.Ranks {
		// Each rank multicasts its reduced chunk to every member of its
		// group and receives the whole buffer.
		lo := min(uint64(topo.CftMultimemRank(r))*per, o.Bytes)
		hi := min(lo+per, o.Bytes)
		out.Ranks = append(out.Ranks, scenario.RankResult{Rank: r, Finish: res.Elapsed, BytesSent: (hi - lo) * mc, BytesReceived: o.Bytes})
	}
	return out, nil
}

func runCftAllToAll(o scenario.Options) (*scenario.Outcome, error) {
	res, err := RunAllToAll(AllToAllConfig{Seed: o.Seed, Topology: o.Topology(),
		Block: int(o.Bytes), Debug: o.Debug, Race: o.Race, Phantom: o.Phantom, Sched: job.Sched{Perturb: o.Perturb, Strategy: o.Strategy, PCT: o.PCT, Stop: o.Stop}})
	if err := cftErr("cft-alltoall", o, res, err); err != nil {
		return nil, err
	}
	topo, _ := o.Topology().Normalize()
	out := cftOutcome(o, res)
	moved := uint64(topo.CftSize-1) * o.Bytes // to and from every peer but itself
	for r := range o.Ranks {
		out.Ranks = append(out.Ranks, scenario.RankResult{Rank: r, Finish: res.Elapsed, BytesSent: moved, BytesReceived: moved})
	}
	return out, nil
}

// cftErr classifies a fabric collective's error: a result with an error is
// a finished run whose data was wrong.
func cftErr(name string, o scenario.Options, res *CollectiveResult, err error) error {
	switch {
	case err != nil && res != nil:
		return &scenario.MismatchError{Scenario: name, Seed: o.Seed, Detail: err.Error()}
	case err != nil:
		return err
	case len(res.Reports) > 0:
		return fmt.Errorf("%s: flush reported errors: %v", name, res.Reports)
	}
	return nil
}

func cftOutcome(o scenario.Options, res *CollectiveResult) *scenario.Outcome {
	return &scenario.Outcome{Model: "fabric (NVLink 5 defaults)", End: res.Elapsed, Seed: o.Seed, Digest: res.Digest}
}
