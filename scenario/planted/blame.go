package planted

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
)

// The five incident classes whose reports once pointed users the wrong way
// (emud issue 29): a slot overwritten by its own rank, a baseline read of a
// counter racing the root's put, two blocks aliasing one slot, a pipeline
// whose depth producer and consumer disagree on, and a flag reset at a
// phase boundary before the engine read it. Each is a corpus bug with its
// fixed twin, so hunt runs them and the report sweeps cover them; package
// cco's planted tests pin their whole reports.

const blameSource = "emud issue 29: collective authors' incidents whose reports blamed the wrong thing"

// blameBugs are the five, in the corpus table's form.
var blameBugs = []bug{
	{"zeroed-slot-after-setup", 2, 1, healthy, healthy, false, zeroedSlotAfterSetup,
		"a rank zeroes its own signal slot after its setup while the peer's signal is already there: an overwrite, not a drop", blameSource},
	{"baseline-read-race", 3, 1, healthy, healthy, false, baselineRead,
		"a baseline read of the signal counter after setup races the root's put: expected is one too many", blameSource},
	{"aliased-slot", 2, 2, healthy, healthy, false, aliasedSlot,
		"two thread blocks post to one queue id, so they share one signal slot: either block's signal releases both waits", blameSource},
	{"pipeline-depth-mismatch", 2, 1, healthy, healthy, false, pipelineDepth,
		"producer and consumer disagree on a pipeline's depth: a stale signal releases the consumer early", blameSource},
	{"phase-reset-flag", 2, 2, healthy, healthy, false, phaseResetFlag,
		"a second kernel resets a flag at a phase boundary before the engine's postWaitMem read the first kernel's write of it", blameSource},
}

func init() {
	for _, b := range blameBugs {
		b.register()
	}
}

// setupBytes is the receiver's own setup put in zeroed-slot-after-setup
// and baseline-read-race: long enough (about 6 µs on the calibrated
// model) that the sender's 1 KiB put and its signal, about 3 µs, always
// land first.
const setupBytes = 256 << 10

// zeroed-slot-after-setup: rank 1 does its setup (a put to rank 0 and a
// quiet), then zeroes its slot for rank 0 to start the round; rank 0's
// small put has signalled that slot already, and rank 1 waits for it for
// good. The fix zeroes the slot on the host before the kernels start.
func zeroedSlotAfterSetup(p *prog) func() error {
	fixed := p.fixed
	const bytes = 1024
	w := p.sender(setupBytes+2*bytes, bytes)
	sl := p.slot(1, 0, 0)
	if fixed {
		p.store64(sl, 0)
	}
	p.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], bytes, w[0], 0, bytes, 0, cco.RemoteSignal)
		sdma.QuietQueue(1, 0)
	})
	p.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(0, w[0], 2*bytes, w[1], 2*bytes, setupBytes, 0) // setup
		sdma.QuietQueue(0, 0)
		if !fixed {
			cco.NewMem(t, sdma.DevComm()).Store64(sl, 0) // the bug: the peer's signal is there already
		}
		sdma.WaitSignal(0, 0, 1)
	})
	return func() error { return p.expect("rank 1's block from rank 0", w[1], bytes, bytes, 0, 0) }
}

// baseline-read-race: root rank 0 puts its block to ranks 1 and 2 with a
// remote signal; each receiver does its setup, then reads its slot as a
// baseline and waits for baseline + 1. The root's signal has landed by
// then, so the wait needs a second signal that never comes. The fix
// waits for the count the root's put reaches (1): the counter is a
// running total, known without reading it.
func baselineRead(p *prog) func() error {
	fixed := p.fixed
	const bytes = 1024
	w := p.sender(2*setupBytes+2*bytes, bytes)
	p.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		for q := 1; q < 3; q++ {
			sdma.Put(q, w[q], bytes, w[0], 0, bytes, 0, cco.RemoteSignal)
		}
		sdma.Quiet(1)
		sdma.Quiet(2)
	})
	for q := 1; q < 3; q++ {
		sl := p.slot(q, 0, 0)
		p.launch(q, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
			sdma.Put(0, w[0], 2*bytes+uint64(q-1)*setupBytes, w[q], 2*bytes, setupBytes, 0) // setup
			sdma.QuietQueue(0, 0)
			want := uint64(1)
			if !fixed {
				want = cco.NewMem(t, sdma.DevComm()).Load64(sl) + 1 // the bug: the baseline may include the root's signal
			}
			sdma.WaitSignal(0, 0, want)
		})
	}
	return func() error {
		for q := 1; q < 3; q++ {
			if err := p.expect(fmt.Sprintf("rank %d's block from the root", q), w[q], bytes, bytes, 0, 0); err != nil {
				return err
			}
		}
		return nil
	}
}

