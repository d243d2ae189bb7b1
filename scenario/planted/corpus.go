package planted

import (
	"errors"
	"fmt"

	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/scenario"
)

// The fault injections of the bugs that are hardware incidents: the
// program runs under them (its twin on healthy hardware, or with the
// workaround that avoids the fault).
var (
	bigCopyFaults        = engine.InjectSpec{Plan: engine.InjectPlan{StallBytes: 1 << 20}}
	lostCompletionFaults = engine.InjectSpec{Plan: engine.InjectPlan{SignalDropRate: 0.03}}
	fusedOffFaults       = engine.InjectSpec{Plan: engine.InjectPlan{DeadQueues: []engine.QueueID{{GPU: 0, Peer: 1, Q: 1}, {GPU: 1, Peer: 2, Q: 1}, {GPU: 2, Peer: 0, Q: 1}}}}
)

// bug is one corpus entry: the planted scenario's name and shape, the
// faults the bug and its twin run under, whether it needs timing that the
// calibrated model alone never produces, the program, its class and where
// it was seen or documented.
type bug struct {
	name               string
	ranks, queues      int
	faults, twinFaults engine.InjectSpec
	timing             bool
	run                program
	class, source      string
}

// program is a corpus program: its steps on p (p.fixed: the twin), and
// the host's check of the data once the run has ended (nil: none).
type program func(p *prog) (check func() error)

// healthy is a run without fault injection.
var healthy = engine.InjectSpec{}

// corpus is the table of planted bugs, one entry each; each program is in
// the file its class belongs to (programs.go, lifecycle.go, refill.go, epochs.go).
var corpus = []bug{
	{"gin-allgather-multicta", 4, 2, healthy, healthy, false, ginAllgather,
		"waitSignal watches another slot than the one incremented, only on grids wider than one CTA",
		"RCCL GIN-SDMA all-gather deadlock on grids wider than one CTA"},
	{"late-rank-snapshot", 4, 1, healthy, healthy, true, lateRank,
		"deadlock that needs one GPU late: expected taken from the slot at kernel entry",
		"RCCL deadlock in ~20% of 16-node runs, reproduced by pausing a GPU in a debugger"},
	{"big-copy-stall", 2, 1, bigCopyFaults, bigCopyFaults, false, bigCopy,
		"one unchunked copy at or above the size that stalls the engine, so its signal never fires",
		"MI355X: 256 MiB copies stalled the SDMA engine (the corpus scales the threshold to 1 MiB)"},
	{"lost-completion", 4, 1, lostCompletionFaults, healthy, false, lostCompletion,
		"a completion signal ATOMIC lost by the hardware; the waiter has no other evidence",
		"ROCr lost SDMA completion signals in 2.5–14% of runs"},
	{"fused-off-engine", 3, 2, fusedOffFaults, fusedOffFaults, false, fusedOff,
		"a queue placed on a dead (fused-off) engine never runs",
		"MORI with SDMA hung on MI308X: queues landed on fused-off engines"},
	{"block-slot-mismatch", 2, 2, healthy, healthy, true, blockSlot,
		"multi-block signal-slot mismatch: every block waits on queue 0's slot, its data came on its own queue",
		"seed document, waitSignal rules: one running total per (srcRank, queueId)"},
	{"ring-off-by-one", 4, 1, healthy, healthy, false, ringOffByOne,
		"off-by-one ring step: an all-gather ring of n−2 steps",
		"ring collectives' classic bug"},
	{"ge-u32-wrap", 3, 1, healthy, healthy, true, geWrap,
		"Ge on a running total across the u32 wrap: the engine compares 32 bits and releases early",
		"seed document, postWaitMemPutPtr: use Eq on a per-call epoch"},
	{"bcast-per-queue", 3, 2, healthy, healthy, false, bcastPerQueue,
		"broadcast signals counted per queue: a broadcast's remote signal releases a wait meant for a put",
		"seed document, putBroadcast: a signal slot counts per (source rank, queueId), not per physical queue"},
	{"missing-commit", 2, 2, healthy, healthy, false, missingCommit,
		"a missing commit: an Aggregate batch never rung, so quiet returns with nothing sent",
		"seed document, Completion: quiet drains to the last rung packet"},
	{"samequeue-broken", 5, 1, healthy, healthy, false, sameQueueBroken,
		"a broken SameQueue promise: lanes with different peers posting as one group",
		"seed document, ccoSdmaThreadMode: silent corruption in release"},
	{"early-source-reuse", 2, 1, healthy, healthy, true, earlyReuse,
		"early source reuse: the source is overwritten before the copy has read it",
		"seed document, Completion: do not reuse a source buffer before the op completes"},
	{"expected-per-lane", 2, 1, healthy, healthy, false, expectedPerLane,
		"expected counted per lane: a group's put signals once, not once per lane",
		"seed document, waitSignal rules: one put() call advances the counter by one"},
	{"no-quiet-across-kernels", 2, 1, healthy, healthy, true, noQuietAcrossKernels,
		"a missing quiet before reuse across kernels: kernel exit does not drain SDMA",
		"seed document, Completion: nothing has happened when put returns; you must drain"},
	{"flag-set-cleared", 2, 1, healthy, healthy, true, flagSetCleared,
		"postWaitMem on a flag that is set, then cleared before the engine's next poll",
		"seed document, postWaitMem sharp edges: the engine samples the flag; a flag that flips back is missed"},
	{"zero-after-signal", 2, 1, healthy, healthy, true, zeroAfterSignal,
		"a signal slot zeroed locally at kernel start while a peer's one-sided signal may already have landed in it",
		"collective authors' incident: a signal pad zeroed locally after a peer's one-sided signal landed (issue 23)"},
	{"refill-without-wait", 2, 1, healthy, healthy, false, refillWithoutWait,
		"the host launches a refill kernel without waiting for the send kernel; both post to one queue, so the order of their packets is a launch tie",
		"issue 23: a race the detector saw corrupt data yet did not report, taking a queue's in-order execution of two unordered posts as an ordering"},
	{"stale-epoch-across-calls", 2, 1, healthy, healthy, false, staleAcrossCalls,
		"a wait that counts one call's signals on a slot that keeps the running total: the second call's wait holds on the first call's signal",
		"seed document, waitSignal rules: expected is the caller's running total for (srcRank, queueId); issue 23's stale-epoch class"},
	{"shared-slot-across-kernels", 2, 2, healthy, healthy, false, sharedAcrossKernels,
		"two kernels signal one slot (the same source rank and queue id) and the receiver's waits cannot tell their signals apart",
		"collective authors' incident: signal slots colliding across kernels, process groups or barriers (issue 23)"},
	{"async-memset-before-put", 2, 1, healthy, healthy, false, asyncMemset,
		"an asynchronous memset of the receive buffer on the receiver's stream, not waited for before the peer's put",
		"collective authors' incident: an async memset racing a peer's put (issue 23)"},
	{"u64-counter-wrap", 2, 1, healthy, healthy, false, u64Wrap,
		"a signal counter started at ^0 as a sentinel: the first signal wraps it past 2^64 and expected (start + 1) wraps to 0",
		"seed document, waitSignal rules: a 64-bit >= on a running total; issue 23's wrap class"},
	{"reset-lane-unordered", 2, 1, healthy, healthy, true, resetBetweenCalls(resetLane),
		"a slot reset between two calls by a lane store after the first call's wait, not ordered before the peer's next signal",
		"collective authors' incident: a signal pad reset between calls while the peer's next signal may already be in flight (issue 37's twins: a reset ordered between epochs starts a new epoch)"},
	{"reset-host-unordered", 2, 1, healthy, healthy, true, resetBetweenCalls(resetHost),
		"a slot reset between two calls by a host store, not ordered before the peer's next signal",
		"collective authors' incident: a signal pad reset from the host between calls (issue 37)"},
	{"reset-memset-unordered", 2, 1, healthy, healthy, true, resetBetweenCalls(resetMemset),
		"a slot reset between two calls by an asynchronous memset on the receiver's stream, synchronised by the receiver only, not ordered before the peer's next signal",
		"collective authors' incident: hipMemsetAsync of a signal pad racing a peer's signal (issue 37)"},
	{"destroy-before-quiet", 2, 1, healthy, healthy, false, destroyBeforeQuiet,
		"ccoCommDestroy after a kernel that put without draining its queue: kernel exit does not drain SDMA",
		"seed document, Completion: quiet before the queue's resources go (issue 37's twin: destroy after a quiet that returned)"},
}

