package sdma

import (
	"fmt"

	"github.com/emud-dev/emud/cco"
	"github.com/emud-dev/emud/kernel"
	"github.com/emud-dev/emud/scenario"
	"github.com/emud-dev/emud/sim"
)

// The alltoall-split scenario is an all-to-all in rounds where each rank's
// block to each peer travels in two halves, half h on queue id h, moved by
// its own kernel (one per stream, as a program with two HIP streams would
// launch them). The host launches a rank's two kernels after launch delays
// drawn from the run's seed, since host launches never land at the same
// instant. Every round repeats the exchange, so the receiver keeps running
// totals of the signals it has consumed, one per (srcRank, queueId) as
// ccoSdma requires.
//
// alltoall-shared-expected is a planted bug for "emud explore" to find: the
// same exchange with the running totals kept per source rank only, in one
// array both kernels of the rank share. Each kernel reads seen[p] at the
// top of a round, waits for its own queue's slot to reach seen[p]+1 and
// stores that back. While both kernels start before either finishes a
// round, the values happen to be right; when the seed launches one kernel
// late enough, it reads a count its sibling advanced on the other queue,
// expects one more signal on its own queue than its senders will ever post,
// and hangs. The hang report names the cause ("expected looks shared across
// queues").

const (
	splitRounds = 3
	// maxLaunchSkew bounds the seeded launch delay of each kernel.
	maxLaunchSkew = 100 * sim.Microsecond
	// launchSkewStream is the PRNG stream (sim.Rand) of the launch delays.
	launchSkewStream = 0x5c3e
)

// split is the perf shape of the split all-to-alls: blocks of a multiple
// of 16 bytes, so that each half is a multiple of 8.
var split = &scenario.PerfShape{Type: "uint8", Elem: 1, Redop: "none", Per: scenario.ByRanks, Gran: 16, Bus: scenario.RingBus}

func init() {
	scenario.Register(&scenario.Scenario{
		Name:    "alltoall-split",
		Perf:    split,
		Summary: fmt.Sprintf("all-to-all in %d rounds, each block sent in two halves by two kernels on queue ids 0 and 1, launched with seeded skew", splitRounds),
		Check:   checkSplit,
		Opens:   splitOpens,
		Usage:   splitUsage,
		Run:     func(o scenario.Options) (*scenario.Outcome, error) { return runSplit(o, false) },
	})
	scenario.Register(&scenario.Scenario{
		Name:    "alltoall-shared-expected",
		Perf:    split,
		Summary: "PLANTED BUG: alltoall-split with one expected counter shared across both queue ids; hangs under some seeds",
		Planted: &scenario.Planted{Fixed: "alltoall-split", Ranks: 4, Bytes: 4 << 10, Class: "one expected counter per source shared across queue ids",
			Source: "seed document, waitSignal rules: one running total per (srcRank, queueId)"},
		Check: checkSplit,
		Opens: splitOpens,
		Usage: splitUsage,
		Run:   func(o scenario.Options) (*scenario.Outcome, error) { return runSplit(o, true) },
	})
}

// splitUsage is alltoall's with two kernels per rank on two queue ids.
func splitUsage(o scenario.Options) scenario.Usage {
	u := alltoallUsage(o)
	u.Queues, u.Lanes = 2*u.Queues, 2*u.Lanes
	return u
}

// splitOpens: both kernels of rank r put to every rank, itself included,
// one on queue id 0 and one on queue id 1.
func splitOpens(scenario.Options) func(g, p int) []int {
	return func(int, int) []int { return []int{0, 1} }
}

func checkSplit(o scenario.Options) error {
	if o.Queues < 2 {
		return fmt.Errorf("invalid --queues %d: this scenario sends each block in two halves on queue ids 0 and 1, it needs 2 or more", o.Queues)
	}
	if o.Bytes < 2 {
		return fmt.Errorf("invalid --bytes %d: this scenario sends each block in two halves, it needs at least 2 bytes", o.Bytes)
	}
	return checkAlltoall(o)
}

func runSplit(o scenario.Options, shared bool) (*scenario.Outcome, error) {
	name := "alltoall-split"
	if shared {
		name = "alltoall-shared-expected"
	}
	x, err := newAlltoall(o)
	if err != nil {
		return nil, err
	}
	defer x.Close() // the checks are done when the run returns
	b := o.Bytes
	half := [2]struct{ off, n uint64 }{{0, b / 2}, {b / 2, b - b/2}}
	rng := x.Sim.Rand(launchSkewStream)
	for r := range x.ranks {
		me := x.ranks[r]
		// seen[h][p]: signals from p on queue h this rank has consumed.
		// The planted bug aliases both rows to one.
		var seen [2][]uint64
		seen[0] = make([]uint64, o.Ranks)
		seen[1] = seen[0]
		if !shared {
			seen[1] = make([]uint64, o.Ranks)
		}
		for h := range 2 {
			delay := sim.Time(rng.Int64N(int64(maxLaunchSkew)))
			x.Sim.Spawn(fmt.Sprintf("host%d/stream%d", r, h), func(a *sim.Actor) {
				a.Sleep(delay)
				_, err := x.LaunchNamed(fmt.Sprintf("rank%d/stream%d", r, h), r, 1, o.Ranks, func(t *kernel.Thread, sdma *cco.Sdma) {
					p := (r + 1 + t.ThreadIdx()) % o.Ranks
					for range splitRounds {
						want := seen[h][p] + 1
						sdma.Put(p, me.recvWin, uint64(r)*b+half[h].off, me.sendWin, uint64(p)*b+half[h].off, half[h].n, h, cco.RemoteSignal)
						sdma.QuietQueue(p, h)
						sdma.WaitSignal(p, h, want)
						seen[h][p] = want
					}
					x.Done(r, t)
				})
				if err != nil {
					x.Sim.Fail(err)
				}
			})
		}
	}
	if err := x.Sim.Run(); err != nil {
		return nil, err
	}
	// Every slot on queue ids 0 and 1 counted every round, the others
	// nothing.
	err = x.verify(name, func(r, p, q int) uint64 {
		if q < 2 {
			return splitRounds
		}
		return 0
	})
	if err != nil {
		return nil, err
	}
	per := uint64(o.Ranks) * b * splitRounds
	each := func(int) uint64 { return per }
	return x.Outcome(each, each), nil
}
