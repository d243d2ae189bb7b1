package cco_test

import (
	"testing"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/issuer"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// MORI hazard (docs/cco-semantics.md §7): a commit while another issuer has
// reserved but not yet written rings a half-written slot, and that issuer
// then spins forever in its chain. Here wave 0 fills the ring with an
// uncommitted Aggregate batch and its next put (without Aggregate) claims a
// slot and spins for space; wave 1 then commits, which rings wave 0's
// claimed but unwritten unit too. The engine frees space, wave 0 writes its
// COPY (the engine reaches it later and runs it: the emulator's issue takes
// no time, so the stale-slot window is closed) and waits for the commit
// frontier to reach its base, which it has jumped past: a hang, named.
func TestHazardCommitOverHalfWrittenSlot(t *testing.T) {
	const fill = 8191 // an exact ring of single-unit puts (capacity 256 KiB − 32 B)
	for seed := uint64(1); seed <= seeds; seed++ {
		r := newRig(t, seed, rigOpts{ranks: 2, freeIssue: true})
		r.fillBytes(r.send[0], 0, patterned(int(seed), 64))
		slot, err := r.dcs[0].SignalPool().Slot(0, 1)
		require.NoError(t, err)
		lastReturned := false
		r.launch(0, 1, 128, func(th *kernel.Thread, sdma *cco.Sdma) {
			switch th.ThreadIdx() {
			case 0:
				for i := 0; i < fill; i++ {
					sdma.Put(1, r.recv[0], 0, r.send[0], 0, 8, 0, cco.SdmaOptFlagsAggregate)
				}
				sdma.Put(1, r.recv[0], 4096, r.send[0], 0, 64, 0) // spins for space, then in the chain
				lastReturned = true
			case 64:
				sdma.WaitSignal(0, 1, 1) // the host's go-ahead, once wave 0 is spinning
				sdma.Commit(1, 0)
			}
		})
		r.s.Spawn("host", func(a *sim.Actor) {
			a.Sleep(10 * sim.Microsecond)
			require.NoError(t, r.mem.Store64(slot, 1))
		})
		h := hang(t, r.s.Run(), cco.RowChainJumped, "reservation at 0x3ffe0")
		assert.Contains(t, h.Text(), "committedWptr is now 0x40000")
		require.Len(t, h.Causes, 1, "the condition is said once: cco's words replace the issuer's generic ones")
		assert.Equal(t, issuer.CauseChainJumped, h.Causes[0].Kind)
		assert.Equal(t, "sdma gpu0→gpu1 q0", h.Causes[0].Queue)
		assert.False(t, lastReturned, "seed %d: the put never returns", seed)
		assert.Equal(t, patterned(int(seed), 8), r.readBytes(r.recv[1], 0, 8), "the batch ran")
		qu, _ := r.node.Queue(0, 1, 0)
		assert.Equal(t, uint64((fill+1)*cco.Unit), qu.Ring().Rptr(), "the engine ran everything the commit rang")
	}
}
