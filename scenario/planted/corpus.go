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

// sender is setup with rank 0's block, pattern(0, 0) of n bytes at
// offset 0 of its window: the start of every point-to-point program.
func sender(o scenario.Options, ranks, queues int, size, n uint64) (*scenario.Env, []cco.Window, error) {
	r, w, err := setup(o, ranks, queues, engine.InjectSpec{}, size)
	if err != nil {
		return nil, nil, err
	}
	return r, w, fill(r, w[0], 0, n, 0, 0)
}

// receive is a point-to-point program's end: rank 1 waits for rank 0's
// signal on queue 0, the run ends, and rank 1 must hold rank 0's block
// (n bytes at off of its window).
func receive(r *scenario.Env, w []cco.Window, off, n uint64) (*scenario.Outcome, error) {
	if _, err := r.Launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) { sdma.WaitSignal(0, 0, 1) }); err != nil {
		return nil, err
	}
	return done(r, func() error { return expect(r, "rank 1's block from rank 0", w[1], off, n, 0, 0) })
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

// expectGathered is an all-gather's check: every rank me holds, for every
// owner and piece b of pieces, pattern(owner, b) where at(me, owner, b)
// says (what, offset, length).
func expectGathered(r *scenario.Env, w []cco.Window, pieces int, at func(me, owner, b int) (string, uint64, uint64)) error {
	for me := range w {
		for owner := range w {
			for b := range pieces {
				what, off, n := at(me, owner, b)
				if err := expect(r, what, w[me], off, n, owner, b); err != nil {
					return err
				}
			}
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
