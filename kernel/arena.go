package kernel

import (
	"github.com/emud-dev/emud/internal/slab"
	"github.com/emud-dev/emud/sim"
)

// launchArena is where the launches of the runs that borrow one
// sim.Scratch (an explore worker's seeds) make their kernels, blocks,
// waves, lanes and lane lists: a 4 KiB all-to-all seed's 8 launches made
// 17 KiB of them, an eighth of its bytes. The first launch of each run
// resets it (arenaOf), so a run takes again what the run before it
// took, zeroed; nothing of a kernel outlives its run (hang and race
// reports copy what they say).
type launchArena struct {
	kernels slab.Arena[Kernel]
	blocks  slab.Arena[block]
	waves   slab.Arena[Wave]
	threads slab.Arena[Thread]
	ptrs    slab.Arena[*Thread]
	// args are the argument scratches (a *[]A each, Call.run) of the
	// ended waves, kept across resets, at most maxKeptArgs: a 4 KiB
	// all-to-all seed's 8 waves made two allocations each for them.
	args []any
}

const maxKeptArgs = 64

// arenaKey keys a Scratch's launch arena.
var arenaKey = sim.NewLocalKey[*launchArena]()

// arenaOf is run s's launch arena: its Scratch's, reset at the run's
// first launch, or nil without a Scratch (each launch makes its own).
func arenaOf(s *sim.Sim) *launchArena {
	return sim.RunScratch(s, arenaKey, (*launchArena).reset)
}

func (a *launchArena) reset() {
	a.kernels.Reset()
	a.blocks.Reset()
	a.waves.Reset()
	a.threads.Reset()
	a.ptrs.Reset()
}
