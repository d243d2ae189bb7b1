package planted

import (
	"errors"
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// The fault injections of the bugs that are hardware incidents: the
// program runs under them (its twin on healthy hardware, or with the
// workaround that avoids the fault).
var (
	bigCopyFaults        = engine.InjectSpec{Plan: engine.InjectPlan{StallBytes: 1 << 20}}
	lostCompletionFaults = engine.InjectSpec{Plan: engine.InjectPlan{SignalDropRate: 0.03}}
	fusedOffFaults       = engine.InjectSpec{Plan: engine.InjectPlan{DeadQueues: []engine.QueueID{{GPU: 0, Peer: 1, Q: 1}, {GPU: 1, Peer: 2, Q: 1}, {GPU: 2, Peer: 0, Q: 1}}}}
)

// bug is one corpus entry: the planted scenario's description, its shape
// and the program (fixed false: the bug; true: its twin).
type bug struct {
	name    string
	planted scenario.Planted
	shape   scenario.Shape
	faults  engine.InjectSpec
	run     func(o scenario.Options, fixed bool) (*scenario.Outcome, error)
}

var corpus = []bug{
	{name: "gin-allgather-multicta", shape: scenario.Shape{Ranks: 4, Queues: 2}, run: runGinAllgather,
		planted: scenario.Planted{Class: "waitSignal watches another slot than the one incremented, only on grids wider than one CTA",
			Source: "RCCL GIN-SDMA all-gather deadlock on grids wider than one CTA"}},
	{name: "late-rank-snapshot", shape: scenario.Shape{Ranks: 4, Queues: 1}, run: runLateRank,
		planted: scenario.Planted{Class: "deadlock that needs one GPU late: expected taken from the slot at kernel entry",
			Source: "RCCL deadlock in ~20% of 16-node runs, reproduced by pausing a GPU in a debugger", Timing: true}},
	{name: "big-copy-stall", shape: scenario.Shape{Ranks: 2, Queues: 1}, faults: bigCopyFaults, run: runBigCopy,
		planted: scenario.Planted{Class: "one unchunked copy at or above the size that stalls the engine, so its signal never fires",
			Source: "MI355X: 256 MiB copies stalled the SDMA engine (the corpus scales the threshold to 1 MiB)"}},
	{name: "lost-completion", shape: scenario.Shape{Ranks: 4, Queues: 1}, faults: lostCompletionFaults, run: runLostCompletion,
		planted: scenario.Planted{Class: "a completion signal ATOMIC lost by the hardware; the waiter has no other evidence",
			Source: "ROCr lost SDMA completion signals in 2.5–14% of runs"}},
	{name: "fused-off-engine", shape: scenario.Shape{Ranks: 3, Queues: 2}, faults: fusedOffFaults, run: runFusedOff,
		planted: scenario.Planted{Class: "a queue placed on a dead (fused-off) engine never runs",
			Source: "MORI with SDMA hung on MI308X: queues landed on fused-off engines"}},
	{name: "block-slot-mismatch", shape: scenario.Shape{Ranks: 2, Queues: 2}, run: runBlockSlot,
		planted: scenario.Planted{Class: "multi-block signal-slot mismatch: every block waits on queue 0's slot, its data came on its own queue",
			Source: "seed document, waitSignal rules: one running total per (srcRank, queueId)", Timing: true}},
	{name: "ring-off-by-one", shape: scenario.Shape{Ranks: 4, Queues: 1}, run: runRingOffByOne,
		planted: scenario.Planted{Class: "off-by-one ring step: an all-gather ring of n−2 steps",
			Source: "ring collectives' classic bug"}},
	{name: "ge-u32-wrap", shape: scenario.Shape{Ranks: 3, Queues: 1}, run: runGeWrap,
		planted: scenario.Planted{Class: "Ge on a running total across the u32 wrap: the engine compares 32 bits and releases early",
			Source: "seed document, postWaitMemPutPtr: use Eq on a per-call epoch", Timing: true}},
	{name: "bcast-per-queue", shape: scenario.Shape{Ranks: 3, Queues: 2}, run: runBcastPerQueue,
		planted: scenario.Planted{Class: "broadcast signals counted per queue: a broadcast's remote signal releases a wait meant for a put",
			Source: "seed document, putBroadcast: a signal slot counts per (source rank, queueId), not per physical queue"}},
	{name: "missing-commit", shape: scenario.Shape{Ranks: 2, Queues: 2}, run: runMissingCommit,
		planted: scenario.Planted{Class: "a missing commit: an Aggregate batch never rung, so quiet returns with nothing sent",
			Source: "seed document, Completion: quiet drains to the last rung packet"}},
	{name: "samequeue-broken", shape: scenario.Shape{Ranks: 5, Queues: 1}, run: runSameQueueBroken,
		planted: scenario.Planted{Class: "a broken SameQueue promise: lanes with different peers posting as one group",
			Source: "seed document, ccoSdmaThreadMode: silent corruption in release"}},
	{name: "early-source-reuse", shape: scenario.Shape{Ranks: 2, Queues: 1}, run: runEarlyReuse,
		planted: scenario.Planted{Class: "early source reuse: the source is overwritten before the copy has read it",
			Source: "seed document, Completion: do not reuse a source buffer before the op completes", Timing: true}},
	{name: "expected-per-lane", shape: scenario.Shape{Ranks: 2, Queues: 1}, run: runExpectedPerLane,
		planted: scenario.Planted{Class: "expected counted per lane: a group's put signals once, not once per lane",
			Source: "seed document, waitSignal rules: one put() call advances the counter by one"}},
	{name: "no-quiet-across-kernels", shape: scenario.Shape{Ranks: 2, Queues: 1}, run: runNoQuietAcrossKernels,
		planted: scenario.Planted{Class: "a missing quiet before reuse across kernels: kernel exit does not drain SDMA",
			Source: "seed document, Completion: nothing has happened when put returns; you must drain", Timing: true}},
	{name: "flag-set-cleared", shape: scenario.Shape{Ranks: 2, Queues: 1}, run: runFlagSetCleared,
		planted: scenario.Planted{Class: "postWaitMem on a flag that is set, then cleared before the engine's next poll",
			Source: "seed document, postWaitMem sharp edges: the engine samples the flag; a flag that flips back is missed", Timing: true}},
	{name: "refill-without-wait", shape: scenario.Shape{Ranks: 2, Queues: 1}, run: runRefillWithoutWait,
		planted: scenario.Planted{Class: "the host launches a refill kernel without waiting for the send kernel; both post to one queue, so the order of their packets is a launch tie",
			Source: "issue 23: a race the detector saw corrupt data yet did not report, taking a queue's in-order execution of two unordered posts as an ordering"}},
}

func init() {
	for _, b := range corpus {
		b.register()
	}
}

// register adds the bug and its twin, NAME-fixed, to the registry.
func (b bug) register() {
	p := b.planted
	p.Fixed = b.name + "-fixed"
	if !b.faults.Empty() {
		p.Faults = b.faults.String()
	}
	shape := b.shape
	bytes := "unused: the program fixes its sizes"
	scenario.Register(&scenario.Scenario{Name: b.name, Summary: "PLANTED BUG (corpus): " + p.Class, Planted: &p,
		Shape: &shape, Bytes: bytes, Run: b.runner(b.name, false)})
	scenario.Register(&scenario.Scenario{Name: p.Fixed, Summary: "the fixed twin of " + b.name,
		Shape: &shape, Bytes: bytes, Run: b.runner(p.Fixed, true)})
}

// runner is the scenario's Run: the program, its wrong data reported as
// a *scenario.MismatchError with the finished run's outcome.
func (b bug) runner(name string, fixed bool) func(scenario.Options) (*scenario.Outcome, error) {
	return func(o scenario.Options) (*scenario.Outcome, error) {
		out, err := b.run(o, fixed)
		var wrong *wrongData
		if errors.As(err, &wrong) {
			return out, &scenario.MismatchError{Scenario: name, Seed: o.Seed, Detail: err.Error(), Wrong: 1, Outcome: out}
		}
		return out, err
	}
}

// setup builds the run's node with queues queue ids per peer under faults
// (the bug's environment) and one window of size bytes on every rank. The
// options carry the registered shape; a program asking for another is a
// corpus bug, reported as an error.
func setup(o scenario.Options, ranks, queues int, faults engine.InjectSpec, size uint64) (*scenario.Env, []cco.Window, error) {
	r, err := newEnv(o, ranks, queues, faults)
	if err != nil {
		return nil, nil, err
	}
	w, err := r.Window(size)
	return r, w, err
}

// newEnv is setup without the window.
func newEnv(o scenario.Options, ranks, queues int, faults engine.InjectSpec) (*scenario.Env, error) {
	if o.Ranks != ranks || o.Queues != queues {
		return nil, fmt.Errorf("planted: the program runs on %d ranks × %d queue ids, registered as %d × %d", ranks, queues, o.Ranks, o.Queues)
	}
	o.Faults = faults
	e, err := scenario.NewEnv(o)
	if err != nil {
		return nil, err
	}
	return e, e.SetupDevComms()
}

// done is a run's common end: the sim's verdict, then the data checks.
func done(r *scenario.Env, check func() error) (*scenario.Outcome, error) {
	err := r.Sim.Run()
	out := r.Result()
	if err == nil && check != nil {
		err = check()
	}
	return out, err
}

// slot is the address of rank's signal slot (src, q).
func slot(r *scenario.Env, rank, src, q int) uint64 {
	a, err := r.DevComms[rank].SignalPool().Slot(src, q)
	if err != nil {
		panic(err) // the corpus passes valid ranks and queues
	}
	return a
}

// pattern is the bytes rank's block tag holds: scenario.Pattern keyed by
// (rank, tag).
func pattern(n uint64, rank, tag int) []byte { return scenario.PatternOf(n, 0, rank, tag) }

// fill writes pattern(rank, tag) into rank's window w at off.
func fill(r *scenario.Env, w cco.Window, off, n uint64, rank, tag int) error {
	return r.Mem().Write(w.LocalPtr(off), pattern(n, rank, tag))
}

// fillLane is fill from lane code (through cco.Mem, as a kernel stores):
// the calling lane writes pattern(rank, tag) into its rank's window w.
func fillLane(sdma *cco.Sdma, w cco.Window, off, n uint64, rank, tag int) {
	cco.NewMem(sdma.Thread(), sdma.DevComm()).Write(w.LocalPtr(off), pattern(n, rank, tag))
}

// expect compares n bytes of w at off with pattern(rank, tag).
func expect(r *scenario.Env, what string, w cco.Window, off, n uint64, rank, tag int) error {
	got := make([]byte, n)
	if err := r.Mem().Read(w.LocalPtr(off), got); err != nil {
		return err
	}
	return checkBytes(what, got, rank, tag)
}

// expectFromPrev checks that every rank holds, at off of its window, the
// n bytes its ring predecessor sent (pattern(prev, 0)).
func expectFromPrev(r *scenario.Env, w []cco.Window, off, n uint64) error {
	ranks := len(w)
	for me := range ranks {
		prev := (me + ranks - 1) % ranks
		if err := expect(r, fmt.Sprintf("rank %d's block from rank %d", me, prev), w[me], off, n, prev, 0); err != nil {
			return err
		}
	}
	return nil
}

// snapshot is a receiver's CU reading n bytes of its window at off when
// it believes they have landed (through cco.Mem, as lane code does): the
// data it would go on to use.
func snapshot(sdma *cco.Sdma, w cco.Window, off, n uint64) []byte {
	b := make([]byte, n)
	cco.NewMem(sdma.Thread(), sdma.DevComm()).Read(w.LocalPtr(off), b)
	return b
}

// checkBytes compares got with pattern(rank, tag).
func checkBytes(what string, got []byte, rank, tag int) error {
	want := pattern(uint64(len(got)), rank, tag)
	for i := range got {
		if got[i] != want[i] {
			return &wrongData{What: what, Offset: uint64(i), Got: got[i], Want: want[i]}
		}
	}
	return nil
}

// compute is a wave spending d on the CU (a kernel's own work between
// device calls).
func compute(t *kernel.Thread, d sim.Time) {
	t.Converge(&kernel.Call{Name: "compute", Run: func(g *kernel.Active) error {
		g.Actor().Sleep(d)
		return nil
	}})
}

// wrongData is a check that found the bytes a collective left wrong.
type wrongData struct {
	What      string
	Offset    uint64
	Got, Want byte
}

func (e *wrongData) Error() string {
	return fmt.Sprintf("wrong data: %s: first wrong byte at offset %d (got %#02x, want %#02x)", e.What, e.Offset, e.Got, e.Want)
}
