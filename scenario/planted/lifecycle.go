package planted

import (
	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/engine"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

func init() {
	bug{name: "zero-after-signal", shape: scenario.Shape{Ranks: 2, Queues: 1}, run: runZeroAfterSignal,
		planted: scenario.Planted{Class: "a signal slot zeroed locally at kernel start while a peer's one-sided signal may already have landed in it",
			Source: "collective authors' incident: a signal pad zeroed locally after a peer's one-sided signal landed (issue 23)", Timing: true}}.register()
}

// zeroAfterSignalWork is the receiver kernel's work before it resets its
// slot: about the time rank 0's 4 KiB put and its signal take on the
// calibrated model, so the seed decides which comes first.
const zeroAfterSignalWork = 3 * sim.Microsecond

// zero-after-signal: rank 1's kernel works, then zeroes its signal slot
// for rank 0 (a reset for the round) and waits for one signal; rank 0's
// kernel puts 4 KiB with a remote signal at once. When the signal lands
// before the reset, the reset erases it and rank 1 waits for good. The fix
// resets the slot on the host before either kernel is launched.
func runZeroAfterSignal(o scenario.Options, fixed bool) (*scenario.Outcome, error) {
	const bytes = 4096
	r, w, err := setup(o, 2, 1, engine.InjectSpec{}, 2*bytes)
	if err != nil {
		return nil, err
	}
	if err := fill(r, w[0], 0, bytes, 0, 0); err != nil {
		return nil, err
	}
	sl := slot(r, 1, 0, 0)
	if fixed {
		if err := r.Mem().Store64(sl, 0); err != nil {
			return nil, err
		}
	}
	if _, err := r.Launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], bytes, w[0], 0, bytes, 0, cco.RemoteSignal)
	}); err != nil {
		return nil, err
	}
	if _, err := r.Launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		compute(t, zeroAfterSignalWork)
		if !fixed {
			cco.NewMem(sdma.Thread(), sdma.DevComm()).Store64(sl, 0)
		}
		sdma.WaitSignal(0, 0, 1)
	}); err != nil {
		return nil, err
	}
	return done(r, func() error { return expect(r, "rank 1's block from rank 0", w[1], bytes, bytes, 0, 0) })
}
