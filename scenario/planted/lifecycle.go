package planted

import (
	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
)

// zeroAfterSignalWork is the receiver kernel's work before it resets its
// slot: about the time rank 0's 4 KiB put and its signal take on the
// calibrated model, so the seed decides which comes first.
const zeroAfterSignalWork = 3 * sim.Microsecond

// zero-after-signal: rank 1's kernel works, then zeroes its signal slot
// for rank 0 (a reset for the round) and waits for one signal; rank 0's
// kernel puts 4 KiB with a remote signal at once. When the signal lands
// before the reset, the reset erases it and rank 1 waits for good. The fix
// resets the slot on the host before either kernel is launched.
func zeroAfterSignal(p *prog) func() error {
	const bytes = 4096
	w := p.sender(2*bytes, bytes)
	sl := p.slot(1, 0, 0)
	if p.fixed {
		p.store64(sl, 0)
	}
	p.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], bytes, w[0], 0, bytes, 0, cco.RemoteSignal)
	})
	p.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		compute(t, zeroAfterSignalWork)
		if !p.fixed {
			cco.NewMem(sdma.Thread(), sdma.DevComm()).Store64(sl, 0)
		}
		sdma.WaitSignal(0, 0, 1)
	})
	return func() error { return p.expect("rank 1's block from rank 0", w[1], bytes, bytes, 0, 0) }
}