func init() {
	for _, b := range corpus {
		b.register()
	}
}

// register adds the bug and its twin, NAME-fixed, to the registry.
func (b bug) register() {
	p := scenario.Planted{Class: b.class, Source: b.source, Timing: b.timing, Fixed: b.name + "-fixed"}
	if !b.faults.Empty() {
		p.Faults = b.faults.String()
	}
	shape := scenario.Shape{Ranks: b.ranks, Queues: b.queues}
	bytes := "unused: the program fixes its sizes"
	scenario.Register(&scenario.Scenario{Name: b.name, Summary: "PLANTED BUG (corpus): " + p.Class, Planted: &p,
		Shape: &shape, Bytes: bytes, Run: b.runner(b.name, false)})
	scenario.Register(&scenario.Scenario{Name: p.Fixed, Summary: "the fixed twin of " + b.name,
		Shape: &shape, Bytes: bytes, Run: b.runner(p.Fixed, true)})
}

// runner is the scenario's Run: the environment, the program's steps, the
// run, then its check, wrong data reported as a *scenario.MismatchError
// with the finished run's outcome.
func (b bug) runner(name string, fixed bool) func(scenario.Options) (*scenario.Outcome, error) {
	return func(o scenario.Options) (*scenario.Outcome, error) {
		if o.Ranks != b.ranks || o.Queues != b.queues {
			return nil, fmt.Errorf("planted: %s runs on %d ranks × %d queue ids, asked for %d × %d", name, b.ranks, b.queues, o.Ranks, o.Queues)
		}
		o.Faults = b.faults
		if fixed {
			o.Faults = b.twinFaults
		}
		p, err := start(o, fixed)
		if err != nil {
			return nil, err
		}
		defer p.Close() // the checks are done when the run returns
		check := b.run(p)
		if p.err != nil {
			return nil, p.err
		}
		err = p.Sim.Run()
		out := p.Result()
		if err == nil && check != nil {
			err = check()
		}
		var wrong *wrongData
		if errors.As(err, &wrong) {
			return out, &scenario.MismatchError{Scenario: name, Seed: o.Seed, Detail: err.Error(), Wrong: 1, Outcome: out}
		}
		return out, err
	}
}
