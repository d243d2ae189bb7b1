package kernel

import "github.com/emud-dev/emud/race"

// Lanes know what orders two waves' accesses: the race detector's advice
// for a lane's access after another wave's (race.RegisterAdvice).
func init() {
	race.RegisterAdvice(race.OpLane, race.OpLane, func(race.Edge) string {
		return "the two waves have nothing between them: no SyncThreads (same block), no kernel boundary or host wait, no release store and acquire load (or signal and waitSignal) pair"
	})
}