// chunk16K is the chunk of the two race programs: long enough to land
// (about 1.5 µs on the calibrated model) that a reader released by the
// first chunk's signal reads the second one before it has landed.
const chunk16K = 16 << 10

// aliased-slot: rank 0's two blocks each put their chunk to rank 1 with a
// remote signal, both on queue id 0, so both signals raise one slot; rank
// 1's block b waits for 1 on that slot and uses chunk b. The first signal
// releases both blocks, and the other chunk is still landing. The fix
// gives each block its own queue id, and so its own slot.
func aliasedSlot(p *prog) func() error {
	const grid = 2
	queue := func(b int) int {
		if p.fixed {
			return b
		}
		return 0 // the bug: one queue id for both blocks
	}
	return p.blockSlices(grid, chunk16K, queue, queue, "rank 1's block %d's chunk when its wait returned")
}

// pipeline-depth-mismatch: rank 0 sends two chunks on one queue, each put
// raising rank 1's slot; rank 1 believes the pipeline is one deep and
// waits for the count 1 before using chunk 1, so chunk 0's signal releases
// it while chunk 1 is still landing. The fix waits for 2.
func pipelineDepth(p *prog) func() error {
	fixed := p.fixed
	w := p.window(4 * chunk16K)
	for c := range 2 {
		p.fill(w, 0, uint64(c)*chunk16K, chunk16K, c)
	}
	p.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		for c := range 2 {
			sdma.Put(1, w[1], uint64(2+c)*chunk16K, w[0], uint64(c)*chunk16K, chunk16K, 0, cco.RemoteSignal)
		}
		sdma.QuietQueue(1, 0)
	})
	want := uint64(1) // the bug: chunk 1 is the second signal
	if fixed {
		want = 2
	}
	var got []byte
	p.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 0, want)
		got = snapshot(sdma, w[1], 3*chunk16K, chunk16K)
	})
	return func() error { return checkBytes("rank 1's chunk 1 when its wait returned", got, 0, 1) }
}

// phaseBytes is phase-reset-flag's first put: about 20 µs on the
// calibrated model, far longer than the word that tells rank 1 the phase
// is over takes on the other queue, so the reset lands before the engine
// reaches its wait.
const phaseBytes = 1 << 20

// phase-reset-flag: rank 0 queues a big put and, behind it on the same
// queue, an engine-side wait (postWaitMem) for its flag == 1 and a small
// put; its lane sets the flag, then tells rank 1 on the other queue that
// the phase is over. Rank 1's kernel resets the flag to 0 for the next
// phase before the engine has read it: the queue waits for good. The fix
// tells rank 1 only after the waiting queue has drained.
func phaseResetFlag(p *prog) func() error {
	fixed := p.fixed
	const flag, small = phaseBytes + 4096, 4096
	w := p.window(phaseBytes + 3*small)
	p.fill(w, 0, 0, small, 0)
	p.launch(0, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.Put(1, w[1], 0, w[0], 0, phaseBytes, 0)
		sdma.PostWaitMem(1, 0, w[0], flag, 1, cco.SdmaCmpEq, 0xffffffff)
		sdma.Put(1, w[1], phaseBytes+2*small, w[0], 0, small, 0)
		cco.NewMem(t, sdma.DevComm()).StoreRelease32(w[0].LocalPtr(flag), 1) // phase 1 done
		if fixed {
			sdma.QuietQueue(1, 0)
		}
		sdma.Put(1, w[1], phaseBytes, w[0], 0, 8, 1, cco.RemoteSignal) // tell rank 1
		sdma.QuietQueue(1, 0)
		sdma.QuietQueue(1, 1)
	})
	p.launch(1, 1, 1, func(t *kernel.Thread, sdma *cco.Sdma) {
		sdma.WaitSignal(0, 1, 1)
		cco.NewMem(t, sdma.DevComm()).Store32(w[1].LsaPtr(0, flag), 0) // the next phase's reset
	})
	return func() error {
		return p.expect("rank 1's block after rank 0's engine-side wait", w[1], phaseBytes+2*small, small, 0, 0)
	}
}
